package tiering

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// hookStore runs onRecord when a recovery record is renamed into place.
type hookStore struct {
	tier2.Storage
	onRecord func() error
	failNext bool // the next recovery record's rename fails (not done)
}

func (h *hookStore) Rename(from, to string) error {
	if h.failNext && strings.HasPrefix(to, "_sluice/recovery/") {
		return errors.New("injected: tier 2 down")
	}
	if err := h.Storage.Rename(from, to); err != nil {
		return err
	}
	if h.onRecord != nil && strings.HasPrefix(to, "_sluice/recovery/") {
		return h.onRecord()
	}
	return nil
}

// A deletion logged while a pass writes its first recovery record (after
// the record's snapshot) is removed from tier 2 by that same pass, so the
// newest record in tier 2 names chunks tier 2 no longer holds until the
// pass's closing record lands; if that one does not (crash, tier-2 error),
// a node that loses its disk imports a segment whose chunks are gone.
func TestRecordNeverNamesRemovedChunks(t *testing.T) {
	hs := &hookStore{Storage: tier2test.NewMem()}
	f := newFixture(t, hs, nil)
	f.create(segA, segB)
	f.write(segA, 50)
	f.write(segB, 50)
	if err := f.w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if files, _ := f.chunks(segB); len(files) == 0 {
		t.Fatal("segB has no chunks")
	}
	// A change other than an append, so that the next pass starts with a record.
	f.create("sc/st/2.#epoch.2")
	n := 0
	hs.onRecord = func() error {
		n++
		switch n {
		case 1: // the first record of the pass is in place: a client deletes segB
			if err := f.c.Delete(segB); err != nil {
				t.Fatal(err)
			}
			// the pass's closing record does not land (crash / tier 2 down)
			hs.failNext = true
		}
		return nil
	}
	_ = f.w.Pass(t.Context())
	hs.onRecord, hs.failNext = nil, false

	// The node's disk is lost: import the newest record.
	ents, err := hs.List(tier2.RecoveryDir(0))
	if err != nil {
		t.Fatal(err)
	}
	var newest string
	for _, e := range ents {
		if _, _, ok := tier2.ParseRecoveryName(e.Name); ok && e.Name > newest {
			newest = e.Name
		}
	}
	rf, err := hs.Open(tier2.RecoveryDir(0) + "/" + newest)
	if err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, rf.Size())
	k, _ := rf.ReadAt(blob, 0)
	rf.Close()
	cfg := f.cfg
	cfg.Dir = filepath.Join(t.TempDir(), "lost")
	c2, err := container.ImportRecovery(cfg, blob[:k])
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	t.Logf("hook calls %d, newest %s, records %v", n, newest, ents)
	info, err := c2.Info(segB)
	t.Logf("info %v err %v", info, err)
	if err != nil {
		return // the record does not hold segB: consistent
	}
	dirB, _ := segmentDir(segB)
	if _, serr := hs.Stat(dirB); errors.Is(serr, tier2.ErrNotExist) {
		t.Fatalf("newest recovery record %s holds %s [%d,%d), but the pass removed its chunks from tier 2 (%s is gone)",
			newest, segB, info.StartOffset, info.Length, dirB)
	}
}
