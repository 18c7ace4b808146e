package container

import (
	"fmt"
	"sort"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluice-streams/sluice/node/rates"
	"github.com/sluice-streams/sluice/node/wal"
	"github.com/sluice-streams/sluice/protocol"
)

// extent is one append block's place in a segment and in the log. A
// segment's extents are contiguous and sorted: each starts where the
// previous one ends.
type extent struct {
	offset  int64    // segment offset of the block's first byte
	length  int64    // bytes of data
	addr    wal.Addr // the append record that holds the data
	dataOff int32    // where the data starts in that record's payload
	// appended is when this process logged or replayed the block (unix
	// nanoseconds): the age of the oldest untiered block drives tiering.
	// It is not checkpointed; after a restart it counts from the restart.
	appended int64
	// writer is the block's writer ("" if none, or not the segment's own:
	// blocks merged in from a transaction) and prev that writer's event
	// number before the block (-1: none), so that a recovery record can
	// give each writer its number as of the segment's tiered end
	// (recovery.go).
	writer string
	prev   int64
}

func (e extent) end() int64 { return e.offset + e.length }

// chunk is a run of a segment's bytes kept in tier 2 as one chunk file,
// named for its offset. A segment's chunks are contiguous and sorted, and
// its extents (the bytes only in the log) begin where they end.
type chunk struct {
	offset int64
	length int64
	marks  []ChunkMark // where its file can be read from; none: read it whole
}

func (c chunk) end() int64 { return c.offset + c.length }

// segment is a segment's metadata. The fields above the line are the
// durable state (checkpointed and rebuilt by replay); the ones below it
// exist only in a running container.
type segment struct {
	id       uint64
	name     string
	start    int64 // first readable offset (after truncation)
	length   int64 // offset after the last append applied
	sealed   bool
	attrs    map[string]int64 // the attributes clients set
	writers  map[string]int64 // writer id -> its last event number, apart from attrs
	chunks   []chunk          // the bytes in tier 2, below the extents
	extents  []extent         // the bytes only in the log
	modified int64            // unix nanoseconds of the last change seen by this process
	meter    rates.Meter      // append rates in this process (rates.go); not logged or checkpointed
	appended int64            // events AppendAsync counted in this process; a merge adds them to its target's meter

	// ---
	durable     int64         // readers see [start, durable): every byte below is fsynced
	recorded    int64         // every byte kept below it is in the newest recovery record this process wrote
	sealDurable bool          // the seal record is fsynced: readers may see the end
	changed     chan struct{} // closed when durable, sealDurable or existence changes; nil if nobody waits
	// hints are offsets recently found to be event boundaries (0 is one),
	// where a boundary check may start walking instead of at its block's
	// start (boundary.go); next is the one to replace.
	hints struct {
		at   [boundaryHints]int64
		next int
	}
}

// notifyLocked wakes the readers waiting on s.
func (s *segment) notifyLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// markDurableLocked records that every byte below end is fsynced.
func (s *segment) markDurableLocked(end int64) {
	if end > s.durable {
		s.durable = end
		s.notifyLocked()
	}
}

// tieredEnd is the offset below which every byte still kept is in tier 2.
func (s *segment) tieredEnd() int64 {
	if len(s.extents) > 0 {
		return s.extents[0].offset
	}
	return s.length
}

// findChunk returns the index of the chunk holding offset.
func (s *segment) findChunk(offset int64) int {
	return sort.Search(len(s.chunks), func(i int) bool { return s.chunks[i].end() > offset })
}

// findExtent returns the index of the extent holding offset.
func (s *segment) findExtent(offset int64) int {
	return sort.Search(len(s.extents), func(i int) bool { return s.extents[i].end() > offset })
}

// state is a container's metadata: the deterministic core that both live
// operations and replay change, through the apply methods.
type state struct {
	byName map[string]*segment
	byID   map[uint64]*segment
	nextID uint64
	// gone names deleted segments whose tier-2 chunks may remain, until a
	// forget record says they were removed. Only kept when tiering is on.
	gone    map[string]bool
	tiering bool // set from the container's configuration, not stored
	// untiered is the bytes logged that are not in tier 2, over all
	// segments (kept up to date by the apply methods, through track).
	untiered int64
}

