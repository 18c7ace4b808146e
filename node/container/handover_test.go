package container

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

func TestHandOverCarriesEverything(t *testing.T) {
	chunks := newMemChunks()
	oldDir, newDir := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	c := open(t, Config{Dir: oldDir, Chunks: chunks, Epoch: 1, WALFileSize: 4096})
	a, b := protocol.SegmentName("sc", "st", 0, 0), protocol.SegmentName("sc", "st", 1, 0)
	tx := protocol.TransactionSegmentName(a, "00000000-0000-0000-0000-000000000007")
	for _, n := range []string{a, b, tx} {
		if err := c.Create(n, map[string]int64{"k": 7}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		appendEvents(t, c, a, "wa", int64(i+1), fmt.Sprint("a-", i))
		appendEvents(t, c, b, "wb", int64(i+1), fmt.Sprint("b-", i))
	}
	appendEvents(t, c, tx, "wt", 1, "in the transaction")
	chunks.tier(t, c, a, 100)
	chunks.partBytes = 40 // the chunks tiered from here have marks; they travel too
	c.Seal(b)

	c.Freeze()
	if _, err := c.Append(Append{Segment: a, Writer: "wa", EventNumber: 100, EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset,
		Data: block("refused")}); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("append to a frozen container: %v, want ErrWrongHost", err)
	}
	// The storage writer still tiers while frozen.
	for _, n := range []string{a, b} {
		for {
			if _, l := chunks.tier(t, c, n, 1000); l == 0 {
				break
			}
		}
	}
	want := map[string][]byte{}
	for _, n := range []string{a, b, tx} {
		want[n] = readBytes(t, c, n)
	}
	live := durableState(c)
	blob, err := c.ExportHandover()
	if err != nil {
		t.Fatal(err)
	}

	// The new owner: a stale directory of its own is replaced.
	os.MkdirAll(newDir, 0o755)
	os.WriteFile(filepath.Join(newDir, "stale"), []byte("x"), 0o644)
	n, err := ImportHandover(Config{Dir: newDir, Chunks: chunks, Epoch: 2}, blob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	if _, err := os.Stat(filepath.Join(newDir, "stale")); !os.IsNotExist(err) {
		t.Fatalf("the new owner's stale file survived the import: %v", err)
	}
	got := durableState(n)
	for i := range got.Segments { // the log's addresses differ, the rest must not
		got.Segments[i].Extents, live.Segments[i].Extents = nil, nil
		got.Segments[i].ExtentBase, live.Segments[i].ExtentBase = 0, 0
		// The logged bytes come back as one block with no writer.
		got.Segments[i].ExtentWriters, live.Segments[i].ExtentWriters = nil, nil
	}
	if fmt.Sprint(got.Segments) != fmt.Sprint(live.Segments) || fmt.Sprint(got.Gone) != fmt.Sprint(live.Gone) {
		t.Fatalf("imported state differs\n got %+v\nwant %+v", got, live)
	}
	for name, w := range want {
		if g := readBytes(t, n, name); !bytes.Equal(g, w) {
			t.Fatalf("%s reads back differently after the hand-over", name)
		}
	}
	// Bytes still only in the log keep their age: the tier-2 lag bound
	// does not restart at a hand-over.
	was, _ := c.TierState(tx)
	now, _ := n.TierState(tx)
	if was.Untiered == 0 || now.Untiered != was.Untiered || !now.Oldest.Equal(was.Oldest) {
		t.Fatalf("untiered bytes of %s: %d from %v before the hand-over, %d from %v after", tx, was.Untiered, was.Oldest, now.Untiered, now.Oldest)
	}
	// Writers resume where they were, the transaction commits.
	if last, err := n.SetupAppend(a, "wa"); err != nil || last != 30 {
		t.Fatalf("writer wa after the hand-over: last %d, %v; want 30", last, err)
	}
	if r, err := n.Append(Append{Segment: a, Writer: "wa", EventNumber: 30, EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset,
		Data: block("resent")}); err != nil || !r.Duplicate {
		t.Fatalf("a resend after the hand-over: %+v, %v; want a duplicate", r, err)
	}
	if _, err := n.Seal(tx); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Merge(a, tx); err != nil {
		t.Fatalf("commit of a transaction carried by the hand-over: %v", err)
	}
	if epoch, _ := ReadEpoch(nil, newDir); epoch != 2 {
		t.Fatalf("epoch file holds %d, want 2", epoch)
	}
	// And the imported container survives its own restart.
	after := readBytes(t, n, a)
	n.Close()
	n2 := open(t, Config{Dir: newDir, Chunks: chunks, Epoch: 2})
	if g := readBytes(t, n2, a); !bytes.Equal(g, after) {
		t.Fatal("the imported container reads back differently after a restart")
	}
}

func TestHandOverRefusals(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir(), Chunks: newMemChunks()})
	if _, err := c.ExportHandover(); err == nil {
		t.Fatal("export of a container that is not frozen succeeded")
	}
	c.Freeze()
	blob, err := c.ExportHandover()
	if err != nil {
		t.Fatal(err)
	}
	for i := range blob {
		bad := bytes.Clone(blob)
		bad[i] ^= 0x40
		if _, err := ImportHandover(Config{Dir: filepath.Join(t.TempDir(), "x")}, bad); !errors.Is(err, ErrBadHandover) {
			t.Fatalf("import of a blob with byte %d flipped: %v, want ErrBadHandover", i, err)
		}
	}
}
