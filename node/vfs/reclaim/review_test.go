package reclaim_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-streams/sluice/node/vfs/reclaim"
)

// A file handed over that has another hard link (a hard-link backup of
// tier 2 or a data directory: rsync --link-dest, cp -al) is shared data:
// truncating the inode empties the other name too. Only this name may go.
func TestRemoveNeverTruncatesAHardLinkedFile(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "chunk", 2<<20)
	backup := filepath.Join(dir, "backup-chunk")
	if err := os.Link(p, backup); err != nil {
		t.Fatal(err)
	}
	r := reclaim.New(reclaim.Config{Step: 1 << 20})
	defer r.Close()
	if err := r.Remove(p, filepath.Join(dir, "trash")); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, r)
	st, err := os.Stat(backup)
	if err != nil || st.Size() != 2<<20 {
		t.Fatalf("the other hard link after the reclaimer freed its twin: %v, size %d; want untouched (%d bytes)", err, st.Size(), 2<<20)
	}
}