// track returns a function that adds the change in s's untiered bytes
// since the call to st.untiered.
func (st *state) track(s *segment) func() {
	before := s.length - s.tieredEnd()
	return func() { st.untiered += s.length - s.tieredEnd() - before }
}

func newState() state {
	return state{byName: map[string]*segment{}, byID: map[uint64]*segment{}, nextID: 1, gone: map[string]bool{}}
}

func (st *state) applyCreate(r createRecord, now int64) *segment {
	s := &segment{id: r.ID, name: r.Name, attrs: map[string]int64{}, writers: map[string]int64{}, modified: now}
	for k, v := range r.Attrs {
		s.attrs[k] = v
	}
	st.byName[r.Name] = s
	st.byID[r.ID] = s
	if r.ID >= st.nextID {
		st.nextID = r.ID + 1
	}
	return s
}

// applyAppend adds a block logged at time logged (the age tiering counts
// from) and applied at now.
func (st *state) applyAppend(s *segment, r appendRecord, addr wal.Addr, logged, now int64) {
	// An appended block is only in the log: it adds its bytes to the
	// untiered count (done here, not through track, on the hot path).
	st.untiered += int64(len(r.data))
	e := extent{offset: s.length, length: int64(len(r.data)), addr: addr, dataOff: int32(r.dataOff), appended: logged, prev: -1}
	if r.writer != "" {
		e.writer = r.writer
		if prev, ok := s.writers[r.writer]; ok {
			e.prev = prev
		}
		s.writers[r.writer] = r.eventNumber
	}
	s.extents = append(s.extents, e)
	s.length += int64(len(r.data))
	s.modified = now
}

func (st *state) applySeal(s *segment, now int64) {
	s.sealed = true
	s.modified = now
}

func (st *state) applyTruncate(s *segment, offset int64, now int64) {
	if offset <= s.start {
		return
	}
	defer st.track(s)()
	s.start = offset
	// Drop the chunks and extents wholly below the new start (the storage
	// writer removes the chunks' files).
	s.chunks = append([]chunk(nil), s.chunks[s.findChunk(offset):]...)
	s.extents = append([]extent(nil), s.extents[s.findExtent(offset):]...)
	s.modified = now
}

func (st *state) applyDelete(s *segment) {
	st.untiered -= s.length - s.tieredEnd()
	delete(st.byName, s.name)
	delete(st.byID, s.id)
	if st.tiering && !isTransaction(s.name) {
		st.gone[s.name] = true
	}
	s.notifyLocked()
}

// applyTiered records that the chunk r describes is in tier 2: it takes
// the place of the extents it covers, which must be exactly the first
// ones.
func (st *state) applyTiered(s *segment, r tieredRecord) error {
	marks, err := decodeMarks(r.Marks, r.Offset, r.Length)
	if err != nil {
		return fmt.Errorf("chunk of segment %q at offset %d: %w", s.name, r.Offset, err)
	}
	if r.Offset != s.tieredEnd() {
		return fmt.Errorf("chunk of segment %q at offset %d, but its untiered bytes start at %d", s.name, r.Offset, s.tieredEnd())
	}
	n, covered := 0, int64(0)
	for n < len(s.extents) && covered < r.Length {
		covered += s.extents[n].length
		n++
	}
	if covered != r.Length || r.Length <= 0 {
		return fmt.Errorf("chunk of segment %q at offset %d: length %d does not end at a block boundary", s.name, r.Offset, r.Length)
	}
	defer st.track(s)()
	s.extents = append([]extent(nil), s.extents[n:]...)
	s.chunks = append(s.chunks, chunk{offset: r.Offset, length: r.Length, marks: marks})
	return nil
}

func (st *state) applyMerge(target, source *segment, now int64) {
	done := st.track(target)
	base := target.length
	for _, e := range source.extents {
		e.offset = base + e.offset
		e.writer, e.prev = "", -1 // the transaction's writers are not the target's
		target.extents = append(target.extents, e)
	}
	target.length += source.length
	target.modified = now
	done()
	st.applyDelete(source)
}

