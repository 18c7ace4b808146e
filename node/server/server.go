package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sync/semaphore"

	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/protocol"
)

// Defaults for Options.
const (
	DefaultMaxConnections   = 1024
	DefaultMaxConnsPerPeer  = 64
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultIdleTimeout      = 5 * time.Minute
	DefaultFrameTimeout     = time.Minute
	DefaultWriteTimeout     = time.Minute
	DefaultRequestMemory    = 256 << 20
	DefaultMaxReadsPerConn  = 64
	DefaultAckQueue         = 1024
)

// MinRequestMemory is the smallest RequestMemory and PeerRequestMemory:
// one frame of the largest size must fit in the budget, or its connection
// would wait for ever.
const MinRequestMemory = protocol.MaxFrameSize

// maxOpsPerConn bounds the requests of one connection, other than reads
// and appends, that wait for the disk at once (creates, seals, setups...).
// At the bound the connection's reader waits.
const maxOpsPerConn = 256

// closeWriteTimeout bounds how long a closing connection tries to deliver
// its last replies to a client that does not read them.
const closeWriteTimeout = 5 * time.Second

// ErrInvalidOptions is the error of Options.Validate.
var ErrInvalidOptions = errors.New("server: invalid options")

// Options configures a Server. Zero values take the defaults; for the
// timeouts and MaxConnsPerPeer a negative value means none.
type Options struct {
	// Logger receives connection events (debug) and failures (warn,
	// error); discarded if nil.
	Logger logrus.FieldLogger
	// MaxConnections bounds the open connections; at the bound the server
	// stops accepting until one closes.
	MaxConnections int
	// MaxConnsPerPeer bounds the open connections of one peer: one
	// remote IPv4 address, or one IPv6 /64. So one peer cannot take every
	// slot: a connection beyond it is closed as soon as it is accepted.
	// At most MaxConnections.
	MaxConnsPerPeer int
	// HandshakeTimeout is how long a new connection has to deliver its
	// first complete frame (normally Hello) before it is closed.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection that has had nothing registered on
	// it for that long: no writer set up, no request in flight, no frame
	// received. Connections with a writer are never idle.
	IdleTimeout time.Duration
	// FrameTimeout is how long a frame that reserves request memory (an
	// AppendBlock with data, say) has to arrive whole once its prefix
	// has and its memory is granted: a peer that stops in the middle of
	// such a frame is disconnected, and the frame's memory released. The
	// time spent waiting for memory does not count. A minute lets a
	// maximal frame (16 MiB) through a link of a few hundred kB/s.
	FrameTimeout time.Duration
	// WriteTimeout is how long a write of replies may wait for the peer
	// to read them: a peer that does not is disconnected, and the memory
	// of its appends queued behind the blocked replies released. A
	// minute, like FrameTimeout, lets a slow but live link through.
	WriteTimeout time.Duration
	// RequestMemory bounds the bytes the node holds for requests, all
	// connections together: frames being read, and appends until they are
	// durable. A connection waits for budget before it reads a frame's
	// body (back-pressure on the client). At least MinRequestMemory.
	RequestMemory int64
	// PeerRequestMemory is the share of RequestMemory one peer (see
	// MaxConnsPerPeer) may hold, so that one peer's slow or unfinished frames
	// cannot stall everyone's; RequestMemory/4 by default. Between
	// MinRequestMemory and RequestMemory.
	PeerRequestMemory int64
	// MaxReadsPerConn bounds the reads of one connection in progress at
	// once (parked tail reads included).
	MaxReadsPerConn int
	// AckQueue is the length of a connection's ack FIFO: how many appends
	// may wait for their fsync before the connection stops reading.
	AckQueue int
}

