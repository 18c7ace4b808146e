package tiering

import (
	"errors"
	"fmt"
	"path"

	"github.com/sluice-streams/sluice/tier2"
)

// RecoveryKeep is how many of a container's recovery records the writer
// keeps in tier 2: the newest, and the one before it (which an operator
// can fall back on by removing a damaged newest one).
const RecoveryKeep = 2

// record writes the container's recovery record to tier 2 if the
// container changed (other than by appends not yet tiered) since the last
// one this writer wrote, or if it wrote none yet. A pass calls it before
// it removes any file (so that no record still in tier 2 names a chunk
// truncation or deletion dropped, except one older than a record that
// does not) and after it tiers (so that what it tiered is recoverable).
func (w *Writer) record() error {
	if w.cfg.NoRecoveryRecords {
		return nil
	}
	if w.recorded && w.c.MetaChanges() == w.recChanges {
		return w.removeStaleHandover() // a failed removal is tried again
	}
	if !w.recListed {
		// Continue the sequence of records this epoch already has (a
		// restart on the same disk, a standalone node: epoch 0 forever),
		// and learn the older records to remove as newer ones are written.
		recs, err := w.listRecords()
		if err != nil {
			return err
		}
		for _, r := range recs {
			if r.epoch == w.c.Epoch() && r.seq > w.recSeq {
				w.recSeq = r.seq
			}
		}
		for _, r := range recs { // oldest first
			if r.epoch < w.c.Epoch() || (r.epoch == w.c.Epoch() && r.seq <= w.recSeq) {
				w.recOlder = append(w.recOlder, r.name)
			}
		}
		w.recListed = true
	}
	seq := w.recSeq + 1
	rec, err := w.c.ExportRecovery(seq)
	if err != nil {
		return err
	}
	p := tier2.RecoveryPath(w.c.ID(), w.c.Epoch(), seq)
	if err := WriteWhole(w.cfg.Store, p, rec.Blob); err != nil {
		return fmt.Errorf("tiering: recovery record: %w", err)
	}
	w.recSeq, w.recChanges, w.recorded = seq, rec.Changes, true
	w.c.Recorded(rec)
	w.recOlder = append(w.recOlder, p)
	if err := w.removeStaleHandover(); err != nil {
		return err
	}
	return w.trimRecords()
}

// removeStaleHandover removes, once a record of this writer is in tier
// 2, the hand-over of this epoch if tier 2 has one. That hand-over is
// this container's own, written by a release whose move was then called
// off (the map kept the container here; the leader raises the epoch
// when it sees the release confirmed with no move left, but the owner
// may host it again under the same epoch first). Restore takes a
// hand-over of an epoch as newer than its records: now that a record
// holds what came after it, it must go, or a lost disk would bring back
// its older state. No node imports it any more.
func (w *Writer) removeStaleHandover() error {
	if !w.recorded || w.handoverGone {
		return nil
	}
	hp := tier2.HandoverPath(w.c.ID(), w.c.Epoch())
	if err := w.cfg.Store.Remove(hp); err != nil && !errors.Is(err, tier2.ErrNotExist) {
		return fmt.Errorf("tiering: remove the hand-over %s left by a cancelled move: %w", hp, err)
	}
	w.handoverGone = true
	return nil
}

type recordName struct {
	name  string
	epoch int64
	seq   uint64
}

// listRecords lists the container's recovery records in tier 2, oldest
// first.
func (w *Writer) listRecords() ([]recordName, error) {
	dir := tier2.RecoveryDir(w.c.ID())
	ents, err := w.cfg.Store.List(dir)
	if errors.Is(err, tier2.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tiering: list %s: %w", dir, err)
	}
	var out []recordName
	for _, e := range ents { // sorted by name: by (epoch, seq)
		if ep, seq, ok := tier2.ParseRecoveryName(e.Name); ok {
			out = append(out, recordName{path.Join(dir, e.Name), ep, seq})
		}
	}
	return out, nil
}

// trimRecords removes the container's recovery records but the
// RecoveryKeep newest this writer knows of: those it found older than its
// own when it first listed, and those it wrote. A record of a later
// epoch (a newer owner's) is never among them.
func (w *Writer) trimRecords() error {
	for len(w.recOlder) > RecoveryKeep {
		p := w.recOlder[0]
		if err := w.cfg.Store.Remove(p); err != nil && !errors.Is(err, tier2.ErrNotExist) {
			return fmt.Errorf("tiering: remove old recovery record %s: %w", p, err)
		}
		w.recOlder = w.recOlder[1:]
	}
	return nil
}

// WriteWhole makes a file appear in tier 2 whole: temporary name (with
// the prefix readers skip), close (durable), rename over p.
func WriteWhole(st tier2.Storage, p string, data []byte) error {
	tmp := path.Join(path.Dir(p), "_tmp."+path.Base(p))
	st.Remove(tmp)
	f, err := st.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := st.Rename(tmp, p); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return nil
}
