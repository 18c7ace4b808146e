package container

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/protocol"
)

// ChunkSource reads tier-2 chunks. A storage writer put the segment's
// bytes from chunkOffset in tier 2 as one chunk; LoadChunk returns part of
// it (the whole chunk if part.Whole()): the bytes [part.Offset,
// part.Offset+part.Length) as the segment holds them (framed events).
// For a part read alone, buf (part.End-part.Pos bytes) is memory to read
// the part's records into; the result is then a prefix of it. The
// container caches what it returns; the source must not keep or change
// the slice, nor buf.
type ChunkSource interface {
	LoadChunk(segment string, chunkOffset int64, part ChunkPart, buf []byte) ([]byte, error)
}

// chunkKeyBit marks a cache key as a tier-2 chunk's rather than a log
// record's: log file numbers never reach it.
const chunkKeyBit = 1 << 63

func (c *Container) chunkCacheKey(segID uint64, offset int64) cache.Key {
	return cache.Key{Container: uint32(c.cfg.ID), File: chunkKeyBit | segID, Offset: offset}
}

// TierState is what a storage writer needs to know of one segment.
type TierState struct {
	Name string
	// Tiered: every byte kept below this offset is in tier 2.
	Tiered int64
	// Recorded (at most Tiered): every byte kept below this offset is in
	// the newest recovery record this process wrote (Recorded), so a node
	// that loses its disk gets it back from tier 2. 0 until the first.
	Recorded int64
	// Untiered is the durable bytes from Tiered that are only in the log.
	Untiered int64
	// Oldest is when the oldest untiered block was logged (zero if none).
	// After a restart it may be earlier than that, never later: blocks
	// from the checkpoint count as old as its oldest, blocks replayed from
	// the log as old as the checkpoint.
	Oldest time.Time
	// Sealed: the segment is sealed and its seal is durable.
	Sealed bool
	// Transaction: a transaction's shadow segment, never tiered.
	Transaction bool
	// FirstChunk is the first offset of the segment's first chunk (-1 if
	// it has none); truncation drops chunks from the front only. Chunks
	// lists them all.
	FirstChunk int64
	// Attrs holds the attributes whose names start with "_tier." (the
	// stream's overrides of the tiering policy).
	Attrs map[string]int64
}

// TierAttrPrefix starts the attributes that override the tiering policy
// for a segment (set by the controller from the stream's configuration).
const TierAttrPrefix = "_tier."

