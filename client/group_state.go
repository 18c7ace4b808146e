package client

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/sluice-streams/sluice/protocol/api"
)

// Errors of reader groups.
var (
	// ErrNotMember: the reader is not (or no longer) in the group's state:
	// it left, or the others expired it after its session timeout.
	ErrNotMember = errors.New("client: reader is not a member of the group")
	// ErrCheckpointInProgress: another checkpoint of the group is running.
	ErrCheckpointInProgress = errors.New("client: a checkpoint of the group is in progress")
)

// maxCheckpoints is how many completed checkpoints a group's state keeps.
const maxCheckpoints = 8

// GroupState is a reader group's state, the JSON the controller stores
// opaquely (controller/readergroups.go). Its transitions below are pure:
// they take the time and what a reader observed, and change the state;
// the GroupReader does the I/O (read the state, apply a transition, write
// it back with compare-and-set, retry on conflict).
//
// Every segment the group still has to read is in exactly one place: a
// reader's Segments (that reader reads it, from the offset given, which is
// its last committed position), Unassigned (nobody reads it; the next
// reader under its fair share takes it from that offset), or Ended (read
// to its end; kept until all predecessors of its successors have ended,
// then the successors enter Unassigned at offset 0).
type GroupState struct {
	// Gen is bumped by a reset: readers drop what they read before it.
	Gen        int64                   `json:"gen"`
	Readers    map[string]*GroupMember `json:"readers"`
	Unassigned map[string]int64        `json:"unassigned"`
	Ended      map[string]EndedSegment `json:"ended"`
	// Checkpoint is the checkpoint in progress, if any.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// Checkpoints are the last completed ones, oldest first.
	Checkpoints []NamedCut `json:"checkpoints,omitempty"`
	// EndCut, if set, is where the group's reading ends (GroupTo): every
	// reader reads its segments up to it and no further. States written
	// before it existed have none: the group reads on for ever.
	EndCut api.StreamCut `json:"endCut,omitempty"`
}

// GroupMember is one reader of a group.
type GroupMember struct {
	// LastSeen is the reader's last heartbeat, ms since the Unix epoch by
	// the reader's clock.
	LastSeen int64 `json:"lastSeen"`
	// Segments are the segments it reads -> its last committed position.
	Segments map[string]int64 `json:"segments"`
}

// EndedSegment is a segment read to its end, with its successors (empty:
// sealed with its stream).
type EndedSegment struct {
	End        int64           `json:"end"`
	Successors []api.Successor `json:"successors"`
}

// Checkpoint is a checkpoint in progress: the readers that have not
// reported yet, and the positions of those that have.
type Checkpoint struct {
	Name      string        `json:"name"`
	Pending   []string      `json:"pending"`
	Positions api.StreamCut `json:"positions"`
}

// NamedCut is a completed checkpoint.
type NamedCut struct {
	Name string        `json:"name"`
	Cut  api.StreamCut `json:"cut"`
}

// newGroupState returns the state of a group starting at cut.
func newGroupState(cut api.StreamCut) *GroupState {
	s := &GroupState{}
	s.norm()
	maps.Copy(s.Unassigned, cut)
	return s
}

// norm makes nil maps empty (after decoding).
func (s *GroupState) norm() {
	if s.Readers == nil {
		s.Readers = map[string]*GroupMember{}
	}
	if s.Unassigned == nil {
		s.Unassigned = map[string]int64{}
	}
	if s.Ended == nil {
		s.Ended = map[string]EndedSegment{}
	}
	for _, m := range s.Readers {
		if m.Segments == nil {
			m.Segments = map[string]int64{}
		}
	}
}

// groupReport is what a reader tells the group on a heartbeat.
type groupReport struct {
	// Positions: the reader's position in each segment it reads.
	Positions api.StreamCut
	// Released: segments it stopped reading, at the position it stopped.
	Released api.StreamCut
	// Ended: segments it read to their end.
	Ended map[string]EndedSegment
	// Checkpoint: the reader's position when it returned the checkpoint
	// event of the checkpoint pending for it, once it has.
	Checkpoint *checkpointReport
}