// Validate checks the options that have an allowed range; zero values
// (the defaults) always pass. New logs a warning and applies the same
// ranges: a negative MaxConnections or RequestMemory takes its default,
// any other value out of its range the nearest allowed one.
func (o Options) Validate() error {
	maxConns := o.MaxConnections
	if maxConns < 0 {
		return fmt.Errorf("%w: max connections %d is negative", ErrInvalidOptions, maxConns)
	}
	if maxConns == 0 {
		maxConns = DefaultMaxConnections
	}
	if o.MaxConnsPerPeer > maxConns {
		return fmt.Errorf("%w: max connections per peer %d is above max connections %d", ErrInvalidOptions, o.MaxConnsPerPeer, maxConns)
	}
	mem := o.RequestMemory
	if mem != 0 && mem < MinRequestMemory {
		return fmt.Errorf("%w: request memory %d bytes is below %d, the largest frame", ErrInvalidOptions, mem, MinRequestMemory)
	}
	if mem == 0 {
		mem = DefaultRequestMemory
	}
	if p := o.PeerRequestMemory; p != 0 && (p < MinRequestMemory || p > mem) {
		return fmt.Errorf("%w: request memory per peer %d bytes is outside [%d, %d] (the largest frame, the request memory)",
			ErrInvalidOptions, p, MinRequestMemory, mem)
	}
	return nil
}

