package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol"
)

// SegmentStore is what the controller asks of the nodes. Every method may
// be repeated after a crash or a lost reply, so each is idempotent from the
// controller's point of view, as stated per method. Other errors are the
// node's (classify with errors.Is against protocol's sentinels).
type SegmentStore interface {
	// CreateSegment creates an empty segment. A segment that exists already
	// is success: segment names are never reused, so it is the one an
	// earlier attempt created.
	CreateSegment(ctx context.Context, segment string, attrs map[string]int64) error
	// SetAttributes sets attributes of a segment (repeating it is
	// harmless).
	SetAttributes(ctx context.Context, segment string, attrs map[string]int64) error
	// SealSegment seals a segment and returns its length. Sealing a sealed
	// segment is success (the node's seal is idempotent).
	SealSegment(ctx context.Context, segment string) (length int64, err error)
	// TruncateSegment makes the bytes below offset unreadable. Truncating
	// below the current start offset is success and changes nothing. Above
	// it, offset must be an event boundary (protocol.ErrNotEventBoundary).
	TruncateSegment(ctx context.Context, segment string, offset int64) error
	// CheckBoundary returns nil if offset is an event boundary of the
	// segment (where an event starts, or its length), else an error
	// wrapping protocol.ErrNotEventBoundary that names the nearest ones.
	// It changes nothing.
	CheckBoundary(ctx context.Context, segment string, offset int64) error
	// DeleteSegment deletes a segment. A segment that does not exist is
	// success: the controller deletes only segments it has retired.
	DeleteSegment(ctx context.Context, segment string) error
	// MergeSegments appends the sealed transaction segment source to its
	// parent target and deletes source, atomically on the node; it returns
	// target's new length. It is NOT made idempotent here: a source that
	// does not exist gives protocol.ErrNoSuchSegment, and only the caller
	// knows whether that means "merged already" (see CommitTxn).
	MergeSegments(ctx context.Context, target, source string) (targetLength int64, err error)
	// GetSegmentInfo returns a segment's start offset, length and sealed
	// flag, or protocol.ErrNoSuchSegment.
	GetSegmentInfo(ctx context.Context, segment string) (*protocol.SegmentInfo, error)
}

// Locator finds the node that serves a segment.
type Locator interface {
	NodeFor(ctx context.Context, segment string) (addr string, err error)
}

// StaticLocator sends every segment to one node: standalone mode.
type StaticLocator string

// NodeFor returns the locator's address.
func (l StaticLocator) NodeFor(context.Context, string) (string, error) { return string(l), nil }

// NodeSegments is the SegmentStore over the nodes' wire protocol: one
// pooled segclient connection per node address, dialled on first use and
// again when it broke. An operation refused as retriable
// (protocol.IsRetriable: the segment's container is moving between nodes,
// opening, or not assigned yet) is located and sent again, with backoff,
// for up to RetryFor. Every operation, retries included, ends after
// CallTimeout: a node that accepts connections but never answers (stopped,
// wedged) fails the call instead of holding the periodic loops
// (auto-scaling, retention, the transaction sweeper) for ever.
type NodeSegments struct {
	// RetryFor bounds the retries of one operation (DefaultRetryFor from
	// NewNodeSegments; 0: none).
	RetryFor time.Duration
	// CallTimeout bounds one operation, retries included
	// (DefaultCallTimeout from NewNodeSegments; 0: only ctx bounds it).
	CallTimeout time.Duration

	loc Locator
	mu  struct {
		sync.Mutex
		conns  map[string]*segclient.Conn
		closed bool
	}
}

// DefaultRetryFor is how long an operation waits for its segment's
// container: a hand-over pauses a container for tens of milliseconds, a
// container opening after a crash replays its log first.
const DefaultRetryFor = 15 * time.Second

// DefaultCallTimeout bounds one operation on the nodes: RetryFor and a
// margin for the last attempt.
const DefaultCallTimeout = DefaultRetryFor + 15*time.Second

// NewNodeSegments returns a NodeSegments that finds nodes with loc.
func NewNodeSegments(loc Locator) *NodeSegments {
	n := &NodeSegments{loc: loc, RetryFor: DefaultRetryFor, CallTimeout: DefaultCallTimeout}
	n.mu.conns = map[string]*segclient.Conn{}
	return n
}

var errSegmentsClosed = errors.New("controller: NodeSegments closed")

// bound returns ctx bounded by CallTimeout.
func (n *NodeSegments) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if n.CallTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, n.CallTimeout)
}

// conn returns the pooled connection to addr, dialling if there is none or
// the pooled one broke.
func (n *NodeSegments) conn(ctx context.Context, addr string) (*segclient.Conn, error) {
	n.mu.Lock()
	if n.mu.closed {
		n.mu.Unlock()
		return nil, errSegmentsClosed
	}
	c := n.mu.conns[addr]
	n.mu.Unlock()
	if c != nil && c.Err() == nil {
		return c, nil
	}
	nc, err := segclient.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.closed {
		nc.Close()
		return nil, errSegmentsClosed
	}
	if cur := n.mu.conns[addr]; cur != nil && cur != c && cur.Err() == nil {
		nc.Close() // another caller redialled first
		return cur, nil
	}
	if c != nil {
		c.Close()
	}
	n.mu.conns[addr] = nc
	return nc, nil
}