// join adds reader id. A reader already there (a restart under the same
// id) first gives its segments back, at their committed positions.
func (s *GroupState) join(id string, now int64) {
	if _, ok := s.Readers[id]; ok {
		s.leave(id, nil)
	}
	s.Readers[id] = &GroupMember{LastSeen: now, Segments: map[string]int64{}}
}

// leave removes reader id; its segments go to Unassigned at positions
// (where given and owned) or at their committed positions.
func (s *GroupState) leave(id string, positions api.StreamCut) {
	m, ok := s.Readers[id]
	if !ok {
		return
	}
	for seg, off := range m.Segments {
		if p, ok := positions[seg]; ok && p >= off {
			off = p
		}
		s.Unassigned[seg] = off
	}
	delete(s.Readers, id)
	if cp := s.Checkpoint; cp != nil {
		cp.Pending = slices.DeleteFunc(cp.Pending, func(p string) bool { return p == id })
		s.maybeCompleteCheckpoint()
	}
	s.startSuccessors()
}

// expire removes the readers other than self whose last heartbeat is
// older than now-timeout, as leave does without positions: their segments
// continue from their last committed positions, so the events they read
// after that are read again (at least once). It returns them, sorted.
func (s *GroupState) expire(self string, now, timeout int64) []string {
	var gone []string
	for id, m := range s.Readers {
		if id != self && m.LastSeen < now-timeout {
			gone = append(gone, id)
		}
	}
	sort.Strings(gone)
	for _, id := range gone {
		s.leave(id, nil)
	}
	return gone
}

// report records reader id's heartbeat at now: its positions, the
// segments it released and those it read to their end (each only if the
// state still gives it to the reader), and its share of the checkpoint
// pending for it once it has returned the checkpoint event (r.Checkpoint;
// until then the reader stays pending). ErrNotMember if the reader is not
// in the group.
func (s *GroupState) report(id string, now int64, r groupReport) error {
	m, ok := s.Readers[id]
	if !ok {
		return ErrNotMember
	}
	m.LastSeen = now
	for seg, off := range r.Positions {
		if cur, ok := m.Segments[seg]; ok && off > cur {
			m.Segments[seg] = off
		}
	}
	for seg, off := range r.Released {
		if _, ok := m.Segments[seg]; ok {
			delete(m.Segments, seg)
			s.Unassigned[seg] = off
		}
	}
	for seg, e := range r.Ended {
		if _, ok := m.Segments[seg]; ok {
			delete(m.Segments, seg)
			s.Ended[seg] = e
		}
	}
	if cp := s.Checkpoint; cp != nil && slices.Contains(cp.Pending, id) && r.Checkpoint != nil && r.Checkpoint.Name == cp.Name {
		// Its position at the checkpoint event, for the segments still in
		// the state (the assignment is frozen, so they are the reader's,
		// or ended by it since; truncation may have removed some).
		for seg, off := range r.Checkpoint.Positions {
			if s.placed(seg) {
				cp.Positions[seg] = off
			}
		}
		cp.Pending = slices.DeleteFunc(cp.Pending, func(p string) bool { return p == id })
		s.maybeCompleteCheckpoint()
	}
	s.startSuccessors()
	return nil
}

// groupTruncation is a truncation a reader met: a read of Segment found
// it truncated or deleted past the reader. Drop are the segments
// truncation deleted or cut that the reader found on its way (Segment
// among them), Head the part of the stream's head cut that replaces them
// (Segment itself at a higher offset if it is still there).
type groupTruncation struct {
	Segment string        `json:"segment"`
	Drop    []string      `json:"drop"`
	Head    api.StreamCut `json:"head"`
}

