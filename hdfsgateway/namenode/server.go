package namenode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	common "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
	"github.com/sluice-streams/sluice/internal/connserve"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/tier2/view"
)

// Errors of the server; classify with errors.Is.
var (
	// ErrClosed: Serve after (or during) Close.
	ErrClosed = errors.New("namenode: server closed")
	// ErrProtocol: a client sent bytes that are not Hadoop IPC as this
	// server speaks it; its connection is closed.
	ErrProtocol = errors.New("namenode: protocol error")
)

// Defaults of Config's limits.
const (
	// DefaultMaxFrame bounds a request frame. Hadoop's own bound
	// (ipc.maximum.data.length) is 64 MiB, but no read-only call carries
	// data: the biggest real request is a path list.
	DefaultMaxFrame = 16 << 20
	// DefaultMaxConns bounds the open client connections.
	DefaultMaxConns = 1024
	// DefaultIdleTimeout closes a connection that sends nothing (not even
	// the ping Hadoop's client sends every minute while it waits).
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultHandshakeTimeout bounds the preamble and connection context.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds writing one response.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxCallsPerConn bounds the calls of one connection answered
	// at once.
	DefaultMaxCallsPerConn = 16
	// DefaultListingLimit is the number of entries per getListing page
	// (HDFS's dfs.ls.limit).
	DefaultListingLimit = 1000
)

// Config configures a Server.
type Config struct {
	// DataAddr returns the "host:port" of the data-transfer server that
	// block locations point at (the same head's DataNode side). It is
	// called for every answer with locations, so it may follow a server
	// that starts after this one. Required.
	DataAddr func() string
	// BlockSize is the files' block size (blocks.DefaultSize if 0); the
	// data-transfer server must use the same.
	BlockSize int64
	// Logger; nothing is logged if nil.
	Logger logrus.FieldLogger
	// MaxFrame bounds a request frame in bytes (DefaultMaxFrame if 0).
	MaxFrame int
	// MaxConns bounds the open connections (DefaultMaxConns if 0); a
	// connection beyond it is closed at once.
	MaxConns int
	// MaxCallsPerConn bounds the calls of one connection answered at
	// once (DefaultMaxCallsPerConn if 0); the connection's next frame is
	// read when one ends. Answers go out as calls end, in any order:
	// Hadoop's client matches them by call id. 1 answers in order.
	MaxCallsPerConn int
	// IdleTimeout closes a silent connection (DefaultIdleTimeout if 0).
	IdleTimeout time.Duration
	// HandshakeTimeout bounds a new connection's preamble and context
	// (DefaultHandshakeTimeout if 0).
	HandshakeTimeout time.Duration
	// WriteTimeout bounds writing one response (DefaultWriteTimeout if 0).
	WriteTimeout time.Duration
	// ListingLimit is the entries per getListing page
	// (DefaultListingLimit if 0).
	ListingLimit int
}