// withDefaults returns o with every zero value replaced by its default and
// every value out of its range moved into it (see Validate), logging the
// first that was.
func (o Options) withDefaults() Options {
	o.Logger = logs.OrDiscard(o.Logger)
	if err := o.Validate(); err != nil {
		o.Logger.WithError(err).Warn("server: options out of range; using allowed values instead")
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxConnsPerPeer == 0 {
		o.MaxConnsPerPeer = DefaultMaxConnsPerPeer
	}
	if o.MaxConnsPerPeer < 0 || o.MaxConnsPerPeer > o.MaxConnections {
		o.MaxConnsPerPeer = o.MaxConnections
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.FrameTimeout == 0 {
		o.FrameTimeout = DefaultFrameTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.RequestMemory <= 0 {
		o.RequestMemory = DefaultRequestMemory
	}
	o.RequestMemory = max(o.RequestMemory, MinRequestMemory)
	if o.PeerRequestMemory <= 0 {
		o.PeerRequestMemory = o.RequestMemory / 4
	}
	o.PeerRequestMemory = min(max(o.PeerRequestMemory, MinRequestMemory), o.RequestMemory)
	if o.MaxReadsPerConn <= 0 {
		o.MaxReadsPerConn = DefaultMaxReadsPerConn
	}
	if o.AckQueue <= 0 {
		o.AckQueue = DefaultAckQueue
	}
	return o
}

// Stats are a server's counters, for tests and metrics.
type Stats struct {
	// Conns is the number of open connections.
	Conns int
	// HeldBytes is the request memory in use (see Options.RequestMemory).
	HeldBytes int64
	// RefusedPerPeer counts connections closed on accept because their
	// peer was at Options.MaxConnsPerPeer.
	RefusedPerPeer int64
	// TimedOut counts connections closed by the handshake or idle timeout.
	TimedOut int64
	// FrameTimedOut counts connections closed by Options.FrameTimeout.
	FrameTimedOut int64
	// WriteTimedOut counts connections closed by Options.WriteTimeout.
	WriteTimedOut int64
}

// Server serves one node over TCP.
type Server struct {
	node *node.Node
	opts Options
	log  logrus.FieldLogger

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	slots  chan struct{}       // one token per open connection
	mem    *semaphore.Weighted // Options.RequestMemory
	wg     sync.WaitGroup

	held     atomic.Int64 // bytes acquired from mem
	refused  atomic.Int64
	timedOut atomic.Int64
	frameOut atomic.Int64
	writeOut atomic.Int64

	mu struct {
		sync.Mutex
		closed    bool
		listeners map[net.Listener]struct{}
		conns     map[*conn]struct{}
		peers     map[string]*peer
		addr      net.Addr
	}
}

// peer is what the server counts for one remote host: an IPv4 address or
// an IPv6 /64 (peerIP). Its fields are guarded by Server.mu; mem is safe
// for concurrent use.
type peer struct {
	ip    string
	conns int
	// refusing is set when the peer reaches its cap, so that the refusals
	// of one flood are logged once.
	refusing bool
	// mem is the peer's share of the request memory.
	mem *semaphore.Weighted
}

// New returns a server for n. It serves nothing until Serve. Options out
// of range are moved into it (see Options.Validate).
func New(n *node.Node, opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{node: n, opts: opts, log: opts.Logger.WithField("component", "server"),
		slots: make(chan struct{}, opts.MaxConnections), mem: semaphore.NewWeighted(opts.RequestMemory)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.listeners = map[net.Listener]struct{}{}
	s.mu.conns = map[*conn]struct{}{}
	s.mu.peers = map[string]*peer{}
	return s
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	conns := len(s.mu.conns)
	s.mu.Unlock()
	return Stats{Conns: conns, HeldBytes: s.held.Load(), RefusedPerPeer: s.refused.Load(), TimedOut: s.timedOut.Load(),
		FrameTimedOut: s.frameOut.Load(), WriteTimedOut: s.writeOut.Load()}
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

	// Accept failures wait 5 ms, doubling up to 1 s; a success resets it.
	bo := retry.NewBackoff(5*time.Millisecond, time.Second)
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
				wait := bo.NextBackOff()
				s.log.WithError(err).Warnf("server: accept failed; retrying in %v", wait)
				if retry.Sleep(s.ctx, wait) != nil {
					return nil
				}
				continue
			}
			return err
		}
		bo.Reset()
		c, err := s.track(nc)
		if err != nil {
			nc.Close()
			<-s.slots
			if errors.Is(err, errServerClosed) {
				return nil
			}
			continue // the peer is at its cap
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

// errServerClosed and errPeerFull are why track refuses a connection.
var (
	errServerClosed = errors.New("server: closed")
	errPeerFull     = errors.New("server: peer at its connection cap")
)

// track registers a new connection and counts its goroutine, unless the
// server is closed or the connection's peer is at its cap.
func (s *Server) track(nc net.Conn) (*conn, error) {
	ip := peerIP(nc.RemoteAddr())
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil, errServerClosed
	}
	p := s.mu.peers[ip]
	if p == nil {
		p = &peer{ip: ip, mem: semaphore.NewWeighted(s.opts.PeerRequestMemory)}
		s.mu.peers[ip] = p
	}
	if n := p.conns; n >= s.opts.MaxConnsPerPeer {
		s.refused.Add(1)
		first := !p.refusing
		p.refusing = true
		s.mu.Unlock()
		if first { // logged outside the lock: the log may block
			s.log.WithField("peer", ip).Warnf("server: peer has %d connections, its cap; closing its new ones until it has fewer", n)
		}
		return nil, errPeerFull
	}
	p.conns++
	c := newConn(s, nc, p)
	s.mu.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	return c, nil
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.mu.conns, c)
	p := c.peer
	p.conns--
	p.refusing = false
	if p.conns == 0 {
		delete(s.mu.peers, p.ip)
	}
	s.mu.Unlock()
}

// peerIP is the key of a remote address's peer: its IPv4 address, the /64
// prefix of its IPv6 address (one host or site usually has a whole /64,
// so single IPv6 addresses would cost it nothing), or the whole address
// for addresses that have no IP.
func peerIP(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	if ip4 := ta.IP.To4(); ip4 != nil {
		return ip4.String()
	}
	return ta.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// acquireMem takes n bytes of request memory for a connection of p: the
// peer's share first, then the node's. Every connection takes them in
// this order, and whole frames at a time, so nobody waits while holding
// part of what it needs.
func (s *Server) acquireMem(ctx context.Context, p *peer, n int64) error {
	if err := p.mem.Acquire(ctx, n); err != nil {
		return err
	}
	if err := s.mem.Acquire(ctx, n); err != nil {
		p.mem.Release(n)
		return err
	}
	s.held.Add(n)
	return nil
}

func (s *Server) releaseMem(p *peer, n int64) {
	s.held.Add(-n)
	s.mem.Release(n)
	p.mem.Release(n)
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
