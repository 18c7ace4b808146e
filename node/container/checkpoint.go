package container

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/wal"
)

// The checkpoint file format; see doc.go.
const (
	ckptMagic      = "SLUICECK"
	ckptVersion    = 2 // 2 added tier-2 chunks and gone segments; 1 is still read
	ckptHeaderSize = 24
	ckptPrefix     = "checkpoint-"
	ckptSuffix     = ".ckpt"
	// ckptKeep is how many checkpoints are kept: the newest, and one
	// before it to fall back on should the newest be damaged.
	ckptKeep = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrBadCheckpoint means a checkpoint file failed its checks.
var ErrBadCheckpoint = errors.New("container: bad checkpoint")

type checkpoint struct {
	LSN      uint64        `msgpack:"lsn"`
	NextID   uint64        `msgpack:"next"`
	Segments []ckptSegment `msgpack:"segs"`
	Gone     []string      `msgpack:"gone,omitempty"`
	// Time is when the snapshot was taken (unix ns): every block logged
	// after LSN was logged after it.
	Time int64 `msgpack:"t,omitempty"`
}

type ckptSegment struct {
	ID       uint64           `msgpack:"id"`
	Name     string           `msgpack:"n"`
	Start    int64            `msgpack:"st"`
	Length   int64            `msgpack:"l"`
	Sealed   bool             `msgpack:"sl"`
	Attrs    map[string]int64 `msgpack:"a"`
	Writers  map[string]int64 `msgpack:"w"`
	Modified int64            `msgpack:"m"`
	// Extents, contiguous from ExtentBase, packed as uvarints per extent:
	// length, log file, offset in the file, data offset in the record.
	ExtentBase int64  `msgpack:"eb"`
	Extents    []byte `msgpack:"e"`
	// Tier-2 chunks, contiguous from ChunkBase, packed as uvarint lengths.
	ChunkBase int64  `msgpack:"cb,omitempty"`
	Chunks    []byte `msgpack:"c,omitempty"`
	// ChunkMarks, one entry per chunk when any chunk has marks
	// (encodeMarks; empty for a chunk without).
	ChunkMarks [][]byte `msgpack:"cm,omitempty"`
	// UntieredSince is when the oldest extent was logged (unix ns; 0 if
	// none), so that the age of untiered data, which bounds the tier-2
	// lag, survives a restart.
	UntieredSince int64 `msgpack:"us,omitempty"`
	// ExtentWriters names, for each extent with a writer (by its index in
	// Extents), the writer and its event number before the block (-1:
	// none): what a recovery record needs to give each writer its number
	// as of the tiered end. Absent from older checkpoints: their extents
	// count as having no writer.
	ExtentWriters []extentWriter `msgpack:"ew,omitempty"`
}

type extentWriter struct {
	Index  int    `msgpack:"i"`
	Writer string `msgpack:"w"`
	Prev   int64  `msgpack:"p"`
}

// snapshotLocked copies the durable part of the state for a checkpoint at
// lsn. The caller holds the container's lock.
func (st *state) snapshotLocked(lsn uint64) checkpoint {
	cp := checkpoint{LSN: lsn, NextID: st.nextID, Segments: make([]ckptSegment, 0, len(st.byID)), Time: time.Now().UnixNano()}
	for _, s := range st.byID {
		cs := ckptSegment{
			ID: s.id, Name: s.name, Start: s.start, Length: s.length, Sealed: s.sealed,
			Attrs: make(map[string]int64, len(s.attrs)), Writers: make(map[string]int64, len(s.writers)),
			Modified: s.modified,
		}
		for k, v := range s.attrs {
			cs.Attrs[k] = v
		}
		for k, v := range s.writers {
			cs.Writers[k] = v
		}
		if len(s.chunks) > 0 {
			cs.ChunkBase = s.chunks[0].offset
			for _, ch := range s.chunks {
				cs.Chunks = binary.AppendUvarint(cs.Chunks, uint64(ch.length))
			}
			for i, ch := range s.chunks {
				if len(ch.marks) == 0 {
					continue
				}
				if cs.ChunkMarks == nil {
					cs.ChunkMarks = make([][]byte, len(s.chunks))
				}
				cs.ChunkMarks[i] = encodeMarks(ch.marks, ch.offset)
			}
		}
		if len(s.extents) > 0 {
			cs.UntieredSince = s.extents[0].appended
			cs.ExtentBase = s.extents[0].offset
			buf := make([]byte, 0, len(s.extents)*12)
			for i, e := range s.extents {
				if e.writer != "" {
					cs.ExtentWriters = append(cs.ExtentWriters, extentWriter{Index: i, Writer: e.writer, Prev: e.prev})
				}
				buf = binary.AppendUvarint(buf, uint64(e.length))
				buf = binary.AppendUvarint(buf, e.addr.File)
				buf = binary.AppendUvarint(buf, uint64(e.addr.Offset))
				buf = binary.AppendUvarint(buf, uint64(e.dataOff))
			}
			cs.Extents = buf
		}
		cp.Segments = append(cp.Segments, cs)
	}
	sort.Slice(cp.Segments, func(i, j int) bool { return cp.Segments[i].ID < cp.Segments[j].ID })
	for name := range st.gone {
		cp.Gone = append(cp.Gone, name)
	}
	sort.Strings(cp.Gone)
	return cp
}

// restore rebuilds a state from a checkpoint.
func restore(cp checkpoint) (state, error) {
	st := newState()
	st.nextID = cp.NextID
	for _, name := range cp.Gone {
		st.gone[name] = true
	}
	for _, cs := range cp.Segments {
		s := &segment{
			id: cs.ID, name: cs.Name, start: cs.Start, length: cs.Length, sealed: cs.Sealed,
			attrs: cs.Attrs, writers: cs.Writers, modified: cs.Modified,
		}
		if s.attrs == nil {
			s.attrs = map[string]int64{}
		}
		if s.writers == nil {
			s.writers = map[string]int64{}
		}
		off, b := cs.ChunkBase, cs.Chunks
		for len(b) > 0 {
			v, n := binary.Uvarint(b)
			if n <= 0 || v == 0 {
				return state{}, fmt.Errorf("segment %q: chunk list is damaged", cs.Name)
			}
			b = b[n:]
			ch := chunk{offset: off, length: int64(v)}
			if i := len(s.chunks); i < len(cs.ChunkMarks) {
				var err error
				if ch.marks, err = decodeMarks(cs.ChunkMarks[i], ch.offset, ch.length); err != nil {
					return state{}, fmt.Errorf("segment %q: chunk at offset %d: %w", cs.Name, ch.offset, err)
				}
			}
			s.chunks = append(s.chunks, ch)
			off += int64(v)
		}
		if len(cs.ChunkMarks) > len(s.chunks) {
			return state{}, fmt.Errorf("segment %q: marks for %d chunks, %d chunks", cs.Name, len(cs.ChunkMarks), len(s.chunks))
		}
		if len(s.chunks) > 0 && len(cs.Extents) > 0 && off != cs.ExtentBase {
			return state{}, fmt.Errorf("segment %q: chunks end at %d, extents begin at %d", cs.Name, off, cs.ExtentBase)
		}
		if len(s.chunks) > 0 && len(cs.Extents) == 0 && off != s.length {
			return state{}, fmt.Errorf("segment %q: chunks end at %d, length is %d", cs.Name, off, s.length)
		}
		off, b = cs.ExtentBase, cs.Extents
		for len(b) > 0 {
			var vals [4]uint64
			for i := range vals {
				v, n := binary.Uvarint(b)
				if n <= 0 {
					return state{}, fmt.Errorf("segment %q: extent list is cut short", cs.Name)
				}
				vals[i], b = v, b[n:]
			}
			// Each restored block counts as old as the oldest (its own
			// time is not kept): tiered no later than the lag bound says.
			e := extent{offset: off, length: int64(vals[0]), addr: wal.Addr{File: vals[1], Offset: int64(vals[2])}, dataOff: int32(vals[3]),
				appended: cs.UntieredSince, prev: -1}
			s.extents = append(s.extents, e)
			off = e.end()
		}
		for _, ew := range cs.ExtentWriters {
			if ew.Index < 0 || ew.Index >= len(s.extents) || ew.Writer == "" {
				return state{}, fmt.Errorf("segment %q: extent writer at index %d of %d extents", cs.Name, ew.Index, len(s.extents))
			}
			s.extents[ew.Index].writer, s.extents[ew.Index].prev = ew.Writer, ew.Prev
		}
		if len(s.extents) > 0 && off != s.length {
			return state{}, fmt.Errorf("segment %q: extents end at %d, length is %d", cs.Name, off, s.length)
		}
		if _, dup := st.byID[s.id]; dup || st.byName[s.name] != nil || s.id >= st.nextID {
			return state{}, fmt.Errorf("segment %q: id %d is duplicated or not below the next id %d", s.name, s.id, st.nextID)
		}
		st.byID[s.id] = s
		st.byName[s.name] = s
		st.untiered += s.length - s.tieredEnd()
	}
	return st, nil
}

func encodeCheckpoint(cp checkpoint) ([]byte, error) {
	return encodeBlob(ckptMagic, ckptVersion, cp)
}

func decodeCheckpoint(b []byte) (checkpoint, error) {
	var cp checkpoint
	err := decodeBlob(b, ckptMagic, []uint32{1, ckptVersion}, ErrBadCheckpoint, &cp)
	return cp, err
}

// encodeBlob frames v's msgpack encoding as a checkpoint file or a
// hand-over is framed: magic (8 bytes), version, CRC32C of the body, body
// length, body (see doc.go).
func encodeBlob(magic string, version uint32, v any) ([]byte, error) {
	body, err := msgpack.Marshal(v)
	if err != nil {
		return nil, err
	}
	b := make([]byte, ckptHeaderSize, ckptHeaderSize+len(body))
	copy(b[0:8], magic)
	binary.LittleEndian.PutUint32(b[8:12], version)
	binary.LittleEndian.PutUint32(b[12:16], crc32.Checksum(body, crcTable))
	binary.LittleEndian.PutUint64(b[16:24], uint64(len(body)))
	return append(b, body...), nil
}

// decodeBlob checks a blob framed by encodeBlob (magic, one of versions,
// length, checksum) and decodes its body into v; failures wrap bad.
func decodeBlob(b []byte, magic string, versions []uint32, bad error, v any) error {
	if len(b) < ckptHeaderSize || string(b[0:8]) != magic {
		return fmt.Errorf("%w: no %s header", bad, magic)
	}
	if ver := binary.LittleEndian.Uint32(b[8:12]); !slices.Contains(versions, ver) {
		return fmt.Errorf("%w: unsupported version %d", bad, ver)
	}
	n := binary.LittleEndian.Uint64(b[16:24])
	if n != uint64(len(b)-ckptHeaderSize) {
		return fmt.Errorf("%w: body is %d bytes, header says %d", bad, len(b)-ckptHeaderSize, n)
	}
	body := b[ckptHeaderSize:]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(b[12:16]) {
		return fmt.Errorf("%w: checksum mismatch", bad)
	}
	if err := msgpack.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %v", bad, err)
	}
	return nil
}

