package wal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
)

const earlyFileSize = 1 << 20

// earlyRolled opens a new preallocating log (no test shortcut: the rules a
// node runs with), appends until the log has rolled early out of its
// growing first file into a spare, and returns the log and how many
// records it appended: the last of them is the first of the new file.
func earlyRolled(t *testing.T, opts Options) (*WAL, int) {
	t.Helper()
	w, _ := mustOpen(t, opts, 1)
	n := 0
	deadline := time.Now().Add(20 * time.Second)
	for w.Stats().EarlyRolls == 0 {
		if time.Now().After(deadline) {
			w.Close()
			t.Fatalf("no early roll after 20s: %+v", w.Stats())
		}
		writeN(t, w, n, 1)
		n++
		if w.Stats().Rolls > 0 && w.Stats().EarlyRolls == 0 {
			w.Close()
			t.Fatalf("the log rolled, but not early into a spare: %+v", w.Stats())
		}
		time.Sleep(time.Millisecond) // pace the appends: a slow log, which can afford a spare
	}
	return w, n
}

// TestNewLogRollsEarlyIntoSpare: a new log's first file grows; Open asks
// for a spare, and once it is ready the next append rolls into it although
// the first file is far from full. Appends in the spare are
// made durable with fdatasync, and the log replays across the short file.
func TestNewLogRollsEarlyIntoSpare(t *testing.T) {
	dir := t.TempDir()
	efs := vfstest.New(vfs.Default)
	w, n := earlyRolled(t, Options{Dir: dir, FS: efs, FileSize: earlyFileSize, Preallocate: true})
	syncData := efs.Count(vfstest.OpSyncData)
	writeN(t, w, n, 20)
	if efs.Count(vfstest.OpSyncData) == syncData {
		t.Fatal("appends after the early roll were not made durable with fdatasync")
	}
	st := w.Stats()
	if st.Files != 2 || st.SpareRolls != 1 || st.EarlyRolls != 1 {
		t.Fatalf("stats %+v, want two files, one early roll into a spare", st)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	first, _ := os.Stat(filepath.Join(dir, fileName(1)))
	second, _ := os.Stat(filepath.Join(dir, fileName(2)))
	if first.Size() >= earlyFileSize/2 || second.Size() != earlyFileSize {
		t.Fatalf("file sizes %d and %d: want a short first file and a preallocated second", first.Size(), second.Size())
	}
	w, recs := mustOpen(t, Options{Dir: dir, FileSize: earlyFileSize, Preallocate: true}, 1)
	defer w.Close()
	checkRecords(t, recs, 1, 0, n+20)
	if w.Repaired() != nil {
		t.Fatalf("a clean log with an early-rolled file was repaired: %+v", w.Repaired())
	}
	if recs[n-2].Addr.File != 1 || recs[n-1].Addr.File != 2 {
		t.Fatalf("records %d and %d are in files %d and %d, want 1 and 2", n-2, n-1, recs[n-2].Addr.File, recs[n-1].Addr.File)
	}
	// Appends go on after a reopen: the last file is the preallocated one.
	writeN(t, w, n+20, 5)
}

// TestTornTailAfterEarlyRoll: a crash after an early roll leaves garbage
// after the new file's last record: recovery zeroes it as a torn tail and
// keeps every record, those of the short file before it too. Damage inside
// the short file, which was fsynced whole before the roll, is refused.
// (A torn first record of the new file: TestEarlyRollFailures.)
func TestTornTailAfterEarlyRoll(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    uint64
		at      func(ps []Pending, n int) int64 // offset of the damage
		keep    func(n int) int                 // records recovered
		corrupt bool
	}{
		{"after the last record", 2, func(ps []Pending, n int) int64 {
			last := ps[len(ps)-1]
			return last.Addr.Offset + RecordHeaderSize + int64(len(payloadFor(n+2)))
		}, func(n int) int { return n + 3 }, false},
		{"in the short file", 1, func(ps []Pending, n int) int64 { return FileHeaderSize }, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, n := earlyRolled(t, Options{Dir: dir, FileSize: earlyFileSize, Preallocate: true})
			ps := writeN(t, w, n, 3)
			if ps[0].Addr.File != 2 {
				t.Fatalf("records after the early roll went to file %d", ps[0].Addr.File)
			}
			w.Close()
			name := filepath.Join(dir, fileName(tc.file))
			f, err := os.OpenFile(name, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			off := tc.at(ps, n)
			if _, err := f.WriteAt([]byte("torn garbage of an interrupted write"), off); err != nil {
				t.Fatal(err)
			}
			f.Close()
			before := dirHash(t, dir)
			w, recs, err := openCollect(Options{Dir: dir, FileSize: earlyFileSize, Preallocate: true}, 1)
			if tc.corrupt {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), fileName(1)) {
					t.Fatalf("Open = %v, want ErrCorrupt naming %s", err, fileName(1))
				}
				if dirHash(t, dir) != before {
					t.Fatal("the refusal changed the files")
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer w.Close()
			if w.Repaired() == nil || w.Repaired().File != name || w.Repaired().Offset != off {
				t.Fatalf("repair %+v, want one in %s at %d", w.Repaired(), name, off)
			}
			keep := tc.keep(n)
			checkRecords(t, recs, 1, 0, keep)
			writeN(t, w, keep, 3) // and the log takes appends where the tail was
		})
	}
}

