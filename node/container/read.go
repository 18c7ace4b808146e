package container

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/wal"
	"github.com/sluice-streams/sluice/protocol"
)

// MaxReadSize bounds the bytes one read returns.
const MaxReadSize = 8 << 20

// ReadResult is what a read returns.
type ReadResult struct {
	// Offset is where the data starts (the offset asked for).
	Offset int64
	// Data is the bytes read, as slices of cached blocks: read-only, and
	// valid for as long as the caller keeps them.
	Data [][]byte
	// AtTail: the data ends at the end of what is durable now.
	AtTail bool
	// EndOfSegment: the segment is sealed and the data ends at its end.
	EndOfSegment bool

	held *heldParts // tier-2 memory Data refers to, until Release
}

// heldParts are the holds a read result has on reusable memory.
type heldParts struct {
	once sync.Once
	refs []cache.Ref
}

// Release lets the container reuse the memory of the tier-2 chunk parts
// Data refers to: call it once done with Data (for example once it is
// written to a socket), and do not touch Data after. Calling it more than
// once is harmless; never calling it only leaves that memory to the
// garbage collector.
func (r ReadResult) Release() {
	if r.held != nil {
		r.held.once.Do(func() {
			for _, ref := range r.held.refs {
				ref.Release()
			}
		})
	}
}

// Len is the number of bytes in r.Data.
func (r ReadResult) Len() int {
	n := 0
	for _, d := range r.Data {
		n += len(d)
	}
	return n
}

// BlockSource loads the data of a block that is no longer cached. The
// container's log is one; tier 2 will be another, behind the same read
// path.
type BlockSource interface {
	// LoadBlock returns the data of the block at addr; dataOff is where
	// the data starts in the record and length how long it is.
	LoadBlock(addr wal.Addr, dataOff int32, length int64) ([]byte, error)
}

// logSource serves blocks from the container's log.
type logSource struct{ log *wal.WAL }

func (s logSource) LoadBlock(addr wal.Addr, dataOff int32, length int64) ([]byte, error) {
	rec, err := s.log.ReadAt(addr)
	if err != nil {
		return nil, err
	}
	if rec.Type != recAppend || int64(len(rec.Payload)) != int64(dataOff)+length {
		return nil, fmt.Errorf("%w: record at %v is not the expected append block", wal.ErrCorrupt, addr)
	}
	return rec.Payload[dataOff:], nil
}

// span is part of one block to read: a log extent, or a part of a tier-2
// chunk when tiered is set.
type span struct {
	ext      extent
	tiered   bool
	part     partRef
	from, to int64 // offsets within the block's data
}

// partRef names a part of a tier-2 chunk.
type partRef struct {
	chunk int64 // the chunk's first offset
	ChunkPart
}

// partsFrom returns the parts of the segment's chunks that hold bytes of
// [offset, end) and, if the last of them ends its chunk, the first part of
// the next chunk (for read-ahead; ok false if there is none).
func (s *segment) partsFrom(offset, end int64) (parts []partRef, next partRef, ok bool) {
	i := s.findChunk(offset)
	if i == len(s.chunks) {
		return nil, partRef{}, false
	}
	for j := s.chunks[i].findPart(offset); i < len(s.chunks); i, j = i+1, 0 {
		ch := s.chunks[i]
		for ; j < ch.numParts(); j++ {
			p := partRef{chunk: ch.offset, ChunkPart: ch.part(j)}
			if p.Offset >= end {
				return parts, partRef{}, false
			}
			parts = append(parts, p)
		}
		if i+1 < len(s.chunks) && s.chunks[i+1].offset >= end {
			next := s.chunks[i+1]
			return parts, partRef{chunk: next.offset, ChunkPart: next.part(0)}, true
		}
	}
	return parts, partRef{}, false
}

// Read returns up to maxBytes of a segment from offset. If nothing is
// durable at offset yet, it waits until something is, the segment is
// sealed there, or ctx is done (then it returns an empty result with
// AtTail set, not an error). Bytes below the start offset are gone
// (protocol.ErrSegmentTruncated). An offset beyond the end of a segment
// that is not sealed waits like a tail read, for the segment to grow past
// it; beyond the end of a sealed segment it is protocol.ErrInvalidArgument.
func (c *Container) Read(ctx context.Context, name string, offset int64, maxBytes int) (ReadResult, error) {
	for attempt := 0; ; attempt++ {
		res, err := c.read(ctx, name, offset, maxBytes, false)
		if err == nil || attempt == 2 || !c.tieredSince(name, err) {
			return res, err
		}
		// The block left the log (to tier 2, or truncated or deleted, and
		// its log file removed) between finding it and loading it.
	}
}

// errLogBlockGone marks a failed load of a block from the log.
type errLogBlockGone struct {
	offset int64
	err    error
}

func (e *errLogBlockGone) Error() string { return e.err.Error() }
func (e *errLogBlockGone) Unwrap() error { return e.err }

