package container

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluice-streams/sluice/node/vfs"
)

// A recovery record is the container's metadata as of what tier 2 holds,
// kept in tier 2 by the storage writer as tiering goes on, so that a node
// that lost its disk can rebuild the container from tier 2
// (ImportRecovery; docs/ARCHITECTURE.md, "Losing a node's disk"). It is
// one blob, framed like a checkpoint, little-endian:
//
//	0          8         12        16               24
//	+----------+---------+---------+----------------+------------------+
//	| SLUICERR | version | CRC32C  | body length    | msgpack body     |
//	|          | u32 = 1 | of body | u64            |                  |
//	+----------+---------+---------+----------------+------------------+
//
// The body holds the container id, the epoch and sequence number it was
// written under, and a checkpoint (as in checkpoint files) in which each
// segment ends where its tier-2 chunks end: no extents, and each writer's
// event number as it was after the writer's last block in those chunks.
const (
	recoveryMagic   = "SLUICERR"
	recoveryVersion = 1
)

// ErrBadRecovery means a recovery record failed its checks.
var ErrBadRecovery = errors.New("container: bad recovery record")

type recovery struct {
	Container  int        `msgpack:"c"`
	Epoch      int64      `msgpack:"e"`
	Seq        uint64     `msgpack:"q"`
	Checkpoint checkpoint `msgpack:"ckpt"`
}

// Recovery is a recovery record ready to be written to tier 2 (Blob).
// Once it is there, whole, the writer calls Container.Recorded with it.
type Recovery struct {
	Blob []byte
	// Changes is the container's count of non-append changes the record
	// includes (see MetaChanges).
	Changes uint64
	tiered  map[uint64]int64 // each segment's tiered end in the record
}

// MetaChanges counts the records other than appends this container has
// logged since it was opened (creates, seals, truncations, deletions,
// merges, attributes, chunks tiered, forgets): a recovery record made
// when it was n holds every such change up to n. Appends matter to a
// recovery record only once tiered, which is a change counted here.
func (c *Container) MetaChanges() uint64 { return c.metaChanges.Load() }

// ExportRecovery returns the container's recovery record, under its
// epoch and sequence number seq: its metadata as of its last logged
// record, once that is durable, with each segment cut back to the end of
// its tier-2 chunks (the bytes only in the log are not in it; a segment
// truncated above that end keeps its start, empty). Writers' event
// numbers are those of the writers' last blocks below the cut, so that
// after an import a writer's resends of what survived are recognised and
// its later events accepted.
func (c *Container) ExportRecovery(seq uint64) (Recovery, error) {
	c.mu.Lock()
	if c.mu.failed != nil {
		err := c.mu.failed
		c.mu.Unlock()
		return Recovery{}, err
	}
	changes := c.metaChanges.Load()
	lsn := c.mu.lastLSN
	cp := c.mu.st.snapshotLocked(lsn)
	// Writers' numbers as of each segment's tiered end: a writer with a
	// block only in the log had, before its first such block, prev.
	writers := make(map[uint64]map[string]int64, len(c.mu.st.byID))
	tiered := make(map[uint64]int64, len(c.mu.st.byID))
	for _, s := range c.mu.st.byID {
		w := maps.Clone(s.writers)
		seen := map[string]bool{}
		for _, e := range s.extents {
			if e.writer == "" || seen[e.writer] {
				continue
			}
			seen[e.writer] = true
			if e.prev < 0 {
				delete(w, e.writer)
			} else {
				w[e.writer] = e.prev
			}
		}
		writers[s.id] = w
		tiered[s.id] = s.tieredEnd()
	}
	c.mu.Unlock()
	if err := c.log.WaitDurable(lsn); err != nil {
		return Recovery{}, c.fail(err)
	}
	cp.LSN = 0
	for i := range cp.Segments {
		cs := &cp.Segments[i]
		end := tiered[cs.ID]
		cs.Length = max(end, cs.Start)
		cs.Writers = writers[cs.ID]
		cs.ExtentBase, cs.Extents, cs.ExtentWriters, cs.UntieredSince = 0, nil, nil, 0
	}
	b, err := encodeBlob(recoveryMagic, recoveryVersion, recovery{Container: c.cfg.ID, Epoch: c.cfg.Epoch, Seq: seq, Checkpoint: cp})
	if err != nil {
		return Recovery{}, fmt.Errorf("container %d: encode recovery record: %w", c.cfg.ID, err)
	}
	return Recovery{Blob: b, Changes: changes, tiered: tiered}, nil
}

