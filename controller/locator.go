package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol"
)

// Location is where a segment is served: the node's address, the segment's
// container and the epoch of that container's assignment.
type Location struct {
	Endpoint  string
	Container int
	Epoch     int64
}

// SegmentLocator is a Locator that also says which container and epoch
// (the REST route GET /v1/segments/{segment}/uri).
type SegmentLocator interface {
	Locator
	// Locate returns where segment is served, or an error wrapping
	// protocol.ErrContainerUnavailable when no live node serves its
	// container now.
	Locate(ctx context.Context, segment string) (Location, error)
}

// StaticNode is the SegmentLocator of standalone mode: one node at Addr
// serves every one of Containers containers, under epoch 0.
type StaticNode struct {
	Addr       string
	Containers int
}

// NodeFor implements Locator.
func (s StaticNode) NodeFor(context.Context, string) (string, error) { return s.Addr, nil }

// Locate implements SegmentLocator.
func (s StaticNode) Locate(_ context.Context, segment string) (Location, error) {
	return Location{Endpoint: s.Addr, Container: protocol.ContainerOf(segment, s.Containers)}, nil
}

// ClusterLocator is the SegmentLocator of cluster mode: a segment's
// container (protocol.ContainerOf), that container's owner in the published
// assignment (layout.AssignmentKey), and the owner's address from its registration
// (layout.NodesKey/<owner>). It keeps the assignment and the registrations of the
// nodes it names in memory, following them with the store's watches, so a
// lookup costs no store request. A container whose owner is not registered
// (dead, or not yet back) or that is unassigned is unavailable: its
// segments are never sent anywhere else.
type ClusterLocator struct {
	store      cluster.Store
	containers int
	log        logrus.FieldLogger
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup

	mu struct {
		sync.Mutex
		m      *layout.Map   // nil: none published (or unreadable)
		mErr   error         // why m is nil, when it is
		loaded chan struct{} // closed once the assignment was read once
		nodes  map[string]*nodeEntry
	}
}

type nodeEntry struct {
	loaded chan struct{} // closed once the registration was read once
	addr   string        // "" while the node is not registered
}

// NewClusterLocator starts following the assignment of a cluster of
// containers containers in store. Close stops it; it does not close store.
func NewClusterLocator(store cluster.Store, containers int, logger logrus.FieldLogger) (*ClusterLocator, error) {
	if containers < 1 {
		return nil, fmt.Errorf("controller: ClusterLocator: %d containers, want at least 1", containers)
	}
	l := &ClusterLocator{store: store, containers: containers, log: logs.OrDiscard(logger)}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.mu.loaded = make(chan struct{})
	l.mu.nodes = map[string]*nodeEntry{}
	ch, err := store.Watch(l.ctx, layout.AssignmentKey)
	if err != nil {
		l.cancel()
		return nil, fmt.Errorf("controller: watch %s: %w", layout.AssignmentKey, err)
	}
	l.wg.Add(1)
	go l.followAssignment(ch)
	return l, nil
}

// Close stops following the store and waits for the watch goroutines.
func (l *ClusterLocator) Close() error {
	l.cancel()
	l.wg.Wait()
	return nil
}

// followAssignment reads the assignment once the watch is set, then applies
// each change; events arrive in order and the last one is the current
// state, so the cache converges to the store.
func (l *ClusterLocator) followAssignment(ch <-chan cluster.Event) {
	defer l.wg.Done()
	first := true
	apply := func(value []byte, exists bool) {
		var m *layout.Map
		var mErr error
		if exists {
			parsed, err := layout.Parse(value, l.containers)
			if err != nil {
				mErr = err
				l.log.WithError(err).Error("controller: the published container assignment cannot be used")
			} else {
				m = &parsed
			}
		} else {
			mErr = errors.New("no container assignment is published yet (no leader controller, or no node)")
		}
		l.mu.Lock()
		l.mu.m, l.mu.mErr = m, mErr
		if m != nil {
			for _, o := range m.Containers {
				if o.Node != "" {
					l.watchNodeLocked(o.Node)
				}
			}
		}
		if first {
			close(l.mu.loaded)
			first = false
		}
		l.mu.Unlock()
	}
	for first {
		kv, err := l.store.Get(l.ctx, layout.AssignmentKey)
		switch {
		case err == nil:
			apply(kv.Value, true)
		case errors.Is(err, cluster.ErrNotFound):
			apply(nil, false)
		default:
			if l.ctx.Err() != nil {
				return
			}
			l.log.WithError(err).Warn("controller: reading the container assignment failed; retrying")
			if retry.Sleep(l.ctx, retryDelay) != nil {
				return
			}
		}
	}
	for ev := range ch {
		apply(ev.Value, !ev.Deleted)
	}
}

