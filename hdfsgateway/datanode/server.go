package datanode

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	"github.com/sluice-streams/sluice/internal/connserve"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/tier2/view"
)

// Errors; classify with errors.Is.
var (
	// ErrClosed: Serve after Close, or Serve's return once Close is called.
	ErrClosed = errors.New("datanode: server closed")
	// ErrVersion: a request of another data transfer version than Version.
	ErrVersion = errors.New("datanode: data transfer version mismatch")
	// ErrUnknownOp: an op code this server does not know.
	ErrUnknownOp = errors.New("datanode: unknown op")
	// ErrMalformed: a request or status that does not decode.
	ErrMalformed = errors.New("datanode: malformed request")
	// ErrTooLarge: a request message longer than MaxRequestSize.
	ErrTooLarge = errors.New("datanode: request too large")
	// ErrBadBlock: a block the view does not have, or a range outside it.
	ErrBadBlock = errors.New("datanode: bad block")
)

// Defaults of Config.
const (
	DefaultMaxConns = 1024
	// DefaultHandshakeTimeout is HDFS's socket timeout
	// (dfs.client.socket-timeout): the longest wait for a client's op or
	// read status.
	DefaultHandshakeTimeout = 60 * time.Second
	// DefaultIdleTimeout is HDFS's keep-alive between ops on one
	// connection (dfs.datanode.socket.reuse.keepalive); clients keep idle
	// connections for less (dfs.client.socketcache.expiryMsec, 3 s).
	DefaultIdleTimeout = 4 * time.Second
	// DefaultWriteTimeout bounds the write of one packet to a client
	// (HDFS's dfs.datanode.socket.write.timeout is 8 minutes; a client
	// that takes a minute to accept 64 KiB is gone).
	DefaultWriteTimeout = 60 * time.Second
	// DefaultPacketSize is the data of one packet. HDFS's DataNode sends
	// 64 KiB; Hadoop's client spends about a quarter less CPU per byte
	// on 256 KiB packets (docs/BENCHMARKS.md, "HDFS head"), and a
	// connection holds a packet buffer only while it sends a block.
	DefaultPacketSize = 256 << 10
	// MaxPacketSize bounds Config.PacketSize (HDFS clients refuse
	// packets over 16 MiB).
	MaxPacketSize = 4 << 20
)

// Config configures a Server. Zero values take the defaults.
type Config struct {
	// BlockSize splits files into blocks (blocks.DefaultSize if 0). It
	// must be the NameNode's: blocks are found by index.
	BlockSize int64
	// Logger gets one entry per failed connection (nil: silent).
	Logger logrus.FieldLogger
	// MaxConns bounds open connections; one more is closed at once.
	MaxConns int
	// HandshakeTimeout bounds the wait for a new connection's first op
	// and for a client's read status.
	HandshakeTimeout time.Duration
	// IdleTimeout bounds the wait for the next op on a kept-alive
	// connection.
	IdleTimeout time.Duration
	// WriteTimeout bounds the write of one packet or response.
	WriteTimeout time.Duration
	// PacketSize is the data bytes of one packet, rounded down to a
	// multiple of blocks.BytesPerChecksum (at least one, at most
	// MaxPacketSize).
	PacketSize int
}

func (c Config) withDefaults() Config {
	if c.BlockSize <= 0 {
		c.BlockSize = blocks.DefaultSize
	}
	c.Logger = logs.OrDiscard(c.Logger)
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.PacketSize <= 0 {
		c.PacketSize = DefaultPacketSize
	}
	c.PacketSize = min(c.PacketSize, MaxPacketSize)
	c.PacketSize = max(c.PacketSize-c.PacketSize%blocks.BytesPerChecksum, blocks.BytesPerChecksum)
	return c
}

// Server serves blocks of a view over HDFS's data transfer protocol. It
// is safe for concurrent use.
type Server struct {
	v   *view.View
	cfg Config
	log logrus.FieldLogger

	// srv owns the accept loops, the connections and their goroutines.
	srv *connserve.Server
	// ctx is srv's, done once Close starts: view calls of open
	// connections stop.
	ctx context.Context

	// packets holds packet buffers (*[]byte, packetBufSize bytes) between
	// reads, so idle connections hold none.
	packets sync.Pool

	// connDone, if set (by tests, before Serve), is called as each
	// connection's goroutine ends, after the connection is closed and
	// no longer counted.
	connDone func()
}

// New returns a Server of v's files.
func New(v *view.View, cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{v: v, cfg: cfg, log: cfg.Logger}
	s.packets.New = func() any {
		b := make([]byte, packetBufSize(cfg.PacketSize))
		return &b
	}
	s.srv = connserve.New(connserve.Config{Name: "datanode", MaxConns: cfg.MaxConns, Logger: cfg.Logger,
		ConnDone: func(net.Conn, error) {
			if s.connDone != nil {
				s.connDone()
			}
		}})
	s.ctx = s.srv.Context()
	return s
}

// Serve accepts connections on l until Close, serving each in its own
// goroutine; it returns ErrClosed after Close, or l's error. l is closed
// when Serve returns.
func (s *Server) Serve(l net.Listener) error {
	err := s.srv.Serve(l, func(_ context.Context, c net.Conn) error {
		s.serveConn(c)
		return nil
	})
	if errors.Is(err, connserve.ErrClosed) {
		return ErrClosed
	}
	return err
}

// Close stops every Serve loop, closes every connection and waits for
// their goroutines. It is safe to call more than once.
func (s *Server) Close() error {
	s.srv.Close()
	return nil
}

// Conns returns the number of open connections.
func (s *Server) Conns() int { return s.srv.Conns() }

// serveConn serves ops on c until the client closes it, an op fails, or
// the server closes.
func (s *Server) serveConn(c net.Conn) {
	cn := &conn{
		c:   c,
		r:   bufio.NewReaderSize(c, 4096),
		s:   s,
		log: s.log.WithField("remote", c.RemoteAddr().String()),
	}
	idle := false // between ops on a kept-alive connection
	for {
		wait := s.cfg.HandshakeTimeout
		if idle {
			wait = s.cfg.IdleTimeout
		}
		c.SetReadDeadline(time.Now().Add(wait))
		req, err := readRequest(cn.r)
		if errors.Is(err, io.EOF) || idle && errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, net.ErrClosed) {
			return // the client is done with the connection, or the server
		}
		if err != nil {
			cn.fail(req.op, err)
			return
		}
		c.SetReadDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
		if keep := cn.serve(req); !keep {
			return
		}
		idle = true
	}
}
