package tiering

import (
	"bytes"
	"errors"
	"fmt"
	"io"

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

// Reader reads chunks back from tier 2 (container.ChunkSource).
type Reader struct {
	Store tier2.Storage
}

// LoadChunk returns the framed events of the chunk of segment at offset,
// checking that they are exactly length bytes of consecutive events.
func (r Reader) LoadChunk(segment string, offset, length int64) ([]byte, error) {
	path, err := chunkPath(segment, offset)
	if err != nil {
		return nil, err
	}
	f, err := r.Store.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tiering: open chunk %s: %w", path, err)
	}
	defer f.Close()
	// One read of the whole file, then the events compacted in place: a
	// chunk's values are already framed as the segment holds them.
	file := make([]byte, f.Size())
	for off := 0; off < len(file); {
		// In steps, in order, as the kernel's read-ahead expects.
		n, err := f.ReadAt(file[off:min(off+readStep, len(file))], int64(off))
		off += n
		if n == 0 && err != nil {
			return nil, fmt.Errorf("tiering: read chunk %s at byte %d of %d: %w", path, off, len(file), err)
		}
	}
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
