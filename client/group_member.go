package client

import (
	"context"
	"fmt"

	"github.com/sluice-streams/sluice/protocol/api"
)

// The Reader's side of reader groups: a Reader in group mode starts with
// no segments; the GroupReader's heartbeat goroutine acquires and releases
// segments on it as the group's state says, and collects the segments it
// read to their end. The Reader's segment set is owned by ReadNext, so
// these run through runOwner.

// newGroupReader returns a Reader of scope/stream in group mode, reading
// nothing until segments are acquired.
func (c *Client) newGroupReader(ctx context.Context, scope, stream string, opts ...ReaderOption) (*Reader, error) {
	cfg := readerConfig{readBuffer: DefaultReadBuffer, tailWait: tailWait}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.group = true
	if cfg.readBuffer <= 0 {
		return nil, fmt.Errorf("client: read buffer %d: must be more than 0", cfg.readBuffer)
	}
	hc, _ := c.ctl.(headCutter)
	r := &Reader{c: c, scope: scope, stream: stream, cfg: cfg, hasHead: hc,
		results: make(chan fetchResult),
		busy:    make(chan struct{}, 1),
		cmds:    make(chan func()),
		segs:    map[string]*segRead{},
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.mu.tracker = newSegmentTracker(nil)
	r.mu.pos = &posNode{full: api.StreamCut{}}
	r.mu.groupEnded = map[string]EndedSegment{}
	return r, nil
}

// runOwner runs f as the owner of the Reader's segment set: at once if no
// ReadNext is running, else inside the running ReadNext (which takes
// commands while it waits). It returns once f has run, or with ctx's
// error or ErrClosed without running it.
func (r *Reader) runOwner(ctx context.Context, f func()) error {
	done := make(chan struct{})
	g := func() { f(); close(done) }
	select {
	case r.busy <- struct{}{}:
		g()
		<-r.busy
		return nil
	case r.cmds <- g:
		<-done
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.ctx.Done():
		return ErrClosed
	}
}

// acquireLocked starts reading seg at off. Owner only.
func (r *Reader) acquireOwned(seg string, off int64) {
	if _, ok := r.segs[seg]; ok {
		return
	}
	r.segs[seg] = &segRead{name: seg, bufOff: off}
	r.mu.Lock()
	r.mu.tracker.replace(nil, map[string]int64{seg: off})
	r.mu.pos = &posNode{full: r.mu.tracker.cut()}
	r.mu.Unlock()
}

// releaseOwned stops reading seg and returns the offset of its next
// event not returned (bytes fetched beyond it are dropped). Owner only.
func (r *Reader) releaseOwned(seg string) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	off, ok := r.mu.tracker.reading[seg]
	if !ok {
		return 0, false
	}
	delete(r.segs, seg)
	r.mu.tracker.replace([]string{seg}, nil)
	r.mu.pos = &posNode{full: r.mu.tracker.cut()}
	return off, true
}

// groupTruncate handles a truncation past the reader in seg: it stops
// reading the segments truncation deleted that it holds, and keeps the
// truncation for the group, which places the head cut's segments that
// replace them (GroupState.truncated). The reader takes none of them by
// itself: another reader may hold them already. Owner only.
func (r *Reader) groupTruncate(seg string, m *truncMove) {
	r.mu.Lock()
	var drop []string
	for _, s := range append([]string{seg}, m.drop...) {
		if _, ok := r.mu.tracker.reading[s]; ok {
			drop = append(drop, s)
		}
	}
	r.mu.tracker.replace(drop, nil)
	r.mu.pos = &posNode{full: r.mu.tracker.cut()}
	r.mu.groupTruncs = append(r.mu.groupTruncs, groupTruncation{Segment: seg, Drop: m.drop, Head: m.add})
	r.mu.Unlock()
	for _, s := range drop {
		delete(r.segs, s)
	}
}

// groupSnapshot returns, at one instant, the position in every segment
// being read, and the segments read to their end and the truncations met
// since the last call.
func (r *Reader) groupSnapshot() (api.StreamCut, map[string]EndedSegment, []groupTruncation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ended, truncs := r.mu.groupEnded, r.mu.groupTruncs
	r.mu.groupEnded = map[string]EndedSegment{}
	r.mu.groupTruncs = nil
	return r.mu.tracker.cut(), ended, truncs
}
