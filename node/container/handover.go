package container

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/sluice-streams/sluice/node/vfs"
)

// A hand-over moves a container between live nodes through tier 2 (see
// doc.go, "Hand-over"). The old owner freezes the container, tiers every
// segment's bytes, and exports the result; the new owner imports it into a
// fresh directory under the next epoch.
//
// The export is one blob, little-endian:
//
//	0          8         12        16               24
//	+----------+---------+---------+----------------+------------------+
//	| SLUICEHO | version | CRC32C  | body length    | msgpack body     |
//	|          | u32 = 1 | of body | u64            |                  |
//	+----------+---------+---------+----------------+------------------+
//
// The body is the container's checkpoint (as in checkpoint files, extents
// left out) and, for each segment that still has bytes only in the log
// (transaction segments, which are never tiered), those bytes.
const (
	handoverMagic   = "SLUICEHO"
	handoverVersion = 1
)

// ErrBadHandover means a hand-over blob failed its checks.
var ErrBadHandover = errors.New("container: bad hand-over")

type handover struct {
	Checkpoint checkpoint `msgpack:"ckpt"`
	// Logged holds, by segment id, the bytes of the segment from its
	// first untiered offset: they go into the new owner's log.
	Logged map[uint64][]byte `msgpack:"logged,omitempty"`
}

// Freeze stops clients' changes (they fail with protocol.ErrWrongHost: the
// container is moving) while the storage writer may still record chunks.
// Like Fence, there is no way back.
func (c *Container) Freeze() { c.frozen.Store(true) }

// Frozen reports whether Freeze was called.
func (c *Container) Frozen() bool { return c.frozen.Load() }

// ExportHandover returns the container's state for its next owner. The
// container must be frozen, and should have every non-transaction byte
// in tier 2 (the storage writer's Flush): whatever is only in the log is
// carried in the blob.
func (c *Container) ExportHandover() ([]byte, error) {
	if !c.Frozen() {
		return nil, fmt.Errorf("container %d: export for a hand-over needs a frozen container", c.cfg.ID)
	}
	c.mu.Lock()
	if c.mu.failed != nil {
		err := c.mu.failed
		c.mu.Unlock()
		return nil, err
	}
	lsn := c.mu.lastLSN
	cp := c.mu.st.snapshotLocked(lsn)
	type logged struct {
		id   uint64
		exts []extent
	}
	var rest []logged
	for _, s := range c.mu.st.byID {
		if len(s.extents) > 0 {
			rest = append(rest, logged{s.id, append([]extent(nil), s.extents...)})
		}
	}
	c.mu.Unlock()
	if err := c.log.WaitDurable(lsn); err != nil {
		return nil, c.fail(err)
	}
	h := handover{Checkpoint: cp, Logged: map[uint64][]byte{}}
	for i := range h.Checkpoint.Segments {
		h.Checkpoint.Segments[i].ExtentBase, h.Checkpoint.Segments[i].Extents, h.Checkpoint.Segments[i].ExtentWriters = 0, nil, nil
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].id < rest[j].id })
	for _, r := range rest {
		var data []byte
		for _, e := range r.exts {
			b, ok := c.cache.Get(c.cacheKey(e.addr))
			if !ok {
				var err error
				if b, err = c.source.LoadBlock(e.addr, e.dataOff, e.length); err != nil {
					return nil, fmt.Errorf("container %d: export: read block at offset %d: %w", c.cfg.ID, e.offset, err)
				}
			}
			data = append(data, b...)
		}
		h.Logged[r.id] = data
	}
	b, err := encodeBlob(handoverMagic, handoverVersion, h)
	if err != nil {
		return nil, fmt.Errorf("container %d: encode hand-over: %w", c.cfg.ID, err)
	}
	return b, nil
}

func decodeHandover(b []byte) (handover, error) {
	var h handover
	err := decodeBlob(b, handoverMagic, []uint32{handoverVersion}, ErrBadHandover, &h)
	return h, err
}

