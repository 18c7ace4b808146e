package tiering

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// ErrBadChunk means a chunk in tier 2 does not hold what its container
// recorded: wrong offsets, missing or extra bytes, or an undecodable file.
var ErrBadChunk = errors.New("tiering: chunk does not match its record")

// chunkPath is where a segment's chunk lives in tier 2.
func chunkPath(segment string, offset int64) (string, error) {
	q, err := protocol.ParseSegmentName(segment)
	if err != nil {
		return "", err
	}
	return tier2.ChunkPath(q.Scope, q.Stream, q.Number, offset), nil
}

// segmentDir is the directory of a segment's chunks.
func segmentDir(segment string) (string, error) {
	q, err := protocol.ParseSegmentName(segment)
	if err != nil {
		return "", err
	}
	return tier2.SegmentDir(q.Scope, q.Stream, q.Number), nil
}

// readStep is the size of one read of a chunk file.
const readStep = 1 << 20

// headerBytes is the most of a chunk's header read before its records: a
// Sluice chunk's header is about 100 bytes (no metadata).
const headerBytes = 4 << 10

// readRange reads bytes [from, to) of a chunk file in steps, in order, as
// the kernel's read-ahead expects: into buf if it has room, else into new
// memory.
func readRange(f tier2.Reader, path string, from, to int64, buf []byte) ([]byte, error) {
	if to > f.Size() || from > to {
		return nil, fmt.Errorf("tiering: chunk %s: %w: bytes %d to %d of a %d-byte file", path, ErrBadChunk, from, to, f.Size())
	}
	if int64(cap(buf)) >= to-from {
		buf = buf[:to-from]
	} else {
		buf = make([]byte, to-from)
	}
	for off := 0; off < len(buf); {
		n, err := f.ReadAt(buf[off:min(off+readStep, len(buf))], from+int64(off))
		off += n
		if n == 0 && err != nil {
			return nil, fmt.Errorf("tiering: read chunk %s at byte %d of %d: %w", path, from+int64(off), f.Size(), err)
		}
	}
	return buf, nil
}

// loadPart reads one part of a chunk: the header, to know the sync
// marker, then the part's records, compacted in place. The header read
// also makes the kernel see a reader going forward from the file's start
// and read ahead in large steps: without it, catch-up reads on a local
// disk were measured at about half the speed (docs/BENCHMARKS.md).
func loadPart(f tier2.Reader, path string, part container.ChunkPart, buf []byte) ([]byte, error) {
	head, err := readRange(f, path, 0, min(headerBytes, part.Pos), nil)
	if err != nil {
		return nil, err
	}
	sr, err := seqfile.NewReader(bytes.NewReader(head))
	if err != nil {
		return nil, fmt.Errorf("tiering: chunk %s: %w: %v", path, ErrBadChunk, err)
	}
	hdr := sr.Header()
	if hdr.Size > part.Pos {
		return nil, fmt.Errorf("tiering: chunk %s: %w: a part at byte %d, inside the %d-byte header", path, ErrBadChunk, part.Pos, hdr.Size)
	}
	records, err := readRange(f, path, part.Pos, part.End, buf)
	if err != nil {
		return nil, err
	}
	events, err := seqfile.EventsInPlaceAt(hdr, records, part.Pos, part.Offset)
	if err != nil {
		return nil, fmt.Errorf("tiering: chunk %s: %w: %v", path, ErrBadChunk, err)
	}
	if int64(len(events)) != part.Length {
		return nil, fmt.Errorf("tiering: chunk %s: %w: bytes %d to %d hold %d bytes of events from %d, recorded %d",
			path, ErrBadChunk, part.Pos, part.End, len(events), part.Offset, part.Length)
	}
	return events, nil
}

// Reader reads chunks back from tier 2 (container.ChunkSource).
type Reader struct {
	Store tier2.Storage
}

// LoadChunk returns the framed events of part of the chunk of segment at
// chunkOffset (container.ChunkSource): a part read alone when the chunk
// was recorded with marks, else the whole chunk. It checks that they are
// exactly the part's bytes of consecutive events.
func (r Reader) LoadChunk(segment string, chunkOffset int64, part container.ChunkPart, buf []byte) ([]byte, error) {
	path, err := chunkPath(segment, chunkOffset)
	if err != nil {
		return nil, err
	}
	f, err := r.Store.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tiering: open chunk %s: %w", path, err)
	}
	defer f.Close()
	if !part.Whole() {
		return loadPart(f, path, part, buf)
	}
	offset, length := chunkOffset, part.Length
	file, err := readRange(f, path, 0, f.Size(), nil)
	if err != nil {
		return nil, err
	}
	// The events are compacted in place: a chunk's values are already
	// framed as the segment holds them.
	events, ok, err := seqfile.EventsInPlace(file, offset)
	if err != nil {
		return nil, fmt.Errorf("tiering: chunk %s: %w: %v", path, ErrBadChunk, err)
	}
	if ok {
		if int64(len(events)) != length {
			return nil, fmt.Errorf("tiering: chunk %s: %w: holds %d bytes of events, recorded %d", path, ErrBadChunk, len(events), length)
		}
		return events, nil
	}
	sr, err := seqfile.NewReader(bytes.NewReader(file))
	if err != nil {
		return nil, fmt.Errorf("tiering: chunk %s: %w", path, err)
	}
	out := make([]byte, 0, length)
	for {
		off, ev, err := sr.NextEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("tiering: chunk %s: %w: %v", path, ErrBadChunk, err)
		}
		if want := offset + int64(len(out)); off != want || int64(len(out))+4+int64(len(ev)) > length {
			return nil, fmt.Errorf("tiering: chunk %s: %w: event at offset %d of %d bytes, expected one at %d within %d bytes",
				path, ErrBadChunk, off, len(ev), want, length)
		}
		out = protocol.AppendEvent(out, ev)
	}
	if int64(len(out)) != length {
		return nil, fmt.Errorf("tiering: chunk %s: %w: holds %d bytes of events, recorded %d", path, ErrBadChunk, len(out), length)
	}
	return out, nil
}
