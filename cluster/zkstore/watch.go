package zkstore

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/go-zookeeper/zk"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/internal/retry"
)

// keyState is what a watcher last told its reader about a key.
type keyState struct {
	exists bool
	mzxid  int64
	data   []byte
}

func (a keyState) same(b keyState) bool {
	return a.exists == b.exists && a.mzxid == b.mzxid
}

// arm reads the state of the znode at p and sets a one-shot watch on it:
// a data watch if it exists (fires on a write or delete), an exists watch
// if not (fires on its creation).
func (s *Store) arm(p string) (keyState, <-chan zk.Event, error) {
	for {
		data, stat, ch, err := s.conn.GetW(p)
		if err == nil {
			return keyState{exists: true, mzxid: stat.Mzxid, data: data}, ch, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return keyState{}, nil, err
		}
		ok, _, ch, err := s.conn.ExistsW(p)
		if err != nil {
			return keyState{}, nil, err
		}
		if !ok {
			return keyState{}, ch, nil
		}
		// Created between the two reads: read its data. The exists
		// watch just set stays behind in the client until the znode
		// changes (a channel with room for its one event).
	}
}

// Watch implements cluster.Store with ZooKeeper's one-shot watches, re-armed
// by a goroutine after each firing; the goroutine compares the state it
// reads with the state it last reported (by Mzxid), so changes that
// happened while no watch was set are reported too, coalesced. The watch
// survives reconnections and session expiry (it is set again in the new
// session). A watch that ends leaves its last one-shot watch registered in
// the client until that znode next changes. A state whose record fails its
// checksum is not reported (Get reports it, with cluster.ErrCorrupt); the
// next write of the key is.
func (s *Store) Watch(ctx context.Context, key string) (<-chan cluster.Event, error) {
	if err := s.check(ctx, key); err != nil {
		return nil, err
	}
	p := s.path(key)
	type armed struct {
		state keyState
		ch    <-chan zk.Event
	}
	first, err := call(ctx, func() (armed, error) {
		state, ch, err := s.arm(p)
		return armed{state, ch}, err
	})
	if err != nil {
		return nil, s.mapErr("watch", key, err)
	}
	state, zch := first.state, first.ch
	out := make(chan cluster.Event, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(out)
		bo := newBackoff()
		for {
			if zch != nil {
				select {
				case <-ctx.Done():
					return
				case <-s.done:
					return
				case <-zch:
					// Any firing, also EventNotWatching (session
					// expired): read the state again and re-arm.
				}
			}
			next, ch, err := s.arm(p)
			if err != nil {
				zch = nil
				if !waitRetry(ctx, s.done, bo.NextBackOff()) {
					return
				}
				continue
			}
			bo.Reset()
			zch = ch
			if next.same(state) {
				continue
			}
			state = next
			ev := cluster.Event{Key: key, Deleted: !next.exists}
			if next.exists {
				value, err := s.decode(key, next.data)
				if err != nil {
					// A damaged record is not reported: Get reports it.
					// The next write of the key replaces it.
					continue
				}
				ev.Value, ev.Version = value, cluster.Version(next.mzxid)
			}
			// Replace an event the reader has not taken yet; this
			// goroutine is the only sender.
			select {
			case <-out:
			default:
			}
			out <- ev
		}
	}()
	return out, nil
}

// newBackoff spaces retries after errors: 50 ms doubling to 2 s.
func newBackoff() *backoff.ExponentialBackOff {
	return retry.NewBackoff(50*time.Millisecond, 2*time.Second)
}

// waitRetry waits d; false if ctx or done ended it first.
func waitRetry(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-done:
		return false
	}
}
