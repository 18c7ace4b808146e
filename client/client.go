package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Errors of the package, classified with errors.Is.
var (
	// ErrClosed is returned by calls on a closed Client or Writer, and
	// fails the events a Writer closed before they were acknowledged.
	ErrClosed = errors.New("client: closed")
	// ErrNoController is returned by New with neither a controller URL nor
	// WithController.
	ErrNoController = errors.New("client: no controller")
)

// Controller is the part of the controller's REST API the client library
// calls; *ctlclient.Client satisfies it. Every method blocks until the
// reply or ctx is done and retries nothing. Errors are ctlclient's (classify
// with errors.Is against ctlclient.ErrNotFound, ErrUnavailable,
// ErrUnreachable). While a writer has events to deliver it retries every
// error of Successors and SegmentURI with backoff; NewWriter retries
// GetStream and CurrentSegments while the controller is unreachable or
// unavailable, until its ctx is done, and returns their other errors.
type Controller interface {
	GetStream(ctx context.Context, scope, stream string) (api.StreamInfo, error)
	CurrentSegments(ctx context.Context, scope, stream string) ([]api.SegmentRange, error)
	Successors(ctx context.Context, segment string) ([]api.Successor, error)
	SegmentURI(ctx context.Context, segment string) (api.SegmentURI, error)
}

// Option configures a Client.
type Option func(*clientConfig)

type clientConfig struct {
	ctl   Controller
	dial  func(ctx context.Context, addr string) (*segclient.Conn, error)
	retry func(attempt int, err error)
}

// WithController makes the Client call ctl instead of a new
// ctlclient.Client of the controller URL: to share one REST client (with
// its own http.Client), or to put something between the library and the
// controller in a test.
func WithController(ctl Controller) Option {
	return func(c *clientConfig) { c.ctl = ctl }
}

// WithRetryNotify calls f each time the Client's writers and readers are
// about to retry after a failure that may pass, with why (err) and the
// attempt number of that retry loop, from 1, so that a program can say
// that it is waiting and on what: NewWriter while the controller is
// unreachable or unavailable, a writer's segment reconnecting to its node
// (or asking the controller where it went), a reader's fetch. Several
// loops may run at once (one per segment), each counting its own
// attempts. f is called from the library's goroutines (and, for
// NewWriter, from its caller's): it must be safe for concurrent use,
// return quickly and not call the Client. The library
// itself logs nothing.
func WithRetryNotify(f func(attempt int, err error)) Option {
	return func(c *clientConfig) { c.retry = f }
}

// Client is a connection to a Sluice deployment: the controller, a pool of
// node connections (one per node address, shared by every writer and reader
// of the Client), and a cache of which node serves which segment. It is
// safe for concurrent use. Writers and readers are made from it.
type Client struct {
	ctl   Controller
	dial  func(ctx context.Context, addr string) (*segclient.Conn, error)
	retry func(attempt int, err error) // WithRetryNotify, or nil

	mu struct {
		sync.Mutex
		closed    bool
		conns     map[string]*segclient.Conn // node address -> connection
		endpoints map[string]string          // segment -> node address
	}
}

// New returns a Client of the controller at controllerURL
// ("http://127.0.0.1:10080"). It does not contact anything: the first call
// that needs the controller or a node does, so ctx is unused today; it is
// there for a future handshake.
func New(ctx context.Context, controllerURL string, opts ...Option) (*Client, error) {
	cfg := clientConfig{dial: segclient.Dial}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.ctl == nil {
		if controllerURL == "" {
			return nil, ErrNoController
		}
		cfg.ctl = ctlclient.NewClient(controllerURL)
	}
	c := &Client{ctl: cfg.ctl, dial: cfg.dial, retry: cfg.retry}
	c.mu.conns = map[string]*segclient.Conn{}
	c.mu.endpoints = map[string]string{}
	return c, nil
}

