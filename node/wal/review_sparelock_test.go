package wal

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
)

// TestAppendDoesNotWaitForTheSparesDirectorySync: makeSpare holds the
// spare lock across the rename of a finished spare and the directory
// fsync after it, and the flusher takes that lock after every batch
// (watchRate, while no spare is ready) before it starts the batch's sync.
// So an append waits for the spare's directory fsync, a journal commit,
// on the log's hot path: the tail latency issue 13 set out to remove. Here
// the directory sync is held: the append never completes.
func TestAppendDoesNotWaitForTheSparesDirectorySync(t *testing.T) {
	dir := t.TempDir()
	efs := vfstest.New(vfs.Default)
	entered, release := make(chan struct{}), make(chan struct{})
	var enterOnce, releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	defer letGo()
	var renamed atomic.Bool
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpRename && strings.HasSuffix(path, spareName) {
			renamed.Store(true) // the spare's rename: its directory sync is next
		}
		if op == vfstest.OpSyncDir && renamed.Load() {
			enterOnce.Do(func() { close(entered) })
			<-release
		}
		return nil
	})
	w, _ := mustOpen(t, Options{Dir: dir, FS: efs, FileSize: 1 << 20, Preallocate: true}, 1)
	defer w.Close()
	defer letGo()
	select {
	case <-entered: // the spare (asked for at Open) is renamed; its directory sync is held
	case <-time.After(20 * time.Second):
		t.Fatal("no spare reached its directory sync in 20s")
	}
	done := make(chan error, 1)
	go func() {
		p, err := w.Append(testType, []byte("one record"))
		if err == nil {
			err = p.Wait()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an append did not complete in 10s while the spare's directory sync was held: the flusher waits for the spare lock (watchRate)")
	}
}