// ImportHandover makes cfg.Dir the container a hand-over blob describes
// and opens it: it builds the container in a fresh directory beside
// cfg.Dir (a checkpoint of the exported metadata, then the bytes that were
// only in the old owner's log appended to the new log), then replaces
// cfg.Dir with it in one rename, so a crash leaves either the old
// directory or the whole import. cfg.Epoch is recorded as for Open.
func ImportHandover(cfg Config, blob []byte) (*Container, error) {
	h, err := decodeHandover(blob)
	if err != nil {
		return nil, fmt.Errorf("container %d: %w", cfg.ID, err)
	}
	return importState(cfg, h.Checkpoint, h.Logged)
}

// importState builds the container cp and logged describe (logged: by
// segment id, the bytes at the end of each segment that go into the new
// log) in a fresh directory beside cfg.Dir, then replaces cfg.Dir with it
// in one rename, and opens it.
func importState(cfg Config, cp checkpoint, logged map[uint64][]byte) (*Container, error) {
	fs := cfg.FS
	if fs == nil {
		fs = vfs.Default
	}
	tmp := cfg.Dir + ".import"
	if err := vfs.RemoveAll(fs, tmp); err != nil {
		return nil, fmt.Errorf("container %d: clear %s: %w", cfg.ID, tmp, err)
	}
	if err := fs.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("container %d: create %s: %w", cfg.ID, tmp, err)
	}
	// The metadata, with each segment's length cut back to where its
	// logged bytes start: they are appended again below.
	cp.LSN = 0
	at := map[uint64]int64{}
	since := map[uint64]int64{} // when the oldest of those bytes was logged
	for i := range cp.Segments {
		cs := &cp.Segments[i]
		if data, ok := logged[cs.ID]; ok {
			cs.Length -= int64(len(data))
			at[cs.ID] = cs.Length
			since[cs.ID] = cs.UntieredSince
		}
	}
	if _, err := writeCheckpoint(fs, tmp, cp); err != nil {
		return nil, fmt.Errorf("container %d: import: %w", cfg.ID, err)
	}
	icfg := cfg
	icfg.Dir = tmp
	icfg.CheckpointBytes = -1
	c, err := Open(icfg)
	if err != nil {
		return nil, fmt.Errorf("container %d: import: %w", cfg.ID, err)
	}
	ids := make([]uint64, 0, len(logged))
	for id := range logged {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if err := c.importLogged(id, at[id], logged[id], since[id]); err != nil {
			c.Close()
			return nil, fmt.Errorf("container %d: import: %w", cfg.ID, err)
		}
	}
	if err := c.Close(); err != nil { // a checkpoint of the whole import
		return nil, fmt.Errorf("container %d: import: %w", cfg.ID, err)
	}
	if err := vfs.RemoveAll(fs, cfg.Dir); err != nil {
		return nil, fmt.Errorf("container %d: replace %s: %w", cfg.ID, cfg.Dir, err)
	}
	if err := fs.Rename(tmp, cfg.Dir); err != nil {
		return nil, fmt.Errorf("container %d: rename %s into place: %w", cfg.ID, tmp, err)
	}
	if err := fs.SyncDir(filepath.Dir(cfg.Dir)); err != nil {
		return nil, fmt.Errorf("container %d: sync %s: %w", cfg.ID, filepath.Dir(cfg.Dir), err)
	}
	return Open(cfg)
}

// importLogged appends a segment's bytes that were only in the old
// owner's log, as one append record with no writer (the writers' event
// numbers came with the metadata). They count as logged at since, when
// the oldest of them was (now if unknown), so that the hand-over does not
// restart their age.
func (c *Container) importLogged(id uint64, offset int64, data []byte, since int64) error {
	return c.change(func() (durableWait, error) {
		s, ok := c.mu.st.byID[id]
		if !ok || s.length != offset {
			return nil, fmt.Errorf("segment id %d: logged bytes at %d do not fit", id, offset)
		}
		hdr := appendHeader(s.id, s.length, 0, "")
		p, err := c.logLocked(recAppend, hdr, data)
		if err != nil {
			return nil, err
		}
		r := appendRecord{segID: s.id, offset: s.length, dataOff: len(hdr), data: data}
		now := time.Now().UnixNano()
		if since <= 0 || since > now {
			since = now
		}
		c.mu.st.applyAppend(s, r, p.Addr, since, now)
		length := s.length
		return c.thenLocked(c.durable(p), func() { s.markDurableLocked(length) }), nil
	})
}
