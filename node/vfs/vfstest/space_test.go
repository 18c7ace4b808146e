package vfstest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sluice-streams/sluice/node/vfs"
)

// TestFreeSpace: growth takes from the limit, a write that does not fit
// writes what fits and fails with ENOSPC, overwrites are free, and
// truncation, removal and a replacing rename give space back.
func TestFreeSpace(t *testing.T) {
	dir := t.TempDir()
	e := New(vfs.Default)
	e.SetFreeSpace(100)
	name := filepath.Join(dir, "f")
	f, err := e.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.WriteAt(make([]byte, 60), 0); n != 60 || err != nil {
		t.Fatalf("write within the limit: %d, %v", n, err)
	}
	if n, err := f.WriteAt(make([]byte, 60), 50); n != 50 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write past the limit: %d, %v; want 50 bytes and ENOSPC", n, err)
	}
	if got := e.FreeSpace(); got != 0 {
		t.Fatalf("free %d after filling, want 0", got)
	}
	if n, err := f.WriteAt([]byte{1, 2, 3}, 10); n != 3 || err != nil {
		t.Fatalf("overwrite on a full disk: %d, %v", n, err)
	}
	if err := f.Truncate(40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := e.FreeSpace(); got != 60 {
		t.Fatalf("free %d after truncating to 40, want 60", got)
	}
	other := filepath.Join(dir, "g")
	if err := vfs.WriteFileAtomic(e, other, make([]byte, 30), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Rename(other, name); err != nil { // replaces the 40-byte file
		t.Fatal(err)
	}
	if got := e.FreeSpace(); got != 70 {
		t.Fatalf("free %d after a replacing rename, want 70", got)
	}
	if err := e.Remove(name); err != nil {
		t.Fatal(err)
	}
	if got := e.FreeSpace(); got != 100 {
		t.Fatalf("free %d after removing everything, want 100", got)
	}
	e.SetFreeSpace(-1)
	if got := e.FreeSpace(); got != -1 {
		t.Fatalf("free %d without a limit", got)
	}
}
