package container

import (
	"context"
	"fmt"

	"github.com/sluice-streams/sluice/protocol"
)

// Event boundaries. A segment's bytes are framed events (protocol.NextEvent)
// and every append block holds whole events, so each block starts at an
// event boundary, and so does every tier-2 chunk and every part of one (a
// chunk mark is where an event's record starts). Whether an offset inside
// a block is a boundary is found by walking the block's length prefixes
// from its start. Such a fact never changes once the bytes are written,
// so it may be found without the container's lock, and it can be found
// for offsets below the segment's start as long as the block holding them
// is kept (truncation keeps the block holding the start).

// boundaryHints is how many recent boundaries a segment remembers: a
// reader's next read starts where its last one's events ended, so with a
// hint the check walks only the events it read last time, not its whole
// block from the start (a 1 MiB block of 100-byte events: about 10,000
// steps). Boundaries never move, so a hint never goes stale.
const boundaryHints = 4

// walkStartLocked returns the offset a check of offset, in a block or part
// starting at base, starts walking from: the highest hint in [base,
// offset], else base.
func (s *segment) walkStartLocked(base, offset int64) int64 {
	from := base
	for _, h := range s.hints.at {
		if h > from && h <= offset {
			from = h
		}
	}
	return from
}

// addHintLocked remembers that offset is an event boundary.
func (s *segment) addHintLocked(offset int64) {
	for _, h := range s.hints.at {
		if h == offset {
			return
		}
	}
	s.hints.at[s.hints.next] = offset
	s.hints.next = (s.hints.next + 1) % boundaryHints
}

// CheckBoundary returns nil if offset is an event boundary of the segment:
// where one of its events starts, or its current length. Otherwise the
// error wraps protocol.ErrNotEventBoundary and names the boundaries on
// either side; protocol.ErrInvalidArgument for an offset outside [0,
// length], protocol.ErrSegmentTruncated for bytes no longer kept.
func (c *Container) CheckBoundary(name string, offset int64) error {
	_, err := c.checkBoundary(name, offset, false)
	return err
}

// checkBoundary is CheckBoundary; with truncating set, offsets at or below
// the start (where a truncation changes nothing) pass unchecked. It returns
// the segment's id, so that the caller can tell that the segment it then
// changes is the one checked.
func (c *Container) checkBoundary(name string, offset int64, truncating bool) (uint64, error) {
	for attempt := 0; ; attempt++ {
		id, err := c.checkBoundaryOnce(name, offset, truncating)
		if err == nil || attempt == 2 || !c.tieredSince(name, err) {
			return id, err
		}
		// The block left the log while it was being loaded: look again.
	}
}

func (c *Container) checkBoundaryOnce(name string, offset int64, truncating bool) (uint64, error) {
	c.mu.Lock()
	s, err := c.segmentLocked(name)
	if err != nil {
		c.mu.Unlock()
		return 0, err
	}
	id, length, start := s.id, s.length, s.start
	if offset < 0 || offset > length {
		c.mu.Unlock()
		return id, c.errorf(protocol.ErrInvalidArgument, name, "offset %d is outside [0, %d]", offset, length)
	}
	if offset == length || (truncating && offset <= start) {
		c.mu.Unlock()
		return id, nil
	}
	var sp span
	seg := s
	if i := s.findExtent(offset); i < len(s.extents) && s.extents[i].offset <= offset {
		e := s.extents[i]
		sp = span{ext: e, from: offset - e.offset}
	} else if j := s.findChunk(offset); j < len(s.chunks) && s.chunks[j].offset <= offset {
		ch := s.chunks[j]
		p := partRef{chunk: ch.offset, ChunkPart: ch.part(ch.findPart(offset))}
		sp = span{tiered: true, part: p, from: offset - p.Offset}
	} else {
		c.mu.Unlock()
		return id, c.errorf(protocol.ErrSegmentTruncated, name, "offset %d is below the start offset %d", offset, start)
	}
	from := s.walkStartLocked(sp.blockOffset(), offset)
	c.mu.Unlock()
	if from == offset {
		return id, nil // a block or chunk part starts there, or a known boundary
	}
	data, release, err := c.loadSpan(name, id, sp)
	if err != nil {
		return id, err
	}
	defer release()
	if err := c.boundaryIn(name, data[from-sp.blockOffset():], from, offset); err != nil {
		return id, err
	}
	c.mu.Lock()
	seg.addHintLocked(offset)
	c.mu.Unlock()
	return id, nil
}

// blockOffset is the segment offset of the first byte of sp's block (log
// extent) or chunk part.
func (sp span) blockOffset() int64 {
	if sp.tiered {
		return sp.part.Offset
	}
	return sp.ext.offset
}

// loadSpan returns the whole data of sp's block or chunk part and a
// function that releases it.
func (c *Container) loadSpan(name string, segID uint64, sp span) ([]byte, func(), error) {
	if sp.tiered {
		data, ref, err := c.loadPart(name, segID, sp.part)
		if err != nil {
			return nil, nil, err
		}
		return data, func() {
			if ref != nil {
				ref.Release()
			}
		}, nil
	}
	data, err := c.loadBlock(name, sp.ext)
	return data, func() {}, err
}

// loadBlock returns a log extent's data from the cache, or from the log
// (then it is cached).
func (c *Container) loadBlock(name string, e extent) ([]byte, error) {
	key := c.cacheKey(e.addr)
	if data, ok := c.cache.Get(key); ok {
		return data, nil
	}
	data, err := c.source.LoadBlock(e.addr, e.dataOff, e.length)
	if err != nil {
		return nil, &errLogBlockGone{offset: e.offset,
			err: fmt.Errorf("container %d: segment %q: read block at offset %d: %w", c.cfg.ID, name, e.offset, err)}
	}
	c.cache.Put(key, data)
	return data, nil
}

// boundaryIn checks that offset is where an event of data starts, data
// being whole events from segment offset base.
func (c *Container) boundaryIn(name string, data []byte, base, offset int64) error {
	prev, next, ok := walkEvents(data, base, offset)
	switch {
	case ok:
		return nil
	case next < 0:
		return c.errorf(protocol.ErrNotEventBoundary, name,
			"offset %d: the events of the block at %d cannot be parsed past offset %d", offset, base, prev)
	}
	return c.errorf(protocol.ErrNotEventBoundary, name,
		"offset %d is inside the event at %d; the nearest event boundaries are %d and %d", offset, prev, prev, next)
}

// walkEvents walks the framed events of data, which starts at segment
// offset base, up to offset. ok: an event starts at offset. Otherwise prev
// is the last event start below offset and next the first above it, or -1
// if the events cannot be parsed that far (damaged data).
func walkEvents(data []byte, base, offset int64) (prev, next int64, ok bool) {
	at := base
	for rest := data; at < offset; {
		_, r, err := protocol.NextEvent(rest)
		if err != nil {
			return at, -1, false
		}
		prev = at
		at += int64(len(rest) - len(r))
		rest = r
	}
	if at == offset {
		return 0, 0, true
	}
	return prev, at, false
}

// ReadAtEvent is Read, but offset must be an event boundary: any other
// fails with protocol.ErrNotEventBoundary, for this read only. A reader
// that holds no part of an event reads this way, so that a position
// inside an event is one clear error rather than garbage parsed as events.
func (c *Container) ReadAtEvent(ctx context.Context, name string, offset int64, maxBytes int) (ReadResult, error) {
	for attempt := 0; ; attempt++ {
		res, err := c.read(ctx, name, offset, maxBytes, true)
		if err == nil || attempt == 2 || !c.tieredSince(name, err) {
			return res, err
		}
	}
}
