package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// storedRange is what one segment of a stream's history holds of a
// writer: the last event number (the application's sequence number in
// sequenced mode) stored for the writer, and the segment's key range
// [Low, High).
type storedRange struct {
	Low, High float64
	Last      int64
}

// resumeIndex answers, for a key hash, the highest sequence number stored
// by an earlier life of the writer in any segment whose range holds the
// hash (see "Writers across restarts" in the package doc for why an event
// (key, seq) is stored iff seq is at most that). It is built once, before
// the writer's first write, and never changes: a pure value.
//
// bounds cut [0, 1) into elementary intervals [bounds[i], bounds[i+1]),
// each covered wholly or not at all by every segment's range; last[i] is
// the maximum over the segments covering interval i.
type resumeIndex struct {
	bounds []float64
	last   []int64
	max    int64 // over all segments; protocol.NoEventNumber if none
}

// newResumeIndex builds the index of rs. Ranges with Last ==
// protocol.NoEventNumber add nothing.
func newResumeIndex(rs []storedRange) resumeIndex {
	ix := resumeIndex{max: protocol.NoEventNumber}
	bounds := []float64{0, 1}
	for _, r := range rs {
		if r.Last == protocol.NoEventNumber {
			continue
		}
		bounds = append(bounds, r.Low, r.High)
		ix.max = max(ix.max, r.Last)
	}
	slices.Sort(bounds)
	ix.bounds = slices.Compact(bounds)
	ix.last = make([]int64, len(ix.bounds)-1)
	for i := range ix.last {
		ix.last[i] = protocol.NoEventNumber
	}
	for _, r := range rs {
		if r.Last == protocol.NoEventNumber {
			continue
		}
		lo, _ := slices.BinarySearch(ix.bounds, r.Low)
		for i := lo; i < len(ix.last) && ix.bounds[i] < r.High; i++ {
			ix.last[i] = max(ix.last[i], r.Last)
		}
	}
	return ix
}

// storedAt returns the highest number stored in a segment whose range
// holds hash h, or protocol.NoEventNumber.
func (ix resumeIndex) storedAt(h float64) int64 {
	if len(ix.last) == 0 {
		return protocol.NoEventNumber
	}
	// The interval i with bounds[i] <= h < bounds[i+1].
	i := sort.SearchFloat64s(ix.bounds, h)
	if i == len(ix.bounds) || ix.bounds[i] > h {
		i--
	}
	if i < 0 || i >= len(ix.last) {
		return protocol.NoEventNumber
	}
	return ix.last[i]
}

// epochLister is the optional part of a Controller that a resuming writer
// needs: the stream's whole history (*ctlclient.Client has it).
type epochLister interface {
	Epochs(ctx context.Context, scope, stream string) ([]api.EpochInfo, error)
}

// resumeState is what a sequenced writer learned before its first write.
type resumeState struct {
	index resumeIndex
	gone  []string // segments of the history that no longer exist
}

// resumeParallel bounds the GetWriterState requests in flight at once.
const resumeParallel = 16

// loadResume asks every segment of the stream's history what it holds of
// writer id (GetWriterState), retrying what may pass until ctx is done.
func (c *Client) loadResume(ctx context.Context, scope, stream string, cfg writerConfig) (*resumeState, error) {
	el, ok := c.ctl.(epochLister)
	if !ok {
		return nil, fmt.Errorf("client: resume writer %q of %s/%s: %w", cfg.id, scope, stream, ErrNoHistory)
	}
	var epochs []api.EpochInfo
	bo := cfg.newBackoff()
	for attempt := 1; ; attempt++ {
		var err error
		if epochs, err = el.Epochs(ctx, scope, stream); err == nil {
			break
		}
		if !retriableController(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("client: resume writer %q of %s/%s: history: %w", cfg.id, scope, stream, err)
		}
		c.retrying(attempt, err)
		if serr := retry.Sleep(ctx, bo.NextBackOff()); serr != nil {
			return nil, fmt.Errorf("client: resume writer %q of %s/%s: %w; last failure: %w", cfg.id, scope, stream, serr, err)
		}
	}
	var segs []api.SegmentRange
	seen := map[string]bool{}
	for _, e := range epochs {
		for _, s := range e.Segments {
			if !seen[s.Segment] {
				seen[s.Segment] = true
				segs = append(segs, s)
			}
		}
	}
	out := make([]storedRange, len(segs))
	errs := make([]error, len(segs))
	gone := make([]bool, len(segs))
	sem := make(chan struct{}, resumeParallel)
	var wg sync.WaitGroup
	for i, s := range segs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			last, err := c.storedOf(ctx, s, wireWriterID(cfg.id, s), cfg)
			switch {
			case errors.Is(err, protocol.ErrNoSuchSegment):
				gone[i], last = true, protocol.NoEventNumber
			case err != nil:
				errs[i] = err
			}
			out[i] = storedRange{Low: s.KeyLow, High: s.KeyHigh, Last: last}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("client: resume writer %q of %s/%s: %w", cfg.id, scope, stream, err)
	}
	st := &resumeState{index: newResumeIndex(out)}
	for i, g := range gone {
		if g {
			st.gone = append(st.gone, segs[i].Segment)
		}
	}
	return st, nil
}

// storedOf asks the node of segment s what it holds of the wire writer id,
// retrying every failure but a missing segment and a refused request (a
// moved segment, a broken connection, a node that refuses connections
// while it restarts) with the writer's backoff until ctx is done; then
// the error names the segment and the last failure.
func (c *Client) storedOf(ctx context.Context, s api.SegmentRange, wireID string, cfg writerConfig) (int64, error) {
	bo := cfg.newBackoff()
	for attempt := 1; ; attempt++ {
		conn, err := c.SegmentConn(ctx, s.Segment)
		if err == nil {
			var last int64
			last, _, err = conn.WriterState(ctx, s.Segment, wireID)
			if err == nil {
				return last, nil
			}
			c.Invalidate(s.Segment, conn, err)
		} else {
			c.forget(s.Segment)
		}
		if permanentResume(err) {
			return 0, fmt.Errorf("segment %s: %w", s.Segment, err)
		}
		if cerr := ctx.Err(); cerr != nil {
			return 0, fmt.Errorf("segment %s: %w; last failure: %w", s.Segment, cerr, err)
		}
		c.retrying(attempt, fmt.Errorf("client: writer state in %s: %w", s.Segment, err))
		if serr := retry.Sleep(ctx, bo.NextBackOff()); serr != nil {
			return 0, fmt.Errorf("segment %s: %w; last failure: %w", s.Segment, serr, err)
		}
	}
}

// permanentResume reports whether a failure of storedOf cannot pass by
// being tried again.
func permanentResume(err error) bool {
	return errors.Is(err, protocol.ErrNoSuchSegment) ||
		errors.Is(err, protocol.ErrInvalidArgument) ||
		errors.Is(err, api.ErrInvalid) ||
		errors.Is(err, ctlclient.ErrInvalid) ||
		errors.Is(err, ctlclient.ErrNotFound) ||
		errors.Is(err, ErrClosed)
}

// wireWriterID is the writer id the node knows writer id by in segment s
// (see Writer).
func wireWriterID(id string, s api.SegmentRange) string {
	return fmt.Sprintf("%s/%d.%d", id, s.Number, s.Epoch)
}
