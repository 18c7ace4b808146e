package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Bounded reads: a Reader (ToCut) or a reader group (GroupTo) that stops
// at an end cut. A segment of the end cut is read up to its offset there,
// which must be an event boundary; a segment wholly before the end cut is
// read to its end and its successors are followed; a segment after the end
// cut is never read (the reader meets one only through a segment of the
// end cut, whose successors it does not follow; a truncation's head cut is
// followed only up to the end cut's segments, and one of those whose head
// lies at or past its end offset, or that truncation deleted, ends at its
// end offset: see Reader.relocate). When everything before the end cut has
// been returned, ReadNext returns ErrEndOfSlice.

// ErrEndOfSlice is returned by ReadNext once every event before the end
// cut (ToCut, GroupTo) has been returned. errors.Is(ErrEndOfSlice,
// ErrEndOfStream) holds, so a loop that stops at the end of a sealed
// stream stops at the end cut too.
var ErrEndOfSlice error = endOfSlice{}

type endOfSlice struct{}

func (endOfSlice) Error() string {
	return "client: end of slice: every event before the end cut was returned"
}

func (endOfSlice) Is(target error) bool { return target == ErrEndOfStream }

// ToCut makes the Reader stop at end, a consistent stream cut of its
// stream at or after the start: every event before end is returned, none
// at or after it, then ReadNext returns ErrEndOfSlice. An end offset must
// be an event boundary: one inside an event makes ReadNext fail, when the
// reader gets there, with an error wrapping protocol.ErrNotEventBoundary
// (the events before it were returned). NewReader refuses an end cut of
// another stream, one that is not consistent, or one before the start.
func ToCut(end api.StreamCut) ReaderOption {
	return func(c *readerConfig) { c.end = end }
}

// segmentsBetween is the controller route that checks cuts against each
// other; *ctlclient.Client has it.
type segmentsBetween interface {
	SegmentsBetween(ctx context.Context, scope, stream string, from, to api.StreamCut) ([]api.SegmentRange, error)
}

// checkEndCut checks that end is a consistent cut of scope/stream at or
// after start (the controller's SegmentsBetween says so, when the Client's
// Controller has it).
func checkEndCut(ctx context.Context, ctl Controller, scope, stream string, start, end api.StreamCut) error {
	if len(end) == 0 {
		return fmt.Errorf("%w: end cut: empty stream cut", api.ErrInvalid)
	}
	if err := end.Validate(); err != nil {
		return fmt.Errorf("end cut: %w", err)
	}
	for s := range end {
		q, err := protocol.ParseSegmentName(s)
		if err != nil || q.Scope != scope || q.Stream != stream {
			return fmt.Errorf("%w: end cut: %s is not a segment of %s/%s", api.ErrInvalid, s, scope, stream)
		}
	}
	if v, ok := ctl.(segmentsBetween); ok {
		if _, err := v.SegmentsBetween(ctx, scope, stream, start, end); err != nil {
			return fmt.Errorf("end cut %s from %s: %w", end, start, err)
		}
	}
	return nil
}

// atEndCut handles sr when the reader stands at or beyond its offset in
// the end cut: the segment ends there (no successors: what follows is
// after the cut). It reports whether sr ended, and an error when the
// reader stands beyond the end offset (the end cut is inside an event).
// Owner only.
func (r *Reader) atEndCut(sr *segRead) (bool, error) {
	e, ok := r.cfg.end[sr.name]
	if !ok {
		return false, nil
	}
	held := sr.bufOff + int64(len(sr.buf))
	switch {
	case sr.bufOff == e:
		sr.buf, sr.pend, sr.eos, sr.succs = nil, nil, true, []api.Successor{}
		r.end(sr)
		return true, nil
	case sr.bufOff > e:
		return false, fmt.Errorf("client: end cut %s=%d is inside an event (the reader stands at %d): %w", sr.name, e, sr.bufOff, protocol.ErrNotEventBoundary)
	}
	if sr.eos && len(sr.buf) == 0 {
		return false, fmt.Errorf("%w: end cut %s=%d lies beyond the segment's end at %d", api.ErrInvalid, sr.name, e, sr.bufOff)
	}
	if _, _, err := protocol.NextEvent(sr.buf); errors.Is(err, io.ErrUnexpectedEOF) && held >= e {
		// The event at bufOff is not whole in the bytes up to e.
		return false, fmt.Errorf("client: end cut %s=%d is inside an event (it begins at %d): %w", sr.name, e, sr.bufOff, protocol.ErrNotEventBoundary)
	}
	return false, nil
}

// eventPastEnd reports whether the next event of sr, ending at next, runs
// past sr's offset in the end cut.
func (r *Reader) eventPastEnd(sr *segRead, next int64) error {
	if e, ok := r.cfg.end[sr.name]; ok && next > e {
		return fmt.Errorf("client: end cut %s=%d is inside an event (it spans %d..%d): %w", sr.name, e, sr.bufOff, next, protocol.ErrNotEventBoundary)
	}
	return nil
}

// fetchPastEnd reports whether a fetch of sr from off would read only
// bytes at or after its end-cut offset.
func (r *Reader) fetchPastEnd(sr *segRead, off int64) bool {
	e, ok := r.cfg.end[sr.name]
	return ok && off >= e
}

// endErr is what ReadNext returns once nothing is left to read.
func (r *Reader) endErr() error {
	if r.cfg.end != nil {
		return ErrEndOfSlice
	}
	return ErrEndOfStream
}

// checkResetCut checks a reset's cut against the group's end cut, if it
// has one: the cut must not lie after it.
func (g *ReaderGroup) checkResetCut(ctx context.Context, cut api.StreamCut) error {
	s, stream, _, err := g.State(ctx)
	if err != nil || s.EndCut == nil || g.c == nil {
		return err
	}
	scope, name, _ := strings.Cut(stream, "/")
	if err := checkEndCut(ctx, g.c.ctl, scope, name, cut, s.EndCut); err != nil {
		return fmt.Errorf("client: reset reader group %s/%s: %w", g.scope, g.name, err)
	}
	return nil
}
