package container

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

func TestEpochZeroWritesNothing(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{ID: 1, Dir: dir})
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, EpochFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("standalone container wrote an epoch file: %v", err)
	}
	if c.Epoch() != 0 {
		t.Fatalf("Epoch = %d", c.Epoch())
	}
}

func TestEpochRecordedAndStaleRefused(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(Config{ID: 3, Dir: dir, Epoch: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, c, seg, "w", 1, "a")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if e, err := ReadEpoch(nil, dir); err != nil || e != 5 {
		t.Fatalf("ReadEpoch = %d, %v; want 5", e, err)
	}
	// An older assignment is refused, naming the directory; the file stays.
	_, err = Open(Config{ID: 3, Dir: dir, Epoch: 4})
	if !errors.Is(err, ErrStaleEpoch) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Open under epoch 4 = %v, want ErrStaleEpoch naming %s", err, dir)
	}
	if e, _ := ReadEpoch(nil, dir); e != 5 {
		t.Fatalf("epoch file changed to %d by a refused open", e)
	}
	// The same epoch reopens; a higher one is recorded. Data survives.
	for _, epoch := range []int64{5, 7} {
		c := open(t, Config{ID: 3, Dir: dir, Epoch: epoch})
		if got := readAll(t, c, seg, 0); len(got) != 1 || got[0] != "a" {
			t.Fatalf("epoch %d: read %v", epoch, got)
		}
		c.Close()
		if e, _ := ReadEpoch(nil, dir); e != epoch {
			t.Fatalf("epoch file holds %d, want %d", e, epoch)
		}
	}
}

func TestEpochFileGarbageRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, EpochFile), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{ID: 0, Dir: dir, Epoch: 1}); err == nil || !strings.Contains(err.Error(), EpochFile) {
		t.Fatalf("Open = %v, want an error naming the epoch file", err)
	}
}

func TestFenceStopsEveryChange(t *testing.T) {
	c := open(t, Config{ID: 2, Dir: t.TempDir(), Epoch: 1})
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, c, seg, "w", 1, "a")
	c.Fence()
	if !c.Fenced() {
		t.Fatal("Fenced() = false after Fence")
	}
	other := protocol.SegmentName("sc", "st", 1, 0)
	_, appendErr := c.Append(Append{Segment: seg, Writer: "w", EventNumber: 2, EventCount: 1,
		ExpectedOffset: protocol.NoExpectedOffset, Data: block("b")})
	_, sealErr := c.Seal(seg)
	_, truncErr := c.Truncate(seg, 0)
	_, mergeErr := c.Merge(seg, other)
	_, setupErr := c.SetupAppend(seg, "w")
	for name, err := range map[string]error{
		"Create":           c.Create(other, nil),
		"Append":           appendErr,
		"Seal":             sealErr,
		"Truncate":         truncErr,
		"Merge":            mergeErr,
		"SetupAppend":      setupErr,
		"Delete":           c.Delete(seg),
		"UpdateAttributes": c.UpdateAttributes(seg, []protocol.AttributeUpdate{{Key: "k", Value: 1}}),
	} {
		if !errors.Is(err, protocol.ErrWrongHost) {
			t.Errorf("%s after Fence = %v, want ErrWrongHost", name, err)
		}
	}
	// Reads of what was acknowledged still work.
	if got := readAll(t, c, seg, 0); len(got) != 1 || got[0] != "a" {
		t.Fatalf("read after fence: %v", got)
	}
}