// truncated records the truncations reader id met, each only if the state
// still gives Segment to the reader (else whoever holds it now meets the
// truncation itself): the dropped segments leave every reader (truncation
// removed them from the stream: a reader that holds one, not having met
// the truncation yet, would only find it gone), Unassigned and Ended (and
// a running checkpoint's positions), and each segment of Head that is
// nowhere in the state yet becomes unassigned at its head offset, to be
// handed out by the plan like any other. The reader takes nothing by
// itself: a head segment another reader already holds (it met the same
// truncation first) is not placed twice. ErrNotMember if the reader is not
// in the group.
func (s *GroupState) truncated(id string, ts []groupTruncation) error {
	m, ok := s.Readers[id]
	if !ok {
		return ErrNotMember
	}
	for _, t := range ts {
		if _, ok := m.Segments[t.Segment]; !ok {
			continue
		}
		for _, seg := range append([]string{t.Segment}, t.Drop...) {
			for _, r := range s.Readers {
				delete(r.Segments, seg)
			}
			delete(s.Unassigned, seg)
			delete(s.Ended, seg)
			if cp := s.Checkpoint; cp != nil {
				delete(cp.Positions, seg)
			}
		}
		for seg, off := range t.Head {
			if !s.placed(seg) {
				s.Unassigned[seg] = off
			}
		}
	}
	s.startSuccessors()
	return nil
}

// fairShare is the most segments one reader should read:
// ceil(segments to read / readers).
func (s *GroupState) fairShare() int {
	if len(s.Readers) == 0 {
		return 0
	}
	total := len(s.Unassigned)
	for _, m := range s.Readers {
		total += len(m.Segments)
	}
	return (total + len(s.Readers) - 1) / len(s.Readers)
}

// plan returns what reader id should do now: the segments to release
// (it holds more than its fair share: the last ones in segment order) or
// to acquire (it holds fewer: the first unassigned ones). Nothing while a
// checkpoint is in progress: the assignment stays still until every
// reader has reported, so the checkpoint's cut is consistent.
func (s *GroupState) plan(id string) (release, acquire []string) {
	m, ok := s.Readers[id]
	if !ok || s.Checkpoint != nil {
		return nil, nil
	}
	share := s.fairShare()
	held := slices.Collect(maps.Keys(m.Segments))
	sortSegments(held)
	if len(held) > share {
		return held[share:], nil
	}
	free := slices.Collect(maps.Keys(s.Unassigned))
	sortSegments(free)
	if n := share - len(held); len(free) > n {
		free = free[:n]
	}
	return nil, free
}

// acquire moves segs from Unassigned to reader id and returns their
// offsets.
func (s *GroupState) acquire(id string, segs []string) api.StreamCut {
	m := s.Readers[id]
	out := api.StreamCut{}
	for _, seg := range segs {
		off, ok := s.Unassigned[seg]
		if !ok || m == nil {
			continue
		}
		delete(s.Unassigned, seg)
		m.Segments[seg] = off
		out[seg] = off
	}
	return out
}

// startSuccessors moves the successors of ended segments to Unassigned
// once every predecessor linked to them (through shared successors, the
// rule of segmentTracker) has ended; not while a checkpoint is in
// progress.
func (s *GroupState) startSuccessors() {
	if s.Checkpoint != nil {
		return
	}
	names := slices.Collect(maps.Keys(s.Ended))
	sortSegments(names)
	for _, seg := range names {
		if _, still := s.Ended[seg]; !still {
			continue
		}
		if e := s.Ended[seg]; len(e.Successors) > 0 && s.allPlaced(e.Successors) {
			// Its successors were placed by a truncation past the
			// segments it waited for: nothing left to start.
			delete(s.Ended, seg)
			continue
		}
		preds := map[string]bool{seg: true}
		next := map[string]bool{}
		queue := []string{seg}
		ready := true
		for len(queue) > 0 && ready {
			p := queue[0]
			queue = queue[1:]
			e, ok := s.Ended[p]
			if !ok {
				ready = false
				break
			}
			for _, x := range e.Successors {
				next[x.Segment.Segment] = true
				for _, q := range x.Predecessors {
					if !preds[q] {
						preds[q] = true
						queue = append(queue, q)
					}
				}
			}
		}
		if !ready || len(next) == 0 {
			continue
		}
		for p := range preds {
			delete(s.Ended, p)
		}
		for n := range next {
			if !s.placed(n) {
				s.Unassigned[n] = 0
			}
		}
	}
}