// Recorded tells the container that r is in tier 2, whole: every byte
// below each segment's cut is now recoverable from tier 2 (TierState's
// Recorded).
func (c *Container) Recorded(r Recovery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, end := range r.tiered {
		if s, ok := c.mu.st.byID[id]; ok && end > s.recorded {
			s.recorded = end
		}
	}
}

// RecoveryInfo is what a recovery record says of itself.
type RecoveryInfo struct {
	Container int
	Epoch     int64
	Seq       uint64
	Segments  int
}

func decodeRecovery(b []byte) (recovery, error) {
	var r recovery
	if err := decodeBlob(b, recoveryMagic, []uint32{recoveryVersion}, ErrBadRecovery, &r); err != nil {
		return recovery{}, err
	}
	// The checkpoint must restore: a record that does not is refused
	// before anything is written.
	if _, err := restore(r.Checkpoint); err != nil {
		return recovery{}, fmt.Errorf("%w: %v", ErrBadRecovery, err)
	}
	for _, cs := range r.Checkpoint.Segments {
		if len(cs.Extents) > 0 {
			return recovery{}, fmt.Errorf("%w: segment %q has bytes outside tier 2", ErrBadRecovery, cs.Name)
		}
	}
	return r, nil
}

// DecodeRecovery checks a recovery record and says what it holds; an
// error matches ErrBadRecovery.
func DecodeRecovery(b []byte) (RecoveryInfo, error) {
	r, err := decodeRecovery(b)
	if err != nil {
		return RecoveryInfo{}, err
	}
	return RecoveryInfo{Container: r.Container, Epoch: r.Epoch, Seq: r.Seq, Segments: len(r.Checkpoint.Segments)}, nil
}

// ImportRecovery makes cfg.Dir the container a recovery record describes
// and opens it, as ImportHandover does (a fresh directory beside cfg.Dir,
// then one rename over it: a crash leaves the old directory or the whole
// import). It refuses, changing nothing, a record that fails its checks
// (ErrBadRecovery), is another container's, or was written under an epoch
// above cfg.Epoch (ErrStaleEpoch: a newer owner has the container). The
// caller imports only into a directory with no state of its own
// (HasLocalState): a log on disk is newer than any record.
func ImportRecovery(cfg Config, blob []byte) (*Container, error) {
	r, err := decodeRecovery(blob)
	if err != nil {
		return nil, fmt.Errorf("container %d: %w", cfg.ID, err)
	}
	if r.Container != cfg.ID {
		return nil, fmt.Errorf("container %d: %w: the record is container %d's", cfg.ID, ErrBadRecovery, r.Container)
	}
	if r.Epoch > cfg.Epoch {
		return nil, fmt.Errorf("container %d: %w: a recovery record of epoch %d, the assignment gives %d; a newer owner holds it",
			cfg.ID, ErrStaleEpoch, r.Epoch, cfg.Epoch)
	}
	return importState(cfg, r.Checkpoint, nil)
}

// HasLocalState reports whether a container directory holds state of its
// own: a checkpoint or a log file ("wal/*.wal"). A directory that does
// not exist, or holds neither (only an epoch file, temporaries, a log
// directory with no log file), has none.
func HasLocalState(fs vfs.FS, dir string) (bool, error) {
	if fs == nil {
		fs = vfs.Default
	}
	lsns, err := listCheckpoints(fs, dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("container: look for state in %s: %w", dir, err)
	}
	if len(lsns) > 0 {
		return true, nil
	}
	names, err := fs.List(filepath.Join(dir, "wal"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("container: look for a log in %s: %w", dir, err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".wal") {
			return true, nil
		}
	}
	return false, nil
}
