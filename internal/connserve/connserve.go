package connserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/retry"
)

// ErrClosed is Serve's answer after (or during) Close.
var ErrClosed = errors.New("connserve: server closed")

// DefaultMaxConns is Config.MaxConns when it is zero or negative.
const DefaultMaxConns = 1024

// Waits between transient accept failures: doubling from the first to the
// last, reset by a successful accept.
const (
	firstAcceptWait = 5 * time.Millisecond
	lastAcceptWait  = time.Second
)

// Config configures a Server.
type Config struct {
	// Name starts the server's log lines ("namenode: accept: ...").
	Name string
	// MaxConns bounds the open connections (DefaultMaxConns if 0); one
	// more is closed as soon as it is accepted.
	MaxConns int
	// Logger; nothing is logged if nil.
	Logger logrus.FieldLogger
	// ConnDone, if set, is called with the Handler's error once a
	// connection's handler has returned and the connection is closed and
	// no longer counted by Conns. It runs on the connection's goroutine,
	// with no lock held; Close waits for it.
	ConnDone func(c net.Conn, err error)
}

// Handler serves one connection until it is done, its connection is
// closed or ctx is done (Close cancels it before closing connections).
// It need not close c. Its error goes to Config.ConnDone only.
type Handler func(ctx context.Context, c net.Conn) error

// Server accepts and tracks connections; see the package doc. Its zero
// value is not usable: use New. It is safe for concurrent use.
type Server struct {
	cfg Config
	log logrus.FieldLogger

	ctx    context.Context // every handler's; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // Serve loops and connection goroutines

	// sleep waits between accept failures (retry.Sleep; tests record).
	sleep func(ctx context.Context, d time.Duration) error

	mu struct {
		sync.Mutex
		closed    bool
		listeners map[net.Listener]struct{}
		conns     map[net.Conn]struct{}
		// refusing is set by a refusal at MaxConns and cleared when a
		// connection ends: one warning per burst.
		refusing bool
	}
}

// New returns a Server; it serves nothing until Serve.
func New(cfg Config) *Server {
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	s := &Server{cfg: cfg, log: logs.OrDiscard(cfg.Logger), sleep: retry.Sleep}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.listeners = map[net.Listener]struct{}{}
	s.mu.conns = map[net.Conn]struct{}{}
	return s
}

// Context returns the context every handler gets: done once Close starts.
// Work a server does for its connections outside a Handler's own call
// may use it.
func (s *Server) Context() context.Context { return s.ctx }

// Serve accepts connections on l and serves each with h in a goroutine
// of its own, until Close (then it returns ErrClosed) or an accept error
// that waiting does not cure (returned, wrapped). It closes l when it
// returns; after Close it closes l at once and returns ErrClosed.
func (s *Server) Serve(l net.Listener, h Handler) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	s.mu.listeners[l] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.mu.listeners, l)
		s.mu.Unlock()
		l.Close()
	}()

	bo := retry.NewBackoff(firstAcceptWait, lastAcceptWait)
	for {
		c, err := l.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return ErrClosed
			}
			if !transient(err) {
				return fmt.Errorf("%s: accept: %w", s.cfg.Name, err)
			}
			wait := bo.NextBackOff()
			s.log.WithError(err).Warnf("%s: accept failed; retrying in %v", s.cfg.Name, wait)
			if s.sleep(s.ctx, wait) != nil {
				return ErrClosed
			}
			continue
		}
		bo.Reset()
		s.start(c, h)
	}
}

// transient reports accept errors that pass: timeouts, and running out of
// descriptors or kernel memory for a while.
func transient(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// start serves c with h in a new goroutine, or closes c when the server
// is closed or full.
func (s *Server) start(c net.Conn, h Handler) {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	if n := len(s.mu.conns); n >= s.cfg.MaxConns {
		first := !s.mu.refusing
		s.mu.refusing = true
		s.mu.Unlock()
		c.Close()
		log := s.log.WithField("remote", c.RemoteAddr().String())
		if first {
			log.Warnf("%s: %d connections open, the most; closing new ones until one ends", s.cfg.Name, n)
		} else {
			log.Debugf("%s: %d connections open, the most; closed a new one", s.cfg.Name, n)
		}
		return
	}
	s.mu.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		err := h(s.ctx, c)
		c.Close()
		s.mu.Lock()
		delete(s.mu.conns, c)
		s.mu.refusing = false
		s.mu.Unlock()
		if s.cfg.ConnDone != nil {
			s.cfg.ConnDone(c, err)
		}
	}()
}

// Close cancels the handlers' context, closes every listener and
// connection, and waits for every Serve loop and connection goroutine to
// end. It may be called more than once, and concurrently.
func (s *Server) Close() {
	s.mu.Lock()
	s.mu.closed = true
	s.cancel()
	for l := range s.mu.listeners {
		l.Close()
	}
	for c := range s.mu.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Conns returns the number of open connections: accepted, and whose
// handler has not yet returned.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.conns)
}
