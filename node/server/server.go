package server

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/node"
)

// Defaults for Options.
const (
	DefaultMaxConnections  = 1024
	DefaultMaxReadsPerConn = 64
	DefaultAckQueue        = 1024
)

// maxOpsPerConn bounds the requests of one connection, other than reads
// and appends, that wait for the disk at once (creates, seals, setups...).
// At the bound the connection's reader waits.
const maxOpsPerConn = 256

// closeWriteTimeout bounds how long a closing connection tries to deliver
// its last replies to a client that does not read them.
const closeWriteTimeout = 5 * time.Second

// Options configures a Server. Zero values take the defaults.
type Options struct {
	// Logger receives connection events (debug) and failures (warn,
	// error). logrus.StandardLogger() if nil.
	Logger logrus.FieldLogger
	// MaxConnections bounds the open connections; at the bound the server
	// stops accepting until one closes.
	MaxConnections int
	// MaxReadsPerConn bounds the reads of one connection in progress at
	// once (parked tail reads included).
	MaxReadsPerConn int
	// AckQueue is the length of a connection's ack FIFO: how many appends
	// may wait for their fsync before the connection stops reading.
	AckQueue int
}

// Server serves one node over TCP.
type Server struct {
	node *node.Node
	opts Options
	log  logrus.FieldLogger

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	slots  chan struct{} // one token per open connection
	wg     sync.WaitGroup

	mu struct {
		sync.Mutex
		closed    bool
		listeners map[net.Listener]struct{}
		conns     map[*conn]struct{}
		addr      net.Addr
	}
}

// New returns a server for n. It serves nothing until Serve.
func New(n *node.Node, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = logrus.StandardLogger()
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	if opts.MaxReadsPerConn <= 0 {
		opts.MaxReadsPerConn = DefaultMaxReadsPerConn
	}
	if opts.AckQueue <= 0 {
		opts.AckQueue = DefaultAckQueue
	}
	s := &Server{node: n, opts: opts, log: opts.Logger.WithField("component", "server"),
		slots: make(chan struct{}, opts.MaxConnections)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.listeners = map[net.Listener]struct{}{}
	s.mu.conns = map[*conn]struct{}{}
	return s
}

// Serve accepts connections on l until Close, and then returns nil; it
// returns the listener's error if accepting fails otherwise. It may be
// called for several listeners; each call blocks. Serve closes l when it
// returns.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		l.Close()
		return nil
	}
	s.mu.listeners[l] = struct{}{}
	if s.mu.addr == nil {
		s.mu.addr = l.Addr()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.mu.listeners, l)
		s.mu.Unlock()
		l.Close()
	}()

	var backoff time.Duration
	for {
		select {
		case s.slots <- struct{}{}:
		case <-s.ctx.Done():
			return nil
		}
		nc, err := l.Accept()
		if err != nil {
			<-s.slots
			if s.closing() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of file descriptors and the like: wait and retry,
				// as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.WithError(err).Warnf("server: accept failed; retrying in %v", backoff)
				t := time.NewTimer(backoff)
				select {
				case <-t.C:
				case <-s.ctx.Done():
					t.Stop()
					return nil
				}
				continue
			}
			return err
		}
		backoff = 0
		c := newConn(s, nc)
		if !s.track(c) {
			nc.Close()
			<-s.slots
			return nil
		}
		go func() {
			defer s.wg.Done()
			defer func() { <-s.slots }()
			defer s.untrack(c)
			c.serve()
		}()
	}
}

// isTemporary reports accept errors worth retrying (EMFILE, ENFILE,
// ECONNABORTED...), which still implement the deprecated Temporary.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func (s *Server) closing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.closed
}

// track registers a connection and counts its goroutine, unless the server
// is closed.
func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return false
	}
	s.mu.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.mu.conns, c)
	s.mu.Unlock()
}

// Addr returns the address of the first listener Serve was given, or nil
// before that.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.addr
}

// Close stops accepting, closes every connection (parked reads end,
// appends already queued complete on the node but their acks may be lost)
// and waits for every goroutine the server started. Serve returns nil.
// The node stays open: its owner closes it after the server.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.mu.closed = true
	var errs []error
	for l := range s.mu.listeners {
		if err := l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	// Sockets first, so that nothing more is written to them; then the
	// contexts, which wake parked reads and blocked senders.
	for c := range s.mu.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return errors.Join(errs...)
}