func (c Config) withDefaults() Config {
	if c.BlockSize <= 0 {
		c.BlockSize = blocks.DefaultSize
	}
	c.Logger = logs.OrDiscard(c.Logger)
	if c.MaxFrame <= 0 {
		c.MaxFrame = DefaultMaxFrame
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxCallsPerConn <= 0 {
		c.MaxCallsPerConn = DefaultMaxCallsPerConn
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ListingLimit <= 0 {
		c.ListingLimit = DefaultListingLimit
	}
	return c
}

// Server is the NameNode side of the HDFS head: it serves Hadoop IPC
// (ClientNamenodeProtocol's read calls) over a view.View.
type Server struct {
	v   *view.View
	cfg Config
	log logrus.FieldLogger

	// srv owns the accept loops, the connections and their goroutines.
	srv *connserve.Server

	// connClosed, set by tests before Serve, hears why each connection
	// ended, once it is closed and no longer counted.
	connClosed func(error)
}

// New returns a Server of v; it serves once Serve is called.
func New(v *view.View, cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{v: v, cfg: cfg, log: cfg.Logger}
	s.srv = connserve.New(connserve.Config{Name: "namenode", MaxConns: cfg.MaxConns, Logger: cfg.Logger,
		ConnDone: func(_ net.Conn, err error) {
			if s.connClosed != nil {
				s.connClosed(err)
			}
		}})
	return s
}

// Serve accepts connections on l until Close, serving each in a goroutine
// of its own, and returns ErrClosed after Close or the listener's error.
// l is closed when Serve returns.
func (s *Server) Serve(l net.Listener) error {
	err := s.srv.Serve(l, s.serveConn)
	if errors.Is(err, connserve.ErrClosed) {
		return ErrClosed
	}
	return err
}

// Close stops the server: it closes every listener and connection, stops
// the calls in flight and waits for every goroutine. It may be called more
// than once.
func (s *Server) Close() error {
	s.srv.Close()
	return nil
}

// conn is one client connection: a goroutine reading frames (serve) and
// one goroutine per call in flight, which answers it.
type conn struct {
	s    *Server
	ctx  context.Context // the server's: done once Close starts
	nc   net.Conn
	r    *bufio.Reader
	log  logrus.FieldLogger
	user string

	calls sync.WaitGroup // the call goroutines; serveConn waits for them
	slots chan struct{}  // one per call in flight (MaxCallsPerConn)

	// w serialises answers: one frame at a time on the connection.
	w struct {
		sync.Mutex
		out bytes.Buffer
	}
}

// serveConn serves nc until the client leaves, sends garbage, or the
// server closes (ctx is done); it returns why the connection ends, once
// the calls it started have answered. The caller closes nc.
func (s *Server) serveConn(ctx context.Context, nc net.Conn) error {
	c := &conn{s: s, ctx: ctx, nc: nc, r: bufio.NewReader(nc), log: s.log.WithField("remote", nc.RemoteAddr().String()),
		slots: make(chan struct{}, s.cfg.MaxCallsPerConn)}
	err := c.serve()
	c.calls.Wait() // calls in flight answer, or fail to (their context ends with the server)
	if err != nil && ctx.Err() == nil {
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			c.log.Debugf("namenode: connection closed: %v", err)
		} else {
			c.log.Warnf("namenode: closing connection: %v", err)
		}
	}
	return err
}

func (c *conn) serve() error {
	s := c.s
	c.nc.SetReadDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	var pb [preambleLen]byte
	if _, err := io.ReadFull(c.r, pb[:]); err != nil {
		return fmt.Errorf("namenode: reading the connection preamble: %w", err)
	}
	p, err := parsePreamble(pb[:])
	if err != nil {
		return err
	}
	switch {
	case p.version != ipcVersion:
		return c.fatal(common.RpcResponseHeaderProto_FATAL_VERSION_MISMATCH, "org.apache.hadoop.ipc.RPC$VersionMismatch",
			fmt.Sprintf("sluice's HDFS head speaks IPC version %d; the client sent version %d", ipcVersion, p.version))
	case p.auth == authSASL:
		return c.fatal(common.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, "org.apache.hadoop.security.AccessControlException",
			"SASL authentication (Kerberos, tokens) is not supported by sluice's HDFS head: use SIMPLE authentication (hadoop.security.authentication=simple)")
	case p.auth != authNone:
		return c.fatal(common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, "org.apache.hadoop.ipc.IpcException",
			fmt.Sprintf("unknown authentication protocol %d", int8(p.auth)))
	}
	buf, err := readFrame(c.r, s.cfg.MaxFrame, nil)
	if err != nil {
		return fmt.Errorf("namenode: reading the connection context: %w", err)
	}
	req, err := parseRequest(buf)
	if err != nil {
		return err
	}
	if req.context == nil {
		return c.fatal(common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, "org.apache.hadoop.ipc.IpcException",
			fmt.Sprintf("call %d before the connection context", req.callID()))
	}
	c.user = req.context.GetUserInfo().GetEffectiveUser()
	if p := req.context.GetProtocol(); p != "" && p != clientProtocol {
		return c.fatal(common.RpcResponseHeaderProto_FATAL_UNKNOWN, "org.apache.hadoop.ipc.RpcNoSuchProtocolException",
			fmt.Sprintf("unknown protocol %s: sluice's HDFS head serves %s", p, clientProtocol))
	}
	c.log = c.log.WithField("user", c.user)
	for {
		c.nc.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		// A fresh buffer per frame: a call's request aliases it while
		// the next frame is read.
		if buf, err = readFrame(c.r, s.cfg.MaxFrame, nil); err != nil {
			if errors.Is(err, ErrProtocol) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return c.fatalErr(err)
			}
			return err // the client left, perhaps mid-frame: nobody to tell
		}
		req, err := parseRequest(buf)
		if err != nil {
			return c.fatalErr(err)
		}
		switch {
		case req.callID() == callIDPing:
			continue
		case req.method == nil:
			return c.fatal(common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, "org.apache.hadoop.ipc.IpcException",
				fmt.Sprintf("unexpected call id %d", req.callID()))
		}
		c.slots <- struct{}{}
		c.calls.Add(1)
		go func() {
			defer func() {
				<-c.slots
				c.calls.Done()
			}()
			body, cerr := c.s.call(c.ctx, c.user, req)
			if err := c.respond(req, body, cerr); err != nil {
				c.log.Debugf("namenode: answering call %d: %v", req.callID(), err)
				c.nc.Close() // the reading loop ends at its next read
			}
		}()
	}
}

