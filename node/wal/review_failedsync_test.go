package wal

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
)

// TestNoRollAfterAFailedSync: a batch's fsync of a growing file fails
// while the next batch, which starts a new file (a full roll, or an early
// roll into a spare), is already taken by the flusher. The failed batch's
// pages may never reach the disk (after a failed fsync the kernel drops
// them), so the file is not "fsynced whole": the log must not start the
// next file. If it does, a crash leaves the failed batch missing from a
// file that is not the last, and Open refuses the log although nothing
// acknowledged was lost.
func TestNoRollAfterAFailedSync(t *testing.T) {
	for _, early := range []bool{false, true} {
		name := "full roll"
		if early {
			name = "early roll into a spare"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			efs := vfstest.New(vfs.Default)
			// The spare (asked for at Open: the first file grows) is held
			// at its final fsync until K's fsync runs, so that K goes to file 1.
			spareGo := make(chan struct{})
			entered, release := make(chan struct{}), make(chan struct{})
			var armed, once atomic.Bool
			efs.SetInjector(func(op vfstest.Op, path string) error {
				if op == vfstest.OpSync && strings.HasSuffix(path, spareTmpName) {
					<-spareGo
				}
				if armed.Load() && op == vfstest.OpSync && strings.HasSuffix(path, fileName(1)) && once.CompareAndSwap(false, true) {
					close(entered)
					<-release
					return vfstest.ErrInjected
				}
				return nil
			})
			opts := Options{Dir: dir, FS: efs, FileSize: 64 << 10, Preallocate: early}
			w, _ := mustOpen(t, opts, 1)
			var openSpare sync.Once
			letSpareGo := func() { openSpare.Do(func() { close(spareGo) }) }
			defer letSpareGo()
			// Acknowledged records: 24 KiB of file 1.
			n := 0
			for ; n < 3; n++ {
				p, err := w.Append(testType, make([]byte, 8<<10))
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Wait(); err != nil {
					t.Fatal(err)
				}
			}
			armed.Store(true)
			// Batch K: a small record; its fsync (the file grows) blocks.
			pk, err := w.Append(testType, []byte("K"))
			if err != nil {
				t.Fatal(err)
			}
			<-entered
			if pk.Addr.File != 1 {
				t.Fatalf("K went to file %d, want 1", pk.Addr.File)
			}
			if early {
				letSpareGo()
				deadline := time.Now().Add(20 * time.Second)
				for !w.spareOK.Load() {
					if time.Now().After(deadline) {
						t.Fatal("no spare after 20s")
					}
					time.Sleep(time.Millisecond)
				}
			}
			// Batch K+1: 40 KiB, over the pipelining threshold, so the
			// flusher takes it while K's sync runs; it goes to file 2
			// (it does not fit in file 1, or file 1 rolls early).
			size := 40 << 10
			if early {
				size = 33 << 10
			}
			pk1, err := w.Append(testType, make([]byte, size))
			if err != nil {
				t.Fatal(err)
			}
			if pk1.Addr.File != 2 {
				t.Fatalf("K+1 went to file %d, want 2", pk1.Addr.File)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				w.mu.Lock()
				taken := len(w.mu.inflight) == 2
				w.mu.Unlock()
				if taken {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the flusher did not take K+1 while K synced")
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond) // into roll, waiting for K's sync
			close(release)
			if err := pk.Wait(); err == nil {
				t.Fatal("K acknowledged after a failed fsync")
			}
			if err := pk1.Wait(); err == nil {
				t.Fatal("K+1 acknowledged after a failed fsync")
			}
			letSpareGo()
			w.Close()
			if _, err := os.Stat(filepath.Join(dir, fileName(2))); err == nil {
				t.Errorf("the log started %s after the fsync of %s failed: that file was not fsynced whole", fileName(2), fileName(1))
			}
			// A crash: the failed fsync's pages never reached the disk.
			if err := os.Truncate(filepath.Join(dir, fileName(1)), pk.Addr.Offset); err != nil {
				t.Fatal(err)
			}
			w2, recs, err := openCollect(Options{Dir: dir, FileSize: 64 << 10, Preallocate: early}, 1)
			if err != nil {
				t.Fatalf("Open after a failed sync and a crash, with every acknowledged record intact: %v", err)
			}
			defer w2.Close()
			if len(recs) != n {
				t.Fatalf("recovered %d records, want the %d acknowledged", len(recs), n)
			}
		})
	}
}