// do runs op on the connection to segment's node (doOnce), again while it
// fails as retriable, until RetryFor has passed or ctx is done.
func (n *NodeSegments) do(ctx context.Context, segment string, op func(*segclient.Conn) error) error {
	deadline := time.Now().Add(n.RetryFor)
	bo := retry.NewBackoff(20*time.Millisecond, time.Second)
	for {
		err := n.doOnce(ctx, segment, op)
		wait := bo.NextBackOff()
		if err == nil || !protocol.IsRetriable(err) || !time.Now().Add(wait).Before(deadline) {
			return err
		}
		if retry.Sleep(ctx, wait) != nil {
			return err
		}
	}
}

// doOnce locates segment's node and runs op on the connection to it, once
// more on a fresh connection if the first one turns out to be broken.
func (n *NodeSegments) doOnce(ctx context.Context, segment string, op func(*segclient.Conn) error) error {
	addr, err := n.loc.NodeFor(ctx, segment)
	if err != nil {
		return err
	}
	return n.doOnceAt(ctx, addr, op)
}

// doOnceAt runs op on the connection to the node at addr, once more on a
// fresh connection if the first one turns out to be broken.
func (n *NodeSegments) doOnceAt(ctx context.Context, addr string, op func(*segclient.Conn) error) error {
	for attempt := 0; ; attempt++ {
		c, err := n.conn(ctx, addr)
		if err != nil {
			return err
		}
		err = op(c)
		if errors.Is(err, segclient.ErrConnectionClosed) && attempt == 0 && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return fmt.Errorf("controller: node %s: %w", addr, err)
		}
		return nil
	}
}

// CreateSegment implements SegmentStore.
func (n *NodeSegments) CreateSegment(ctx context.Context, segment string, attrs map[string]int64) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.do(ctx, segment, func(c *segclient.Conn) error {
		err := c.CreateSegmentWith(ctx, segment, attrs)
		if errors.Is(err, protocol.ErrSegmentExists) {
			return nil
		}
		return err
	})
}

// SetAttributes implements SegmentStore.
func (n *NodeSegments) SetAttributes(ctx context.Context, segment string, attrs map[string]int64) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	updates := make([]protocol.AttributeUpdate, 0, len(attrs))
	for k, v := range attrs {
		updates = append(updates, protocol.AttributeUpdate{Key: k, Kind: protocol.Replace, Value: v})
	}
	sort.Slice(updates, func(i, j int) bool { return updates[i].Key < updates[j].Key })
	return n.do(ctx, segment, func(c *segclient.Conn) error { return c.UpdateAttributes(ctx, segment, updates) })
}

// SealSegment implements SegmentStore.
func (n *NodeSegments) SealSegment(ctx context.Context, segment string) (length int64, err error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	err = n.do(ctx, segment, func(c *segclient.Conn) error {
		length, err = c.SealSegment(ctx, segment)
		return err
	})
	return length, err
}

// TruncateSegment implements SegmentStore.
func (n *NodeSegments) TruncateSegment(ctx context.Context, segment string, offset int64) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.do(ctx, segment, func(c *segclient.Conn) error {
		_, err := c.TruncateSegment(ctx, segment, offset)
		return err
	})
}

// CheckBoundary implements SegmentStore.
func (n *NodeSegments) CheckBoundary(ctx context.Context, segment string, offset int64) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.do(ctx, segment, func(c *segclient.Conn) error { return c.CheckBoundary(ctx, segment, offset) })
}

// DeleteSegment implements SegmentStore.
func (n *NodeSegments) DeleteSegment(ctx context.Context, segment string) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.do(ctx, segment, func(c *segclient.Conn) error {
		err := c.DeleteSegment(ctx, segment)
		if errors.Is(err, protocol.ErrNoSuchSegment) {
			return nil
		}
		return err
	})
}

// MergeSegments implements SegmentStore.
func (n *NodeSegments) MergeSegments(ctx context.Context, target, source string) (length int64, err error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	err = n.do(ctx, target, func(c *segclient.Conn) error {
		length, err = c.MergeSegments(ctx, target, source)
		return err
	})
	return length, err
}

// GetSegmentInfo implements SegmentStore.
func (n *NodeSegments) GetSegmentInfo(ctx context.Context, segment string) (info *protocol.SegmentInfo, err error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	err = n.do(ctx, segment, func(c *segclient.Conn) error {
		info, err = c.GetSegmentInfo(ctx, segment)
		return err
	})
	return info, err
}

// Close closes the pooled connections; later calls fail.
func (n *NodeSegments) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.closed = true
	for addr, c := range n.mu.conns {
		c.Close()
		delete(n.mu.conns, addr)
	}
	return nil
}
