package container

import (
	"fmt"
	"sort"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluice-streams/sluice/node/wal"
)

// extent is one append block's place in a segment and in the log. A
// segment's extents are contiguous and sorted: each starts where the
// previous one ends.
type extent struct {
	offset  int64    // segment offset of the block's first byte
	length  int64    // bytes of data
	addr    wal.Addr // the append record that holds the data
	dataOff int32    // where the data starts in that record's payload
}

func (e extent) end() int64 { return e.offset + e.length }

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
	extents  []extent
	modified int64 // unix nanoseconds of the last change seen by this process

	// ---
	durable     int64         // readers see [start, durable): every byte below is fsynced
	sealDurable bool          // the seal record is fsynced: readers may see the end
	changed     chan struct{} // closed when durable, sealDurable or existence changes; nil if nobody waits
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
}

func newState() state {
	return state{byName: map[string]*segment{}, byID: map[uint64]*segment{}, nextID: 1}
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

func (st *state) applyAppend(s *segment, r appendRecord, addr wal.Addr, now int64) {
	s.extents = append(s.extents, extent{offset: s.length, length: int64(len(r.data)), addr: addr, dataOff: int32(r.dataOff)})
	s.length += int64(len(r.data))
	if r.writer != "" {
		s.writers[r.writer] = r.eventNumber
	}
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
	s.start = offset
	// Drop the extents wholly below the new start.
	i := sort.Search(len(s.extents), func(i int) bool { return s.extents[i].end() > offset })
	s.extents = append([]extent(nil), s.extents[i:]...)
	s.modified = now
}

func (st *state) applyDelete(s *segment) {
	delete(st.byName, s.name)
	delete(st.byID, s.id)
	s.notifyLocked()
}

func (st *state) applyMerge(target, source *segment, now int64) {
	base := target.length
	for _, e := range source.extents {
		e.offset = base + e.offset
		target.extents = append(target.extents, e)
	}
	target.length += source.length
	target.modified = now
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
func (st *state) replay(rec wal.Record, now int64) error {
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
		st.applyAppend(s, r, rec.Addr, now)
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
