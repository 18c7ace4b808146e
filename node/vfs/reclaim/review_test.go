package reclaim_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
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

// Resume of a trash whose files the Reclaimer already holds (a container
// closed and opened again on the same node: wal.Open resumes its trash
// every time) queues them again: the backlog counts them twice, and the
// second pass over each "frees" it again.
func TestResumeDoesNotQueueWhatIsAlreadyQueued(t *testing.T) {
	dir := t.TempDir()
	trash := filepath.Join(dir, "trash")
	r, stepped := stalledAfterAStep()
	defer r.Close()
	for _, n := range []string{"a", "b"} {
		if err := r.Remove(writeFile(t, dir, n, 3<<20), trash); err != nil {
			t.Fatal(err)
		}
	}
	<-stepped // then the reclaimer pauses, once it has counted the step
	for deadline := time.Now().Add(10 * time.Second); r.Backlog() != 5<<20; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Backlog = %d after one step, want %d", r.Backlog(), 5<<20)
		}
	}
	before := r.Backlog()
	if err := r.Resume(trash); err != nil {
		t.Fatal(err)
	}
	if got := r.Backlog(); got != before {
		t.Fatalf("Backlog = %d after Resume of a trash it already holds, want %d", got, before)
	}
}

// A nil Reclaimer "removes at once" like an unlink: handed a symbolic
// link to a directory, it must remove the link, not empty the directory
// it points to (vfs.RemoveAll stats through links).
func TestNilReclaimerNeverFollowsALink(t *testing.T) {
	dir := t.TempDir()
	outside := writeFile(t, t.TempDir(), "precious", 10)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Dir(outside), link); err != nil {
		t.Fatal(err)
	}
	var r *reclaim.Reclaimer
	err := r.Remove(link, filepath.Join(dir, "trash"))
	if _, serr := os.Stat(outside); serr != nil {
		t.Fatalf("nil Reclaimer's Remove of a link to a directory (err %v) removed what it points to: %v", err, serr)
	}
}

// "The disk's space comes before the smoothness of the syncs": on a disk
// with no space left the log's next append fails (a sticky error: the
// container stops), yet below MaxBacklog (4 GiB by default) the reclaimer
// keeps its pace and never asks how much space is left.
func TestAFullDiskIsFreedWithoutPauses(t *testing.T) {
	dir := t.TempDir()
	efs := vfstest.New(vfs.Default)
	efs.SetFreeSpace(0)
	r := reclaim.New(reclaim.Config{FS: efs, Step: 1 << 20, Rate: 1, MaxBacklog: 1 << 40})
	defer r.Close()
	if err := r.Remove(writeFile(t, dir, "log", 3<<20), filepath.Join(dir, "trash")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.WaitIdle(ctx); err != nil {
		t.Fatalf("on a full disk, %d bytes still wait in the trash after 5 s: %v", r.Backlog(), err)
	}
}

// A grace is not waited out on a disk short of space either.
func TestAFullDiskDoesNotWaitOutTheGrace(t *testing.T) {
	dir := t.TempDir()
	efs := vfstest.New(vfs.Default)
	efs.SetFreeSpace(0)
	r := reclaim.New(reclaim.Config{FS: efs, Step: 1 << 20})
	defer r.Close()
	if err := r.RemoveAfter(writeFile(t, dir, "chunk", 2<<20), filepath.Join(dir, "trash"), time.Hour); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.WaitIdle(ctx); err != nil {
		t.Fatalf("on a full disk, %d bytes still wait out their hour of grace: %v", r.Backlog(), err)
	}
}