// watchNodeLocked starts following node id's registration unless it is
// followed already. l.mu is held. Entries are never dropped: the set of
// nodes a cluster has ever assigned to is small.
func (l *ClusterLocator) watchNodeLocked(id string) {
	if _, ok := l.mu.nodes[id]; ok {
		return
	}
	e := &nodeEntry{loaded: make(chan struct{})}
	l.mu.nodes[id] = e
	l.wg.Add(1)
	go l.followNode(id, e)
}

func (l *ClusterLocator) followNode(id string, e *nodeEntry) {
	defer l.wg.Done()
	key := layout.NodesKey + "/" + id
	var ch <-chan cluster.Event
	for {
		var err error
		if ch, err = l.store.Watch(l.ctx, key); err == nil {
			break
		}
		if l.ctx.Err() != nil {
			return
		}
		l.log.WithError(err).WithField("key", key).Warn("controller: watching a node's registration failed; retrying")
		if retry.Sleep(l.ctx, retryDelay) != nil {
			return
		}
	}
	first := true
	apply := func(value []byte, exists bool) {
		addr := ""
		if exists {
			if reg, err := layout.ParseNodeRegistration(value); err != nil || reg.Addr == "" {
				l.log.WithField("key", key).Error("controller: a node registration without an address; treating the node as not live")
			} else {
				addr = reg.Addr
			}
		}
		l.mu.Lock()
		e.addr = addr
		if first {
			close(e.loaded)
			first = false
		}
		l.mu.Unlock()
	}
	for first {
		kv, err := l.store.Get(l.ctx, key)
		switch {
		case err == nil:
			apply(kv.Value, true)
		case errors.Is(err, cluster.ErrNotFound):
			apply(nil, false)
		default:
			if l.ctx.Err() != nil {
				return
			}
			if retry.Sleep(l.ctx, retryDelay) != nil {
				return
			}
		}
	}
	for ev := range ch {
		apply(ev.Value, !ev.Deleted)
	}
}

// NodeFor implements Locator.
func (l *ClusterLocator) NodeFor(ctx context.Context, segment string) (string, error) {
	loc, err := l.Locate(ctx, segment)
	return loc.Endpoint, err
}

// Locate implements SegmentLocator. It waits (bounded by ctx) only for the
// first read of the assignment and of the owner's registration.
func (l *ClusterLocator) Locate(ctx context.Context, segment string) (Location, error) {
	c := protocol.ContainerOf(segment, l.containers)
	if err := wait(ctx, l.loadedAssignment()); err != nil {
		return Location{}, err
	}
	l.mu.Lock()
	m, mErr := l.mu.m, l.mu.mErr
	var o layout.Owner
	var e *nodeEntry
	if m != nil {
		o = m.Containers[c]
		e = l.mu.nodes[o.Node]
	}
	l.mu.Unlock()
	loc := Location{Container: c, Epoch: o.Epoch}
	switch {
	case m == nil:
		return loc, fmt.Errorf("controller: segment %s: container %d: %w: %v", segment, c, protocol.ErrContainerUnavailable, mErr)
	case o.Node == "":
		return loc, fmt.Errorf("controller: segment %s: container %d is not assigned to a node yet: %w", segment, c, protocol.ErrContainerUnavailable)
	}
	if err := wait(ctx, e.loaded); err != nil {
		return loc, err
	}
	l.mu.Lock()
	loc.Endpoint = e.addr
	l.mu.Unlock()
	if loc.Endpoint == "" {
		return loc, fmt.Errorf("controller: segment %s: container %d: its node %s is not live: %w", segment, c, o.Node, protocol.ErrContainerUnavailable)
	}
	return loc, nil
}

func (l *ClusterLocator) loadedAssignment() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.loaded
}

// retryDelay spaces retries of a failed store read.
const retryDelay = 200 * time.Millisecond

func wait(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