// allPlaced reports whether every successor is in the state already.
func (s *GroupState) allPlaced(succ []api.Successor) bool {
	for _, x := range succ {
		if !s.placed(x.Segment.Segment) {
			return false
		}
	}
	return true
}

// placed reports whether seg is anywhere in the state already.
func (s *GroupState) placed(seg string) bool {
	if _, ok := s.Unassigned[seg]; ok {
		return true
	}
	if _, ok := s.Ended[seg]; ok {
		return true
	}
	for _, m := range s.Readers {
		if _, ok := m.Segments[seg]; ok {
			return true
		}
	}
	return false
}

// startCheckpoint starts checkpoint name: every reader reports its
// position on its next heartbeat. With no readers it completes at once.
func (s *GroupState) startCheckpoint(name string) error {
	if s.Checkpoint != nil {
		return fmt.Errorf("%w: %s", ErrCheckpointInProgress, s.Checkpoint.Name)
	}
	if _, ok := s.checkpointCut(name); ok {
		return fmt.Errorf("%w: checkpoint %q exists", api.ErrInvalid, name)
	}
	pending := slices.Collect(maps.Keys(s.Readers))
	sort.Strings(pending)
	s.Checkpoint = &Checkpoint{Name: name, Pending: pending, Positions: api.StreamCut{}}
	s.maybeCompleteCheckpoint()
	return nil
}

// maybeCompleteCheckpoint completes the checkpoint once every reader has
// reported: its cut is the ended segments at their ends, overridden by
// the unassigned ones at their offsets, overridden by the positions the
// readers reported (the assignment was frozen meanwhile, so every segment
// a reader held is in exactly one report).
func (s *GroupState) maybeCompleteCheckpoint() {
	cp := s.Checkpoint
	if cp == nil || len(cp.Pending) > 0 {
		return
	}
	cut := api.StreamCut{}
	for seg, e := range s.Ended {
		cut[seg] = e.End
	}
	maps.Copy(cut, s.Unassigned)
	maps.Copy(cut, cp.Positions)
	s.Checkpoints = append(s.Checkpoints, NamedCut{Name: cp.Name, Cut: cut})
	if len(s.Checkpoints) > maxCheckpoints {
		s.Checkpoints = s.Checkpoints[len(s.Checkpoints)-maxCheckpoints:]
	}
	s.Checkpoint = nil
	s.startSuccessors()
}

// checkpointCut returns the cut of a completed checkpoint.
func (s *GroupState) checkpointCut(name string) (api.StreamCut, bool) {
	for _, c := range s.Checkpoints {
		if c.Name == name {
			return c.Cut, true
		}
	}
	return nil, false
}

// reset makes the group read from cut: every reader drops its segments
// (Gen changes, so they drop what they read locally too), and the cut's
// segments become unassigned.
func (s *GroupState) reset(cut api.StreamCut) {
	s.Gen++
	for _, m := range s.Readers {
		m.Segments = map[string]int64{}
	}
	s.Unassigned = maps.Clone(cut)
	if s.Unassigned == nil {
		s.Unassigned = map[string]int64{}
	}
	s.Ended = map[string]EndedSegment{}
	s.Checkpoint = nil
}

// Done reports whether the group has read everything: the stream is
// sealed and every segment is read to its end.
func (s *GroupState) Done() bool {
	if len(s.Unassigned) > 0 || len(s.Ended) == 0 {
		return false
	}
	for _, m := range s.Readers {
		if len(m.Segments) > 0 {
			return false
		}
	}
	for _, e := range s.Ended {
		if len(e.Successors) > 0 {
			return false
		}
	}
	return true
}

// Position returns the group's position as a stream cut: every segment
// at its committed, unassigned or end offset.
func (s *GroupState) Position() api.StreamCut {
	cut := api.StreamCut{}
	for seg, e := range s.Ended {
		cut[seg] = e.End
	}
	maps.Copy(cut, s.Unassigned)
	for _, m := range s.Readers {
		maps.Copy(cut, m.Segments)
	}
	return cut
}