func ckptName(lsn uint64) string { return fmt.Sprintf("%s%020d%s", ckptPrefix, lsn, ckptSuffix) }

// listCheckpoints returns the LSNs of the checkpoint files in dir, newest
// first.
func listCheckpoints(fs vfs.FS, dir string) ([]uint64, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, err
	}
	var lsns []uint64
	for _, n := range names {
		if !strings.HasPrefix(n, ckptPrefix) || !strings.HasSuffix(n, ckptSuffix) {
			continue
		}
		lsn, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(n, ckptPrefix), ckptSuffix), 10, 64)
		if err == nil {
			lsns = append(lsns, lsn)
		}
	}
	sort.Slice(lsns, func(i, j int) bool { return lsns[i] > lsns[j] })
	return lsns, nil
}

// loadCheckpoint reads the newest valid checkpoint in dir. A damaged newer
// checkpoint is skipped for an older one (the log still holds every record
// after the older one, since the log is never trimmed past the oldest kept
// checkpoint); the damage is reported through warn.
func loadCheckpoint(fs vfs.FS, dir string, warn func(file string, err error)) (checkpoint, bool, error) {
	lsns, err := listCheckpoints(fs, dir)
	if err != nil {
		return checkpoint{}, false, fmt.Errorf("container: list %s: %w", dir, err)
	}
	for _, lsn := range lsns {
		name := filepath.Join(dir, ckptName(lsn))
		b, err := vfs.ReadFile(fs, name)
		if err == nil {
			var cp checkpoint
			if cp, err = decodeCheckpoint(b); err == nil && cp.LSN != lsn {
				err = fmt.Errorf("%w: holds LSN %d, named for %d", ErrBadCheckpoint, cp.LSN, lsn)
			}
			if err == nil {
				return cp, true, nil
			}
		}
		warn(name, err)
	}
	return checkpoint{}, false, nil
}

// writeCheckpoint makes a checkpoint file appear whole, then removes all
// but the newest ckptKeep. It returns the LSN of the oldest checkpoint
// kept: the log must keep every record after it.
func writeCheckpoint(fs vfs.FS, dir string, cp checkpoint) (uint64, error) {
	b, err := encodeCheckpoint(cp)
	if err != nil {
		return 0, fmt.Errorf("container: encode checkpoint: %w", err)
	}
	if err := vfs.WriteFileAtomic(fs, filepath.Join(dir, ckptName(cp.LSN)), b, 0o644); err != nil {
		return 0, fmt.Errorf("container: write checkpoint: %w", err)
	}
	lsns, err := listCheckpoints(fs, dir)
	if err != nil {
		return 0, fmt.Errorf("container: list %s: %w", dir, err)
	}
	oldest := cp.LSN
	for i, lsn := range lsns {
		if i >= ckptKeep {
			if err := fs.Remove(filepath.Join(dir, ckptName(lsn))); err != nil {
				return 0, fmt.Errorf("container: remove old checkpoint: %w", err)
			}
			continue
		}
		oldest = min(oldest, lsn)
	}
	return oldest, nil
}
