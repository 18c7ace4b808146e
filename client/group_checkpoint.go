package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sluice-streams/sluice/protocol/api"
)

// Checkpoint events and restoring a group from a checkpoint.
//
// A checkpoint of a reader group is delivered to each reader as an event:
// when a GroupReader's heartbeat finds a checkpoint pending for it, it
// tells the reader, whose next ReadNext returns an Event with Checkpoint
// set (before any further data event, also when it waits at the tail),
// taking the reader's position at that moment as its share of the
// checkpoint's cut. The next heartbeat reports that position, and the
// checkpoint completes when every reader has reported (or left: a reader
// that closes or is expired counts at the position it left at).

// Errors of checkpoints.
var (
	// ErrNoCheckpoint: the group keeps no completed checkpoint of that
	// name (never taken, still running, or one of the oldest beyond
	// maxCheckpoints).
	ErrNoCheckpoint = errors.New("client: no such checkpoint")
	// ErrCheckpointAborted: a checkpoint InitiateCheckpoint started was
	// dropped before it completed (a reset of the group drops the
	// checkpoint in progress); it will never complete.
	ErrCheckpointAborted = errors.New("client: checkpoint aborted")
)

// checkpointReport is a reader's share of a checkpoint: its position when
// it returned the checkpoint event.
type checkpointReport struct {
	Name      string        `json:"name"`
	Positions api.StreamCut `json:"positions"`
}

// readerCheckpoint is the Reader's side, under Reader.mu.
type readerCheckpoint struct {
	pending string            // to deliver on the next ReadNext
	last    string            // the last one asked of this reader
	done    *checkpointReport // delivered, not yet taken by the heartbeat
}

// takeCheckpoint returns the checkpoint event to deliver, if any, and
// records the reader's position at it. Owner only (ReadNext).
func (r *Reader) takeCheckpoint() (Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := r.mu.ckpt.pending
	if name == "" {
		return Event{}, false
	}
	pos := r.mu.tracker.cut()
	r.mu.ckpt.pending = ""
	r.mu.ckpt.done = &checkpointReport{Name: name, Positions: maps.Clone(pos)}
	return Event{Checkpoint: name, Position: Position{&posNode{full: pos}}}, true
}

// askCheckpoint makes the reader deliver checkpoint name, unless it was
// asked already.
func (r *Reader) askCheckpoint(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != r.mu.ckpt.last {
		r.mu.ckpt.pending, r.mu.ckpt.last = name, name
	}
}

// settleCheckpoint records that checkpoint name was reported for the
// reader without its event (the reader had finished): it is not
// delivered, nor asked again.
func (r *Reader) settleCheckpoint(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.ckpt.pending == name {
		r.mu.ckpt.pending = ""
	}
	r.mu.ckpt.last = name
}

// takeCheckpointReport returns the checkpoint the reader delivered since
// the last call, if any.
func (r *Reader) takeCheckpointReport() *checkpointReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.mu.ckpt.done
	r.mu.ckpt.done = nil
	return c
}

// dropCheckpoint forgets a checkpoint asked of the reader (a reset, or
// the reader left the group's state).
func (r *Reader) dropCheckpoint() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.ckpt = readerCheckpoint{}
}

// checkpointFor returns the checkpoint pending for reader id, if any.
func (s *GroupState) checkpointFor(id string) string {
	if cp := s.Checkpoint; cp != nil && slices.Contains(cp.Pending, id) {
		return cp.Name
	}
	return ""
}

// Checkpoint returns the cut of the group's completed checkpoint name
// (the group keeps the last few, maxCheckpoints), or ErrNoCheckpoint. It
// blocks until the controller answers or ctx is done and tries once.
func (g *ReaderGroup) Checkpoint(ctx context.Context, name string) (api.StreamCut, error) {
	s, _, _, err := g.State(ctx)
	if err != nil {
		return nil, err
	}
	cut, ok := s.checkpointCut(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q in reader group %s/%s", ErrNoCheckpoint, name, g.scope, g.name)
	}
	return maps.Clone(cut), nil
}

// ResetToCheckpoint makes the group read from its completed checkpoint
// name, as ResetToCut does with its cut: the events after the checkpoint
// are read again, those before it not. ErrNoCheckpoint if the group keeps
// no such checkpoint (nothing changes). It retries compare-and-set
// conflicts until ctx is done, and nothing else.
func (g *ReaderGroup) ResetToCheckpoint(ctx context.Context, name string) error {
	return g.update(ctx, func(s *GroupState) error {
		cut, ok := s.checkpointCut(name)
		if !ok {
			return fmt.Errorf("%w: %q in reader group %s/%s", ErrNoCheckpoint, name, g.scope, g.name)
		}
		s.reset(maps.Clone(cut))
		return nil
	})
}