// tieredSince reports whether err is a failed load of a log block that
// the segment no longer keeps in the log: its bytes went to a tier-2
// chunk, or were truncated away, or the segment was deleted. Reading again
// then gives the chunk's bytes, or the error that says so.
func (c *Container) tieredSince(name string, err error) bool {
	var gone *errLogBlockGone
	if !errors.As(err, &gone) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, serr := c.segmentLocked(name)
	return serr != nil || s.tieredEnd() > gone.offset || gone.offset < s.start
}

// read serves Read and, with atEvent, ReadAtEvent: the first block (or
// chunk part) it loads is the one holding offset, and it checks that an
// event starts there before returning any byte.
func (c *Container) read(ctx context.Context, name string, offset int64, maxBytes int, atEvent bool) (ReadResult, error) {
	if maxBytes <= 0 || offset < 0 {
		return ReadResult{}, c.errorf(protocol.ErrInvalidArgument, name, "read of %d bytes at offset %d", maxBytes, offset)
	}
	if maxBytes > MaxReadSize {
		maxBytes = MaxReadSize
	}
	c.mu.Lock()
	var spans []span
	var res ReadResult
	var ahead partRef // the next chunk's first part, for read-ahead
	var readAhead bool
	var inChunk partRef // the next part of the last part's chunk
	var inChunkOK bool
	var seg *segment   // with atEvent: the segment whose offset is checked
	var walkFrom int64 // where the boundary check of offset starts
	for {
		s, err := c.segmentLocked(name)
		if err != nil {
			c.mu.Unlock()
			return ReadResult{}, err
		}
		if offset < s.start {
			c.mu.Unlock()
			return ReadResult{}, c.errorf(protocol.ErrSegmentTruncated, name, "offset %d is below the start offset %d", offset, s.start)
		}
		if s.sealDurable && offset > s.length {
			c.mu.Unlock()
			return ReadResult{}, c.errorf(protocol.ErrInvalidArgument, name, "offset %d is beyond the end %d of the sealed segment", offset, s.length)
		}
		if offset < s.durable {
			end := min(s.durable, offset+int64(maxBytes))
			var parts []partRef
			parts, ahead, readAhead = s.partsFrom(offset, end)
			if !readAhead && len(parts) > 0 {
				inChunk, inChunkOK = s.partAfter(parts[len(parts)-1])
			}
			for _, p := range parts {
				spans = append(spans, span{tiered: true, part: p,
					from: max(offset, p.Offset) - p.Offset, to: min(end, p.Offset+p.Length) - p.Offset})
			}
			for i := s.findExtent(offset); i < len(s.extents) && s.extents[i].offset < end; i++ {
				e := s.extents[i]
				spans = append(spans, span{ext: e, from: max(offset, e.offset) - e.offset, to: min(end, e.end()) - e.offset})
			}
			res = ReadResult{Offset: offset, AtTail: end == s.durable, EndOfSegment: s.sealDurable && end == s.length}
			if atEvent && len(spans) > 0 {
				seg, walkFrom = s, s.walkStartLocked(spans[0].blockOffset(), offset)
			}
			break
		}
		if s.sealDurable {
			c.mu.Unlock()
			return ReadResult{Offset: offset, AtTail: true, EndOfSegment: true}, nil
		}
		if c.mu.closed {
			c.mu.Unlock()
			return ReadResult{}, fmt.Errorf("container %d: %w: closed", c.cfg.ID, protocol.ErrContainerUnavailable)
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ReadResult{Offset: offset, AtTail: true}, nil
		}
		c.mu.Lock()
	}
	segID := c.mu.st.byName[name].id
	c.mu.Unlock()
	if readAhead {
		c.readPartAhead(name, segID, ahead)
	}

	for i, sp := range spans {
		check := atEvent && i == 0 && walkFrom < offset
		if sp.tiered {
			data, ref, err := c.loadPart(name, segID, sp.part)
			if err != nil {
				res.Release()
				return ReadResult{}, err
			}
			if check {
				if err := c.boundaryIn(name, data[walkFrom-sp.part.Offset:], walkFrom, offset); err != nil {
					if ref != nil {
						ref.Release()
					}
					return ReadResult{}, err
				}
			}
			if ref != nil {
				if res.held == nil {
					res.held = &heldParts{}
				}
				res.held.refs = append(res.held.refs, ref)
			}
			res.Data = append(res.Data, data[sp.from:sp.to])
			continue
		}
		data, err := c.loadBlock(name, sp.ext)
		if err != nil {
			res.Release()
			return ReadResult{}, err
		}
		if check {
			if err := c.boundaryIn(name, data[walkFrom-sp.ext.offset:], walkFrom, offset); err != nil {
				res.Release()
				return ReadResult{}, err
			}
		}
		res.Data = append(res.Data, data[sp.from:sp.to])
	}
	if atEvent && seg != nil && walkFrom < offset {
		c.mu.Lock()
		seg.addHintLocked(offset) // the reader's next check walks from here
		c.mu.Unlock()
	}
	if inChunkOK {
		// After the read's own loads, so that the two never compete for
		// the file: while the reply is sent and the client takes its
		// events, the next part loads.
		c.readPartAhead(name, segID, inChunk)
	}
	return res, nil
}