func (st *state) applyAttributes(s *segment, r attributesRecord, now int64) {
	for k, v := range r.Set {
		s.attrs[k] = v
	}
	for _, k := range r.Remove {
		delete(s.attrs, k)
	}
	s.modified = now
}

// replay applies one record read back from the log. Every record must fit
// the state it finds; a record that does not is damage the checksums did
// not catch (or a bug), and recovery stops.
func (st *state) replay(rec wal.Record, now, logged int64) error {
	switch rec.Type {
	case recAppend:
		r, err := decodeAppend(rec.Payload)
		if err != nil {
			return err
		}
		s, err := st.replaySegment(r.segID)
		if err != nil {
			return err
		}
		if r.offset != s.length {
			return fmt.Errorf("append to segment %q at offset %d, but its length is %d", s.name, r.offset, s.length)
		}
		st.applyAppend(s, r, rec.Addr, logged, now)
	case recCreate:
		var r createRecord
		if err := msgpack.Unmarshal(rec.Payload, &r); err != nil {
			return fmt.Errorf("decode create record: %w", err)
		}
		if _, ok := st.byName[r.Name]; ok {
			return fmt.Errorf("create of segment %q, which exists", r.Name)
		}
		st.applyCreate(r, now)
	case recSeal:
		var r sealRecord
		if err := msgpack.Unmarshal(rec.Payload, &r); err != nil {
			return fmt.Errorf("decode seal record: %w", err)
		}
		s, err := st.replaySegment(r.ID)
		if err != nil {
			return err
		}
		if r.Length != s.length {
			return fmt.Errorf("seal of segment %q at length %d, but its length is %d", s.name, r.Length, s.length)
		}
		st.applySeal(s, now)
	case recTruncate:
		var r truncateRecord
		if err := msgpack.Unmarshal(rec.Payload, &r); err != nil {
			return fmt.Errorf("decode truncate record: %w", err)
		}
		s, err := st.replaySegment(r.ID)
		if err != nil {
			return err
		}
		st.applyTruncate(s, r.Offset, now)
	case recDelete:
		var r deleteRecord
		if err := msgpack.Unmarshal(rec.Payload, &r); err != nil {
			return fmt.Errorf("decode delete record: %w", err)
		}
		s, err := st.replaySegment(r.ID)
		if err != nil {
			return err
		}
		st.applyDelete(s)
	case recMerge:
		var r mergeRecord
		if err := msgpack.Unmarshal(rec.Payload, &r); err != nil {
			return fmt.Errorf("decode merge record: %w", err)
		}
		t, err := st.replaySegment(r.Target)
		if err != nil {
			return err
		}
		s, err := st.replaySegment(r.Source)
		if err != nil {
			return err
		}
		if t.length != r.Offset {
			return fmt.Errorf("merge into segment %q at offset %d, but its length is %d", t.name, r.Offset, t.length)
		}
		st.applyMerge(t, s, now)
	case recTiered:
		var r tieredRecord
		if err := msgpack.Unmarshal(rec.Payload, &r); err != nil {
			return fmt.Errorf("decode tiered record: %w", err)
		}
		s, err := st.replaySegment(r.ID)
		if err != nil {
			return err
		}
		return st.applyTiered(s, r)
	case recForget:
		var r forgetRecord
		if err := msgpack.Unmarshal(rec.Payload, &r); err != nil {
			return fmt.Errorf("decode forget record: %w", err)
		}
		delete(st.gone, r.Name)
	case recAttributes:
		var r attributesRecord
		if err := msgpack.Unmarshal(rec.Payload, &r); err != nil {
			return fmt.Errorf("decode attributes record: %w", err)
		}
		s, err := st.replaySegment(r.ID)
		if err != nil {
			return err
		}
		st.applyAttributes(s, r, now)
	default:
		return fmt.Errorf("unknown record type %d", rec.Type)
	}
	return nil
}

func (st *state) replaySegment(id uint64) (*segment, error) {
	s, ok := st.byID[id]
	if !ok {
		return nil, fmt.Errorf("record for segment id %d, which does not exist", id)
	}
	return s, nil
}

// isTransaction reports whether name is a transaction's shadow segment;
// those are never tiered (a commit merges them into their parent).
func isTransaction(name string) bool { return protocol.ParentSegment(name) != name }