// TestEarlyRollFailures: an injected error in each step of an early roll
// (the fsync of the growing file, the header written into the spare, its
// fdatasync, the rename, the directory sync, the first record's write,
// torn) fails the log, stickily; the records acknowledged before are all
// recovered, and the failed one, never acknowledged, at most once; a torn
// first record in the new file is repaired as a torn tail.
func TestEarlyRollFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   vfstest.Op
		path string // suffix of the path the op fails on
	}{
		{"sync growing file before the roll", vfstest.OpSyncData, fileName(1)},
		{"write header into spare", vfstest.OpWrite, spareName},
		{"fdatasync spare", vfstest.OpSyncData, spareName},
		{"rename spare", vfstest.OpRename, fileName(2)},
		{"sync directory", vfstest.OpSyncDir, ""},
		{"torn first record in the new file", vfstest.OpWrite, fileName(2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			efs := vfstest.New(vfs.Default)
			efs.TornWrites = true
			w, _ := mustOpen(t, Options{Dir: dir, FS: efs, FileSize: earlyFileSize, Preallocate: true}, 1)
			// Records in the growing first file, then no append until the
			// spare Open asked for is ready: an append while it becomes
			// ready would roll early before the injector is set.
			n := 5
			writeN(t, w, 0, n)
			deadline := time.Now().Add(20 * time.Second)
			for !w.spareOK.Load() {
				if time.Now().After(deadline) {
					w.Close()
					t.Fatal("no spare after 20s")
				}
				time.Sleep(time.Millisecond)
			}
			if w.Stats().Rolls != 0 {
				t.Fatalf("rolled before the test could inject: %+v", w.Stats())
			}
			// The spare is ready: the next append rolls early.
			efs.SetInjector(func(op vfstest.Op, path string) error {
				if op == tc.op && strings.HasSuffix(path, tc.path) {
					return vfstest.ErrInjected
				}
				return nil
			})
			p, err := w.Append(testType, payloadFor(n))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Wait(); !errors.Is(err, ErrFailed) || !errors.Is(err, vfstest.ErrInjected) {
				t.Fatalf("Wait after an injected %s error = %v, want ErrFailed wrapping it", tc.name, err)
			}
			efs.SetInjector(nil)
			if _, err := w.Append(testType, payloadFor(n+1)); !errors.Is(err, ErrFailed) {
				t.Fatalf("Append after the failure = %v, want ErrFailed", err)
			}
			w.Close()
			w, recs := mustOpen(t, Options{Dir: dir, FileSize: earlyFileSize, Preallocate: true}, 1)
			defer w.Close()
			if len(recs) != n && len(recs) != n+1 {
				t.Fatalf("recovered %d records, want %d or %d", len(recs), n, n+1)
			}
			checkRecords(t, recs, 1, 0, len(recs))
			if r := w.Repaired(); r != nil && (r.File != filepath.Join(dir, fileName(2)) || r.Offset != FileHeaderSize) {
				t.Fatalf("repair %+v, want none or one at the start of %s", r, fileName(2))
			}
			if tc.op == vfstest.OpWrite && tc.path == fileName(2) && w.Repaired() == nil {
				t.Fatal("the torn first record of the new file was not repaired")
			}
			writeN(t, w, len(recs), 3)
		})
	}
}

// TestBurstThenSlowAsksForSpare: a log that filled files too fast for
// spares (rolls into growing files) asks for one as soon as its rate
// drops, without waiting for the next full roll. (That it then rolls
// early into it: TestNewLogRollsEarlyIntoSpare.)
func TestBurstThenSlowAsksForSpare(t *testing.T) {
	dir := t.TempDir()
	w, _ := mustOpen(t, Options{Dir: dir, FileSize: earlyFileSize, Preallocate: true}, 1)
	defer w.Close()
	waitSpare(t, w) // a new log asks for one at Open
	// Pretend that spare took the disk a minute: at any rate this test
	// can write, the log may not afford spares at a roll.
	w.spare.Lock()
	w.spare.took = time.Minute
	w.spare.Unlock()
	big := make([]byte, 64<<10)
	for w.Stats().Rolls < 3 {
		p, err := w.Append(testType, big)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if st := w.Stats(); st.SpareRolls != 1 {
		t.Fatalf("the burst rolled into spares other than the one made at Open: %+v", st)
	}
	// Now slow: a record now and then. With a spare's disk time of a
	// minute, the rate must make a file last over two minutes: a few
	// records a second of this size do.
	rolls := w.Stats().Rolls
	n := 0
	deadline := time.Now().Add(30 * time.Second)
	for {
		w.spare.Lock()
		asked := w.spare.asked || w.spare.ready
		w.spare.Unlock()
		if asked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no spare asked for 30s after the burst: %+v", w.Stats())
		}
		writeN(t, w, n, 1)
		n++
		time.Sleep(20 * time.Millisecond)
	}
	if st := w.Stats(); st.Rolls != rolls {
		t.Fatalf("the spare was asked for only at a roll: %+v", st)
	}
}