// partLoad is one load of a chunk part in flight, which later readers of
// the part wait for instead of loading it again.
type partLoad struct {
	done    chan struct{}
	waiters int // readers waiting besides the loader; each gets a hold
	data    []byte
	ref     cache.Ref
	err     error
}

// loadPart returns a tier-2 chunk part's bytes, from the cache or tier 2,
// and a hold on their memory (nil if none is needed) that the caller must
// release. Concurrent loads of one part (readers, the read-ahead) share
// one read.
func (c *Container) loadPart(name string, segID uint64, p partRef) ([]byte, cache.Ref, error) {
	key := c.chunkCacheKey(segID, p.Offset)
	if data, ref, ok := c.cache.GetRef(key); ok {
		return data, ref, nil
	}
	if c.cfg.Chunks == nil {
		return nil, nil, fmt.Errorf("container %d: segment %q: %w: the chunk at offset %d is in tier 2, which is not configured",
			c.cfg.ID, name, protocol.ErrContainerUnavailable, p.chunk)
	}
	c.loadsMu.Lock()
	if l := c.loads[key]; l != nil {
		l.waiters++
		c.loadsMu.Unlock()
		<-l.done
		return l.data, l.ref, l.err
	}
	// A load that ended since the first look has put the part in the cache
	// before it left c.loads.
	if data, ref, ok := c.cache.GetRef(key); ok {
		c.loadsMu.Unlock()
		return data, ref, nil
	}
	l := &partLoad{done: make(chan struct{})}
	c.loads[key] = l
	c.loadsMu.Unlock()

	data, ref, err := c.readPart(name, p)
	c.loadsMu.Lock()
	delete(c.loads, key)
	if err == nil {
		if ref != nil {
			for range l.waiters + 1 { // theirs, and the cache's
				ref.Retain()
			}
		}
		c.cache.PutRef(key, data, ref)
	}
	l.data, l.ref, l.err = data, ref, err
	c.loadsMu.Unlock()
	close(l.done)
	return data, ref, err
}

// readPart reads a chunk part from tier 2: a part read alone into a
// pooled buffer (returned held once), a whole chunk into new memory.
func (c *Container) readPart(name string, p partRef) ([]byte, cache.Ref, error) {
	var pb *partBuffer
	var buf []byte
	if !p.Whole() {
		pb = c.parts.get(int(p.End - p.Pos))
		buf = pb.buf
	}
	data, err := c.cfg.Chunks.LoadChunk(name, p.chunk, p.ChunkPart, buf)
	if err == nil && int64(len(data)) != p.Length {
		err = fmt.Errorf("gave %d bytes from %d, want %d", len(data), p.Offset, p.Length)
	}
	if err != nil {
		if pb != nil {
			pb.Release()
		}
		return nil, nil, fmt.Errorf("container %d: segment %q: read tier-2 chunk at offset %d (bytes %d to %d): %w",
			c.cfg.ID, name, p.chunk, p.Offset, p.Offset+p.Length, err)
	}
	if pb == nil {
		return data, nil, nil
	}
	if len(data) == 0 || &data[:1][0] != &buf[:1][0] {
		pb.Release() // the source used memory of its own
		return data, nil, nil
	}
	return data, pb, nil
}

// readAheadSlots bounds a container's read-aheads in flight.
const readAheadSlots = 2

// readPartAhead loads part p in the background, as a catch-up reader will
// want it next: the first part of the chunk after the one a read reached
// the end of (within a chunk's file the kernel reads ahead; at the next
// file it starts afresh, so that start is overlapped with the reading of
// this chunk's end), or the next part of the chunk a read loaded, started
// only once the read's own loads are done (readahead.go): two readers of
// one file at once disturb the kernel's read-ahead and were measured
// slower (docs/BENCHMARKS.md). At most readAheadSlots at a time, and only
// if the cache holds four parts, so that the read-ahead never pushes out
// the part being read.
func (c *Container) readPartAhead(name string, segID uint64, p partRef) {
	if c.cfg.Chunks == nil || 4*p.Length > c.cache.Max() {
		return
	}
	if c.cache.Has(c.chunkCacheKey(segID, p.Offset)) {
		return
	}
	select {
	case c.readAhead <- struct{}{}:
	default:
		return // readAheadSlots are in flight
	}
	go func() {
		defer func() { <-c.readAhead }()
		_, ref, err := c.loadPart(name, segID, p)
		if err != nil {
			c.l.WithError(err).Debug("container: read-ahead of a tier-2 chunk failed; the reader loads it itself")
		}
		if ref != nil {
			ref.Release() // the cache keeps it for the reader
		}
	}()
}