// respond writes the answer to req: body, or the error cerr.
func (c *conn) respond(req *request, body proto.Message, cerr *callError) error {
	hdr := &common.RpcResponseHeaderProto{
		CallId:              proto.Uint32(wireCallID(req.callID())),
		Status:              common.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(ipcVersion),
		ClientId:            req.rpc.GetClientId(),
		RetryCount:          proto.Int32(req.rpc.GetRetryCount()),
	}
	if cerr != nil {
		body = nil
		hdr.Status = common.RpcResponseHeaderProto_ERROR.Enum()
		hdr.ExceptionClassName = proto.String(cerr.class)
		hdr.ErrorMsg = proto.String(cerr.msg)
		hdr.ErrorDetail = cerr.code.Enum()
	}
	return c.write(hdr, body)
}

// fatal sends a FATAL answer that belongs to no call and returns the error
// that closes the connection.
func (c *conn) fatal(code common.RpcResponseHeaderProto_RpcErrorCodeProto, class, msg string) error {
	hdr := &common.RpcResponseHeaderProto{
		CallId:              proto.Uint32(wireCallID(callIDInvalid)),
		Status:              common.RpcResponseHeaderProto_FATAL.Enum(),
		ServerIpcVersionNum: proto.Uint32(ipcVersion),
		ExceptionClassName:  proto.String(class),
		ErrorMsg:            proto.String(msg),
		ErrorDetail:         code.Enum(),
	}
	if err := c.write(hdr, nil); err != nil {
		return err
	}
	return fmt.Errorf("%w: %s", ErrProtocol, msg)
}

// fatalErr answers a malformed frame with FATAL and returns err.
func (c *conn) fatalErr(err error) error {
	msg := strings.TrimPrefix(err.Error(), ErrProtocol.Error()+": ")
	if werr := c.fatal(common.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, "org.apache.hadoop.ipc.IpcException", msg); !errors.Is(werr, ErrProtocol) {
		return werr
	}
	return err
}

// write sends one answer; it is safe for concurrent use.
func (c *conn) write(hdr *common.RpcResponseHeaderProto, body proto.Message) error {
	c.w.Lock()
	defer c.w.Unlock()
	c.w.out.Reset()
	if err := writeResponse(&c.w.out, hdr, body); err != nil {
		return err
	}
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	_, err := c.nc.Write(c.w.out.Bytes())
	if c.w.out.Cap() > 1<<20 {
		c.w.out = bytes.Buffer{} // do not keep a big listing's buffer
	}
	return err
}
