package nfsexport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	nfs "github.com/willscott/go-nfs"

	"github.com/sluice-streams/sluice/internal/connserve"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/tier2/view"
)

// DefaultListen is the NFS head's address: NFSv3 and MOUNT on one port.
const DefaultListen = "127.0.0.1:12049"

var (
	// ErrClosed is Serve's answer after Close.
	ErrClosed = errors.New("nfsexport: server closed")
	// ErrReadOnly is what every write-type call meets.
	ErrReadOnly = errors.New("nfsexport: read-only file system")
	// ErrBadHandle is a file handle that is not one of ours.
	ErrBadHandle = errors.New("nfsexport: bad file handle")
	// ErrBadCall is an RPC record the gate refuses: the connection is
	// closed.
	ErrBadCall = errors.New("nfsexport: bad RPC call")
)

// Config configures a Server.
type Config struct {
	// Logger; nothing is logged if nil.
	Logger logrus.FieldLogger
	// MaxConns bounds the open connections (connserve.DefaultMaxConns if
	// 0).
	MaxConns int
	// IdleTimeout closes a connection that sends no call for this long
	// (DefaultIdleTimeout if 0; negative: never).
	IdleTimeout time.Duration
	// WriteTimeout closes a connection that takes longer than this to
	// accept one reply (DefaultWriteTimeout if 0; negative: never): a
	// client that asks and does not read holds its replies' memory.
	WriteTimeout time.Duration
}

// DefaultWriteTimeout is Config.WriteTimeout when it is zero.
const DefaultWriteTimeout = time.Minute

// DefaultIdleTimeout is Config.IdleTimeout when it is zero. Kernel clients
// reconnect transparently; libnfs tools are done in far less.
const DefaultIdleTimeout = 10 * time.Minute

// Server serves a view over NFSv3 and MOUNT v3 on one port. Create it with
// New; it is safe for concurrent use.
type Server struct {
	cfg Config
	log logrus.FieldLogger
	v   *view.View
	h   *handler
	cs  *connserve.Server

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	inner     *pipeListener // go-nfs's end of every connection
	innerOnce sync.Once
	innerDone chan struct{} // closed when go-nfs's accept loop returns
	closeOnce sync.Once
}

// New returns a Server over v; it serves nothing until Serve.
func New(v *view.View, cfg Config) *Server {
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	quietNFS()
	s := &Server{cfg: cfg, log: logs.OrDiscard(cfg.Logger), v: v, innerDone: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.h = newHandler(s.ctx, v)
	s.inner = newPipeListener()
	s.cs = connserve.New(connserve.Config{
		Name: "nfs head", MaxConns: cfg.MaxConns, Logger: cfg.Logger,
		ConnDone: func(c net.Conn, err error) {
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && s.ctx.Err() == nil {
				s.log.WithField("remote", c.RemoteAddr().String()).WithError(err).Debug("nfs head: connection closed")
			}
		},
	})
	return s
}

// Serve accepts NFS and MOUNT connections on l until Close (then it returns
// ErrClosed) or an accept error that waiting does not cure. It closes l.
func (s *Server) Serve(l net.Listener) error {
	s.innerOnce.Do(func() {
		// go-nfs serves the inner end of each connection (pipeConn);
		// serveConn returns only once go-nfs has closed it.
		srv := &nfs.Server{Handler: s.h, Context: s.ctx}
		go func() {
			defer close(s.innerDone)
			_ = srv.Serve(s.inner)
		}()
	})
	err := s.cs.Serve(l, s.serveConn)
	if errors.Is(err, connserve.ErrClosed) {
		return ErrClosed
	}
	return err
}

// Close closes the listeners and every connection, and waits for the
// connections' goroutines and for every call into the view to end. It may
// be called more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.cs.Close()
		s.inner.Close()
		s.innerOnce.Do(func() { close(s.innerDone) })
		<-s.innerDone
		s.h.ops.close()
	})
	return nil
}

// serveConn runs the gate on one client connection: calls go to go-nfs
// through a pipe, or are answered here; go-nfs's replies are copied back
// whole, between the gate's own.
func (s *Server) serveConn(ctx context.Context, c net.Conn) error {
	callsR, callsW := io.Pipe()
	repliesR, repliesW := io.Pipe()
	inner := &pipeConn{calls: callsR, replies: repliesW, remote: c.RemoteAddr()}
	if err := s.inner.hand(ctx, inner); err != nil {
		inner.Close()
		return err
	}
	// go-nfs closes inner when it reads EOF; should it ever stop without
	// (a call it cannot decode after all), Close still ends the
	// connection: closing inner fails the gate's writes and ends the
	// replies.
	stop := context.AfterFunc(ctx, func() { inner.Close() })
	defer stop()
	var wmu sync.Mutex // one record at a time on c
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		copyReplies(c, repliesR, &wmu, s.cfg.WriteTimeout)
	}()
	err := s.gate(c, callsW, &wmu)
	callsW.Close() // go-nfs reads EOF, closes inner, and copyReplies ends
	c.Close()
	<-copied
	return err
}

