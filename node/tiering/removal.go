package tiering

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
)

// Deleting a stream's data: a deleted segment's chunks are unlinked one
// at a time, each followed by a pause as long as the unlink took (at most
// maxRemovePause), and a pass spends at most its removal budget
// (Config.Tick/2, at least minRemoveBudget) on them before it tiers;
// the next pass goes on where it stopped. Unlinking gigabytes of chunks
// at once held the filesystem's journal for a second and more, and the
// log's syncs, which commit that journal, waited behind it
// (docs/BENCHMARKS.md, "Background I/O"). Flush removes everything
// without pauses.
const (
	maxRemovePause  = 20 * time.Millisecond
	minRemoveBudget = 50 * time.Millisecond
)

// behind reports whether the segment's oldest untiered block is three
// quarters of its lag bound old: its chunks are then written without the
// backend's pacing (tier2.Paced), so that tiering keeps the bound rather
// than yield the disk to the log.
func (w *Writer) behind(ts container.TierState) bool {
	lag := w.cfg.Policy.forSegment(ts).MaxLag
	return !ts.Oldest.IsZero() && w.cfg.Now().Sub(ts.Oldest) >= lag*3/4
}

// removal paces the removal of files within one pass. A nil *removal
// removes without pauses or budget.
type removal struct {
	ctx     context.Context
	until   time.Time
	removed int // files removed in this pass
}

func (w *Writer) newRemoval(ctx context.Context, all bool) *removal {
	if all {
		return nil
	}
	return &removal{ctx: ctx, until: time.Now().Add(w.removeBudget)}
}

// removeBudget is a pass's time for removing deleted segments' files.
func removeBudget(tick time.Duration) time.Duration { return max(tick/2, minRemoveBudget) }

// over reports whether the pass's removal budget is spent. Every pass
// removes at least one file.
func (r *removal) over() bool {
	return r != nil && r.removed > 0 && !time.Now().Before(r.until)
}

// remove removes p and then pauses as long as that took.
func (r *removal) remove(store tier2.Storage, p string) error {
	start := time.Now()
	err := store.Remove(p)
	if r == nil || err != nil {
		return err
	}
	r.removed++
	t := time.NewTimer(min(time.Since(start), maxRemovePause))
	defer t.Stop()
	select {
	case <-r.ctx.Done():
		return r.ctx.Err()
	case <-t.C:
		return nil
	}
}

// removeSegment removes a deleted segment's chunks, its directory and,
// if it is empty now, its stream's directory, then forgets the segment.
// It reports false, having forgotten nothing, when the pass's removal
// budget ran out first: the segment stays in Gone and the next pass goes
// on.
func (w *Writer) removeSegment(name string, r *removal) (bool, error) {
	q, err := protocol.ParseSegmentName(name)
	if err != nil {
		return false, err
	}
	dir := tier2.SegmentDir(q.Scope, q.Stream, q.Number)
	entries, err := w.cfg.Store.List(dir)
	if errors.Is(err, tier2.ErrNotExist) {
		entries, err = nil, nil
	}
	if err != nil {
		return false, fmt.Errorf("tiering: list %s: %w", dir, err)
	}
	for _, e := range entries {
		if r.over() {
			return false, nil
		}
		if e.IsDir {
			continue // not the writer's: RemoveAll below
		}
		if err := r.remove(w.cfg.Store, path.Join(dir, e.Name)); err != nil && !errors.Is(err, tier2.ErrNotExist) {
			return false, fmt.Errorf("tiering: remove %s/%s: %w", dir, e.Name, err)
		}
	}
	if err := w.cfg.Store.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("tiering: remove %s: %w", dir, err)
	}
	// Best effort: the stream's other segments may still be there.
	w.cfg.Store.Remove(tier2.StreamDir(q.Scope, q.Stream))
	delete(w.known, name)
	return true, w.c.Forget(name)
}