// TierStates describes every segment for the storage writer, sorted by
// name.
func (c *Container) TierStates() []TierState {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]TierState, 0, len(c.mu.st.byName))
	for _, s := range c.mu.st.byName {
		out = append(out, c.tierStateLocked(s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TierState describes one segment for the storage writer.
func (c *Container) TierState(name string) (TierState, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.segmentLocked(name)
	if err != nil {
		return TierState{}, err
	}
	return c.tierStateLocked(s), nil
}

func (c *Container) tierStateLocked(s *segment) TierState {
	ts := TierState{Name: s.name, Tiered: s.tieredEnd(), Sealed: s.sealDurable, Transaction: isTransaction(s.name), FirstChunk: -1}
	ts.Recorded = min(s.recorded, ts.Tiered)
	if d := s.durable - ts.Tiered; d > 0 {
		ts.Untiered = d
		ts.Oldest = time.Unix(0, s.extents[0].appended)
	}
	if len(s.chunks) > 0 {
		ts.FirstChunk = s.chunks[0].offset
	}
	for k, v := range s.attrs {
		if strings.HasPrefix(k, TierAttrPrefix) {
			if ts.Attrs == nil {
				ts.Attrs = map[string]int64{}
			}
			ts.Attrs[k] = v
		}
	}
	return ts
}

// Chunks returns the first offsets of a segment's chunks, in order.
func (c *Container) Chunks(name string) ([]int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.segmentLocked(name)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(s.chunks))
	for i, ch := range s.chunks {
		out[i] = ch.offset
	}
	return out, nil
}

// UntieredBlocks returns the durable blocks of a segment that are only in
// the log, from its first untiered offset: whole blocks, at least one,
// and no more once maxBytes is reached. The slices are cached blocks:
// read-only. An empty result means nothing durable waits.
func (c *Container) UntieredBlocks(name string, maxBytes int64) (offset int64, blocks [][]byte, err error) {
	offset, bs, err := c.UntieredExtents(name, maxBytes)
	if err != nil {
		return 0, nil, err
	}
	for _, b := range bs {
		data, err := b.Data()
		if err != nil {
			return 0, nil, err
		}
		blocks = append(blocks, data)
	}
	return offset, blocks, nil
}

// Block is one of a segment's untiered blocks (UntieredExtents): its
// length now, its bytes when asked, so that a chunk's writer holds one
// block at a time rather than a chunk's worth of blocks read back from
// the log.
type Block struct {
	Length int64
	c      *Container
	name   string
	e      extent
}

// Data returns the block's bytes: the cached block (read-only), or the
// block read from the log.
func (b Block) Data() ([]byte, error) {
	if data, ok := b.c.cache.Get(b.c.cacheKey(b.e.addr)); ok {
		return data, nil
	}
	data, err := b.c.source.LoadBlock(b.e.addr, b.e.dataOff, b.e.length)
	if err != nil {
		return nil, fmt.Errorf("container %d: segment %q: read block at offset %d: %w", b.c.cfg.ID, b.name, b.e.offset, err)
	}
	return data, nil
}

// UntieredExtents is UntieredBlocks without the bytes: the blocks'
// lengths, and their Data on demand.
func (c *Container) UntieredExtents(name string, maxBytes int64) (offset int64, blocks []Block, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.segmentLocked(name)
	if err != nil {
		return 0, nil, err
	}
	offset = s.tieredEnd()
	var n int64
	for _, e := range s.extents {
		if e.end() > s.durable || (len(blocks) > 0 && n+e.length > maxBytes) {
			break
		}
		blocks = append(blocks, Block{Length: e.length, c: c, name: name, e: e})
		n += e.length
	}
	return offset, blocks, nil
}

// CommitChunk records that the segment's bytes [offset, offset+length)
// are durable in tier 2 as one chunk, so that the log may drop them once
// a checkpoint holds the record. offset must be the segment's first
// untiered offset and length a whole number of its blocks (as
// UntieredBlocks returned them). marks, if any, say where the chunk's file
// can be read from (ChunkMark); without them it is read whole. While a
// deleted segment of the same name still has chunks to remove (Gone), it
// refuses with ErrRemovalPending: the chunk was written into the
// directory being emptied.
func (c *Container) CommitChunk(name string, offset, length int64, marks []ChunkMark) error {
	return c.change(func() (durableWait, error) {
		if err := c.internalUsableLocked(); err != nil {
			return nil, err
		}
		if c.mu.st.gone[name] {
			return nil, fmt.Errorf("container %d: segment %q: %w", c.cfg.ID, name, ErrRemovalPending)
		}
		s, err := c.segmentLocked(name)
		if err != nil {
			return nil, err
		}
		if err := checkMarks(marks, offset, length); err != nil {
			return nil, c.errorf(protocol.ErrInvalidArgument, name, "%v", err)
		}
		r := tieredRecord{ID: s.id, Offset: offset, Length: length, Marks: encodeMarks(marks, offset)}
		// Check on a copy first: a record that does not fit is refused, not
		// logged.
		probe, scratch := segment{name: s.name, length: s.length, chunks: s.chunks, extents: s.extents}, state{}
		if err := scratch.applyTiered(&probe, r); err != nil || offset+length > s.durable {
			if err == nil {
				err = fmt.Errorf("chunk ends at %d, beyond the durable length %d", offset+length, s.durable)
			}
			return nil, c.errorf(protocol.ErrInvalidArgument, name, "%v", err)
		}
		p, err := c.logLocked(recTiered, encode(r))
		if err != nil {
			return nil, err
		}
		// Cannot fail: checked above under the same lock.
		_ = c.mu.st.applyTiered(s, r)
		return c.durable(p), nil
	})
}

// Gone lists deleted segments whose tier-2 chunks may remain; the storage
// writer removes them and calls Forget.
func (c *Container) Gone() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.mu.st.gone))
	for n := range c.mu.st.gone {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Forget records that a deleted segment's tier-2 chunks are removed.
func (c *Container) Forget(name string) error {
	return c.change(func() (durableWait, error) {
		if err := c.internalUsableLocked(); err != nil {
			return nil, err
		}
		if !c.mu.st.gone[name] {
			return noWait, nil
		}
		p, err := c.logLocked(recForget, encode(forgetRecord{Name: name}))
		if err != nil {
			return nil, err
		}
		delete(c.mu.st.gone, name)
		return c.durable(p), nil
	})
}

// untieredLocked is the container's bytes logged but not in tier 2
// (transaction segments count: their bytes hold the log too).
func (c *Container) untieredLocked() int64 { return c.mu.st.untiered }

// Untiered is the container's bytes logged but not yet in tier 2.
func (c *Container) Untiered() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.st.untiered
}

// trimLog removes the log files that no kept checkpoint needs and no
// block lies in: every record after the oldest kept checkpoint stays, and
// so does every record that holds a block not yet in tier 2.
func (c *Container) trimLog(oldestCkpt uint64) error {
	keep := oldestCkpt + 1
	c.mu.Lock()
	minFile := uint64(0)
	for _, s := range c.mu.st.byID {
		for _, e := range s.extents {
			if minFile == 0 || e.addr.File < minFile {
				minFile = e.addr.File
			}
		}
	}
	c.mu.Unlock()
	if minFile != 0 {
		lsn, ok := c.log.FirstLSNOf(minFile)
		if !ok {
			return fmt.Errorf("container %d: a block lies in log file %d, which the log no longer has", c.cfg.ID, minFile)
		}
		keep = min(keep, lsn)
	}
	if _, err := c.log.RemoveBefore(keep); err != nil {
		c.l.WithError(err).Warn("container: trimming the log failed; it keeps the files and tries at the next checkpoint")
		return fmt.Errorf("container %d: %w", c.cfg.ID, err)
	}
	return nil
}
