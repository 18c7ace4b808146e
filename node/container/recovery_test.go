package container

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

// TestRecoveryWritersAtTheCut: a recovery record gives each writer the
// event number of its last block in tier 2, also for blocks that came
// from a checkpoint (a restart between the appends and the record) and
// around a merged transaction; after an import, a resend of that event
// is recognised and the next one taken, at the tiered end.
func TestRecoveryWritersAtTheCut(t *testing.T) {
	chunks := newMemChunks()
	dir := filepath.Join(t.TempDir(), "a")
	c := open(t, Config{Dir: dir, Chunks: chunks, Epoch: 1})
	a := protocol.SegmentName("sc", "st", 0, 0)
	tx := protocol.TransactionSegmentName(a, "00000000-0000-0000-0000-000000000007")
	for _, n := range []string{a, tx} {
		if err := c.Create(n, nil); err != nil {
			t.Fatal(err)
		}
	}
	// ends[w][k] is where writer w's event k+1 ends.
	ends := map[string][]int64{}
	for i := range 20 {
		for _, w := range []string{"wa", "wb"} {
			r := appendEvents(t, c, a, w, int64(i+1), fmt.Sprint(w, "-", i))
			if r.Duplicate {
				t.Fatal("not a resend")
			}
			info, _ := c.Info(a)
			ends[w] = append(ends[w], info.Length)
		}
	}
	if err := c.Close(); err != nil { // the extents, with their writers, go through a checkpoint
		t.Fatal(err)
	}
	c = open(t, Config{Dir: dir, Chunks: chunks, Epoch: 1})
	appendEvents(t, c, tx, "wt", 1, "in the transaction")
	if _, err := c.Seal(tx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Merge(a, tx); err != nil {
		t.Fatal(err)
	}
	_, tiered := chunks.tier(t, c, a, ends["wa"][12]-1) // whole blocks: up to wb's 12th event
	rec, err := c.ExportRecovery(1)
	if err != nil {
		t.Fatal(err)
	}
	info, err := DecodeRecovery(rec.Blob)
	if err != nil || info.Container != 0 || info.Epoch != 1 || info.Seq != 1 {
		t.Fatalf("DecodeRecovery: %+v, %v", info, err)
	}
	n, err := ImportRecovery(Config{Dir: filepath.Join(t.TempDir(), "b"), Chunks: chunks, Epoch: 1}, rec.Blob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	if got, _ := n.Info(a); got.Length != tiered {
		t.Fatalf("imported length %d, want the tiered end %d", got.Length, tiered)
	}
	for _, w := range []string{"wa", "wb"} {
		last := int64(0)
		for k, end := range ends[w] {
			if end <= tiered {
				last = int64(k + 1)
			}
		}
		r, err := n.Append(Append{Segment: a, Writer: w, EventNumber: last, EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset, Data: block("resend")})
		if err != nil || !r.Duplicate {
			t.Fatalf("%s: a resend of event %d (its last in tier 2): %+v, %v", w, last, r, err)
		}
		r, err = n.Append(Append{Segment: a, Writer: w, EventNumber: last + 1, EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset, Data: block("next")})
		if err != nil || r.Duplicate {
			t.Fatalf("%s: event %d after the import: %+v, %v", w, last+1, r, err)
		}
	}
	// The transaction was merged: it is gone from the record too.
	if _, err := n.Info(tx); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("the merged transaction: %v", err)
	}
}

// TestImportRecoveryRefusals: another container's record, a later
// epoch's, and damaged ones are refused with one error each and change
// nothing.
func TestImportRecoveryRefusals(t *testing.T) {
	chunks := newMemChunks()
	c := open(t, Config{Dir: filepath.Join(t.TempDir(), "a"), Chunks: chunks, Epoch: 3})
	c.Create(seg, nil)
	rec, err := c.ExportRecovery(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "b")
	for _, tc := range []struct {
		name string
		cfg  Config
		blob []byte
		want error
	}{
		{"another container's", Config{ID: 1, Epoch: 3}, rec.Blob, ErrBadRecovery},
		{"a later epoch's", Config{Epoch: 2}, rec.Blob, ErrStaleEpoch},
		{"truncated", Config{Epoch: 3}, rec.Blob[:len(rec.Blob)-1], ErrBadRecovery},
		{"a hand-over", Config{Epoch: 3}, append([]byte(handoverMagic), rec.Blob[8:]...), ErrBadRecovery},
	} {
		tc.cfg.Dir, tc.cfg.Chunks = dir, chunks
		if _, err := ImportRecovery(tc.cfg, tc.blob); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if has, err := HasLocalState(nil, dir); err != nil || has {
			t.Errorf("%s: the refusal left state in %s: %v, %v", tc.name, dir, has, err)
		}
	}
}

// FuzzDecodeRecovery: any bytes decode to a record that restores, or to
// an error matching ErrBadRecovery; never a panic.
func FuzzDecodeRecovery(f *testing.F) {
	chunks := newMemChunks()
	dir := f.TempDir()
	c, err := Open(Config{Dir: dir, Chunks: chunks, Epoch: 1})
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	c.Create(seg, map[string]int64{"k": 1})
	for i := range 5 {
		c.Append(Append{Segment: seg, Writer: "w", EventNumber: int64(i + 1), EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset, Data: block(fmt.Sprint("e", i))})
	}
	f.Add(func() []byte {
		rec, err := c.ExportRecovery(1)
		if err != nil {
			f.Fatal(err)
		}
		return rec.Blob
	}())
	f.Add([]byte(recoveryMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecovery(b)
		if err != nil {
			if !errors.Is(err, ErrBadRecovery) {
				t.Fatalf("an error not matching ErrBadRecovery: %v", err)
			}
			return
		}
		if _, err := restore(r.Checkpoint); err != nil {
			t.Fatalf("a record that decoded does not restore: %v", err)
		}
	})
}