// gate reads calls from c until it fails or closes.
func (s *Server) gate(c net.Conn, inner io.Writer, wmu *sync.Mutex) error {
	var mark [4]byte
	buf := make([]byte, 0, 4096)
	for {
		if s.cfg.IdleTimeout > 0 {
			c.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		}
		if _, err := io.ReadFull(c, mark[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("nfsexport: read a record mark: %w", err)
		}
		m := binary.BigEndian.Uint32(mark[:])
		if m&(1<<31) == 0 {
			return fmt.Errorf("%w: a record in fragments", ErrBadCall)
		}
		n := int(m &^ (1 << 31))
		head := min(n, maxForward)
		if cap(buf) < head {
			buf = make([]byte, head, maxForward)
		}
		buf = buf[:head]
		if _, err := io.ReadFull(c, buf); err != nil {
			return fmt.Errorf("nfsexport: read a %d-byte call: %w", n, err)
		}
		v, answer, err := judge(buf, n == head)
		if err != nil {
			return err
		}
		if n > head { // a write-type call's data: not read into memory
			if _, err := io.CopyN(io.Discard, c, int64(n-head)); err != nil {
				return fmt.Errorf("nfsexport: read a %d-byte call: %w", n, err)
			}
		}
		if v == forward && n == head {
			if a, marked := s.answerHere(buf); marked {
				err := writeMarked(c, a, wmu, s.cfg.WriteTimeout)
				putReadBuf(a)
				if err != nil {
					return fmt.Errorf("nfsexport: answer a READ: %w", err)
				}
				continue
			} else if a != nil {
				v, answer = reply, a
			}
		}
		switch {
		case v == forward:
			if err := writeRecord(inner, buf, nil, 0); err != nil {
				return fmt.Errorf("nfsexport: pass a call on: %w", err)
			}
		default:
			if answer == nil { // MOUNT EXPORT
				answer = exportReply(binary.BigEndian.Uint32(buf), s.exports())
			}
			if err := writeRecord(c, answer, wmu, s.cfg.WriteTimeout); err != nil {
				return fmt.Errorf("nfsexport: answer a call: %w", err)
			}
		}
	}
}

// answerHere returns the gate's own answer to a call judge forwards, or
// nil to let go-nfs answer: READ (readReply; its record comes with its
// mark, in a buffer of readBufs to put back, and marked is true), FSINFO
// (fsinfoReply), and FSSTAT and PATHCONF of a stale handle (staleAnswer).
// Each looks the handle up once; a stale one is answered here, so go-nfs
// looks up only handles found good (remembered, then: no second walk).
func (s *Server) answerHere(rec []byte) (answer []byte, marked bool) {
	c, err := parseCall(rec)
	if err != nil || c.prog != progNFS {
		return nil, false
	}
	switch c.proc {
	case procRead:
		b := getReadBuf()
		if r := s.readReply(rec, c, b); r != nil {
			return r, true
		}
		putReadBuf(b)
	case procFsinfo:
		return s.fsinfoReply(rec, c), false
	case procFsstat, procPathconf:
		return s.staleAnswer(rec, c), false
	}
	return nil, false
}

// staleAnswer answers FSSTAT, FSINFO and PATHCONF of a handle that is
// stale here: go-nfs's own answer to them lacks the post_op_attr that
// RFC 1813 puts after a failure's status, which libnfs refuses to decode.
func (s *Server) staleAnswer(rec []byte, c call) []byte {
	fh, ok := handleArg(rec[c.argsAt:])
	if !ok {
		return nil
	}
	if _, _, err := s.h.FromHandle(fh); err == nil {
		return nil
	}
	return accepted(c.xid, 0, make([]byte, 8), nfs3errStale)
}

// exports lists "/" and "/<scope>" of every scope the view has now.
func (s *Server) exports() []string {
	out := []string{"/"}
	if s.h.ops.enter() != nil {
		return out
	}
	defer s.h.ops.exit()
	es, err := s.v.List(s.ctx, "")
	if err != nil {
		s.log.WithError(err).Warn("nfs head: export list without the scopes")
		return out
	}
	for _, e := range es {
		if len(out) == 1+maxExportScopes {
			break
		}
		out = append(out, "/"+e.Name)
	}
	return out
}

// maxExportScopes bounds the scopes EXPORT lists (every scope is mountable).
const maxExportScopes = 1000

// writeRecord writes rec as one last fragment, holding mu if given.
func writeRecord(w io.Writer, rec []byte, mu *sync.Mutex, timeout time.Duration) error {
	out := make([]byte, 4+len(rec))
	binary.BigEndian.PutUint32(out, uint32(len(rec))|1<<31)
	copy(out[4:], rec)
	if mu != nil {
		mu.Lock()
		defer mu.Unlock()
	}
	if c, ok := w.(net.Conn); ok {
		setWriteDeadline(c, timeout)
	}
	_, err := w.Write(out)
	return err
}

// writeMarked writes a record that already starts with its mark, holding
// mu.
func writeMarked(c net.Conn, rec []byte, mu *sync.Mutex, timeout time.Duration) error {
	mu.Lock()
	defer mu.Unlock()
	setWriteDeadline(c, timeout)
	_, err := c.Write(rec)
	return err
}

// setWriteDeadline bounds the next write on c, if timeout is positive.
func setWriteDeadline(c net.Conn, timeout time.Duration) {
	if timeout > 0 {
		c.SetWriteDeadline(time.Now().Add(timeout))
	}
}

// copyReplies copies go-nfs's replies from r to c a whole record at a
// time, holding mu for each, until r ends; once c fails it discards them.
// A record up to maxReplyBuf goes out in one write (a READ's reply is
// about maxReadSize); a longer one is streamed. A record that takes longer
// than timeout (if positive) to write closes c.
func copyReplies(c net.Conn, r io.Reader, mu *sync.Mutex, timeout time.Duration) {
	var rc replyCopier
	rc.copy(c, r, mu, timeout)
}

// maxReplyBuf bounds the records copyReplies writes in one write.
const maxReplyBuf = maxReadSize + 4096

// replyCopier is copyReplies's state: the buffer a connection keeps
// between replies, at most keepReplyBuf. A longer record (a READDIRPLUS of
// a big segment, a READ go-nfs answers) borrows a buffer of readBufs for
// its write, so an idle connection holds no more than keepReplyBuf.
type replyCopier struct {
	buf []byte
}

// keepReplyBuf bounds the buffer a connection keeps between replies.
const keepReplyBuf = 64 << 10

func (rc *replyCopier) copy(c net.Conn, r io.Reader, mu *sync.Mutex, timeout time.Duration) {
	for {
		var mark [4]byte
		if _, err := io.ReadFull(r, mark[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(mark[:]) &^ (1 << 31))
		var err error
		if n <= maxReplyBuf {
			buf, borrowed := rc.buf, 4+n > keepReplyBuf
			if borrowed {
				buf = getReadBuf()
			}
			if cap(buf) < 4+n {
				buf = make([]byte, 4+n)
			}
			buf = buf[:4+n]
			copy(buf, mark[:])
			if _, rerr := io.ReadFull(r, buf[4:]); rerr != nil {
				return
			}
			mu.Lock()
			setWriteDeadline(c, timeout)
			_, err = c.Write(buf)
			mu.Unlock()
			if borrowed {
				putReadBuf(buf)
			} else {
				rc.buf = buf
			}
		} else {
			mu.Lock()
			setWriteDeadline(c, timeout)
			_, err = c.Write(mark[:])
			if err == nil {
				_, err = io.CopyN(c, r, int64(n))
			}
			mu.Unlock()
		}
		if err != nil {
			c.Close() // the gate's read fails: the connection ends
			io.Copy(io.Discard, r)
			return
		}
	}
}

// pipeListener hands go-nfs the inner ends of the connections.
type pipeListener struct {
	conns  chan net.Conn
	done   chan struct{}
	closed sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) hand(ctx context.Context, c net.Conn) error {
	select {
	case l.conns <- c:
		return nil
	case <-l.done:
		return ErrClosed
	case <-ctx.Done():
		return ErrClosed
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closed.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "nfsexport" }

// pipeConn is go-nfs's end of a connection: calls come from one pipe,
// replies go to another, so that the gate can end the calls (go-nfs reads
// EOF) and still drain the replies until go-nfs closes its end.
type pipeConn struct {
	calls   *io.PipeReader
	replies *io.PipeWriter
	remote  net.Addr
}

func (p *pipeConn) Read(b []byte) (int, error)  { return p.calls.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error) { return p.replies.Write(b) }

func (p *pipeConn) Close() error {
	p.calls.Close()
	p.replies.Close()
	return nil
}

func (p *pipeConn) LocalAddr() net.Addr              { return pipeAddr{} }
func (p *pipeConn) RemoteAddr() net.Addr             { return p.remote }
func (p *pipeConn) SetDeadline(time.Time) error      { return nil }
func (p *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (p *pipeConn) SetWriteDeadline(time.Time) error { return nil }