// retrying tells the WithRetryNotify hook, if any, that a retry loop is
// about to make attempt (from 1) after err.
func (c *Client) retrying(attempt int, err error) {
	if c.retry != nil {
		c.retry(attempt, err)
	}
}

// Controller returns the controller the Client calls.
func (c *Client) Controller() Controller { return c.ctl }

// Endpoint returns the node that serves segment, from the cache or else from
// the controller (then cached). It blocks until the answer or ctx is done and
// retries nothing.
func (c *Client) Endpoint(ctx context.Context, segment string) (string, error) {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return "", ErrClosed
	}
	addr, ok := c.mu.endpoints[segment]
	c.mu.Unlock()
	if ok {
		return addr, nil
	}
	uri, err := c.ctl.SegmentURI(ctx, segment)
	if err != nil {
		return "", fmt.Errorf("client: locate %s: %w", segment, err)
	}
	addr = uri.Endpoint
	c.mu.Lock()
	c.mu.endpoints[segment] = addr
	c.mu.Unlock()
	return addr, nil
}

// Conn returns the pooled connection to the node at addr, dialling it if
// there is none or the one there is broken. ctx bounds the dial and the
// handshake; it tries once.
func (c *Client) Conn(ctx context.Context, addr string) (*segclient.Conn, error) {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	conn := c.mu.conns[addr]
	c.mu.Unlock()
	if conn != nil && conn.Err() == nil {
		return conn, nil
	}
	// Dial without the lock; if another caller installed a working
	// connection meanwhile, use that one.
	fresh, err := c.dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", addr, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		fresh.Close()
		return nil, ErrClosed
	}
	if cur := c.mu.conns[addr]; cur != nil && cur != conn && cur.Err() == nil {
		fresh.Close()
		return cur, nil
	}
	if cur := c.mu.conns[addr]; cur != nil {
		cur.Close() // broken
	}
	c.mu.conns[addr] = fresh
	return fresh, nil
}

// SegmentConn returns a connection to the node that serves segment now
// (Endpoint, then Conn). It blocks until both are done or ctx is, and
// tries once.
func (c *Client) SegmentConn(ctx context.Context, segment string) (*segclient.Conn, error) {
	addr, err := c.Endpoint(ctx, segment)
	if err != nil {
		return nil, err
	}
	return c.Conn(ctx, addr)
}

// Invalidate tells the Client that a call for segment on conn failed with
// err. If err says the node does not serve the segment (protocol.ErrWrongHost,
// protocol.ErrContainerUnavailable) or the connection broke, the cached
// endpoint is dropped, so the next SegmentConn asks the controller again;
// a broken conn is closed and dropped from the pool. Other errors change
// nothing. conn may be nil.
func (c *Client) Invalidate(segment string, conn *segclient.Conn, err error) {
	if err == nil || !NeedsRelocate(err) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.endpoints, segment)
	if conn == nil || conn.Err() == nil {
		return
	}
	for addr, cur := range c.mu.conns {
		if cur == conn {
			delete(c.mu.conns, addr)
		}
	}
	conn.Close()
}

// NeedsRelocate reports whether err, from a call to a node, means the
// segment's node must be looked up again: WrongHost, ContainerUnavailable,
// or a broken connection.
func NeedsRelocate(err error) bool {
	return protocol.IsRetriable(err) || errors.Is(err, segclient.ErrConnectionClosed)
}

// Close closes every pooled connection (calls waiting on them fail with
// segclient.ErrConnectionClosed) and returns without waiting on the
// network. Writers and readers of the Client should be closed first;
// calls made afterwards fail with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil
	}
	c.mu.closed = true
	for addr, conn := range c.mu.conns {
		conn.Close()
		delete(c.mu.conns, addr)
	}
	return nil
}

// forget drops the cached endpoint of segment (a dial to it failed: the
// segment may have moved).
func (c *Client) forget(segment string) {
	c.mu.Lock()
	delete(c.mu.endpoints, segment)
	c.mu.Unlock()
}
