package wal

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
)

// dirHash hashes the names and contents of every entry of dir, so a test
// can check that a refused recovery left every byte where it was.
func dirHash(t *testing.T, dir string) string {
	t.Helper()
	names, err := vfs.Default.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// expectRefusal opens dir replaying from from and checks that Open refuses
// with ErrCorrupt at file name, offset off, leaving the directory as it was.
func expectRefusal(t *testing.T, opts Options, from uint64, name string, off int64) *CorruptError {
	t.Helper()
	before := dirHash(t, opts.Dir)
	w, _, err := openCollect(opts, from)
	if err == nil {
		w.Close()
		t.Fatalf("Open recovered; want a refusal at %s offset %d", name, off)
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open = %v, want ErrCorrupt", err)
	}
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("Open = %v (%T), want a *CorruptError", err, err)
	}
	if ce.File != name || ce.Offset != off {
		t.Fatalf("refusal names %s offset %d, want %s offset %d (%v)", ce.File, ce.Offset, name, off, err)
	}
	if msg := err.Error(); !strings.Contains(msg, name) || !strings.Contains(msg, fmt.Sprint("offset ", off)) || ce.Found == "" {
		t.Fatalf("refusal %q does not say file, offset and what was found", msg)
	}
	if after := dirHash(t, opts.Dir); after != before {
		t.Fatalf("a refused recovery changed the log's files (%v)", err)
	}
	return ce
}

func flipByte(t *testing.T, name string, off int64, mask byte) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= mask
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryRules is the decision table of recovery: which damage is a
// torn tail (repaired, only what was never acknowledged dropped) and which
// is refused (ErrCorrupt naming file and offset, every file untouched).
func TestRecoveryRules(t *testing.T) {
	const n = 6
	for _, tc := range []struct {
		name string
		// damage changes the log written by writeLog (n records, a batch
		// each, in one file) and returns the offset of the damage.
		damage func(t *testing.T, name string, ps []Pending) int64
		from   uint64 // replay from: every LSN below it is known durable
		refuse bool
		kept   int // records recovered when not refused
	}{{
		name: "flip in a record with valid records after it",
		damage: func(t *testing.T, name string, ps []Pending) int64 {
			flipByte(t, name, ps[2].Addr.Offset+RecordHeaderSize, 1)
			return ps[2].Addr.Offset
		},
		from: 1, refuse: true,
	}, {
		name: "flip in the last record, nothing proves it acknowledged",
		damage: func(t *testing.T, name string, ps []Pending) int64 {
			flipByte(t, name, ps[n-1].Addr.Offset+3, 0x40)
			return ps[n-1].Addr.Offset
		},
		from: 1, kept: n - 1,
	}, {
		// A clean stop: the caller checkpointed every record, so replays
		// from the one after the last. Any damage to a record is damage to
		// acknowledged data, the last record included.
		name: "flip in the last record after a clean stop",
		damage: func(t *testing.T, name string, ps []Pending) int64 {
			flipByte(t, name, ps[n-1].Addr.Offset+3, 0x40)
			return ps[n-1].Addr.Offset
		},
		from: n + 1, refuse: true,
	}, {
		name: "last record cut short after a clean stop",
		damage: func(t *testing.T, name string, ps []Pending) int64 {
			if err := os.Truncate(name, ps[n-1].Addr.Offset+RecordHeaderSize+1); err != nil {
				t.Fatal(err)
			}
			return ps[n-1].Addr.Offset
		},
		from: n + 1, refuse: true,
	}, {
		name: "garbage after the last record after a clean stop",
		damage: func(t *testing.T, name string, ps []Pending) int64 {
			f, _ := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
			f.Write(append(make([]byte, 100<<10), 0xde, 0xad)) // a preallocated rest, then damage
			f.Write(make([]byte, 4096))
			f.Close()
			return -1
		},
		// Nothing was there to lose: the bytes are where the next,
		// unacknowledged write would have gone, so it is a torn tail.
		from: n + 1, kept: n,
	}, {
		name: "the log ends before the records the caller has",
		damage: func(t *testing.T, name string, ps []Pending) int64 {
			if err := os.Truncate(name, ps[n-1].Addr.Offset); err != nil {
				t.Fatal(err)
			}
			return ps[n-1].Addr.Offset
		},
		from: n + 1, refuse: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ps := writeLog(t, dir, n, 1<<20)
			name := lastFile(t, dir)
			off := tc.damage(t, name, ps)
			opts := Options{Dir: dir}
			if tc.refuse {
				expectRefusal(t, opts, tc.from, name, off)
				return
			}
			w, recs, err := openCollect(opts, tc.from)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer w.Close()
			if next := w.NextLSN(); next != uint64(tc.kept)+1 {
				t.Fatalf("the log ends before LSN %d, want %d", next, tc.kept+1)
			}
			checkRecords(t, recs, tc.from, int(tc.from)-1, tc.kept-int(tc.from)+1)
			if w.Repaired() == nil {
				t.Fatal("no repair reported")
			}
			if _, err := os.Stat(name + ".broken"); !os.IsNotExist(err) {
				t.Fatalf("recovery copied the file: %v", err)
			}
		})
	}
}

// TestRepairZeroesOnlyTheDamage: a torn tail in a preallocated file is
// zeroed from the damage to the last non-zero byte, not to the end of the
// file, and the bytes before the damage are not touched.
func TestRepairZeroesOnlyTheDamage(t *testing.T) {
	dir := t.TempDir()
	ps := writeLog(t, dir, 4, 1<<20)
	name := lastFile(t, dir)
	orig, _ := os.ReadFile(name)
	cut := ps[3].Addr.Offset + 10
	torn := append(append([]byte(nil), orig[:cut]...), make([]byte, 1<<20-int(cut))...)
	os.WriteFile(name, torn, 0o644)
	w, recs := mustOpen(t, Options{Dir: dir}, 1)
	checkRecords(t, recs, 1, 0, 3)
	r := w.Repaired()
	w.Close()
	if r == nil || r.Offset != ps[3].Addr.Offset || r.Dropped != 10 {
		t.Fatalf("repair %+v, want offset %d and 10 bytes dropped", r, ps[3].Addr.Offset)
	}
	after, _ := os.ReadFile(name)
	if len(after) < 1<<20 || string(after[:ps[3].Addr.Offset]) != string(orig[:ps[3].Addr.Offset]) {
		t.Fatal("the repair changed the file's size or the records before the damage")
	}
}

// TestTornPipelinedBatches: with a batch's sync still running, the next
// batch is written and its own sync started. A crash then may leave the
// second batch's pages on disk and not the first's: neither was
// acknowledged, so it is a torn tail, not corruption.
func TestTornPipelinedBatches(t *testing.T) {
	efs := vfstest.New(vfs.Default)
	dir := t.TempDir()
	w, _ := mustOpen(t, Options{Dir: dir, FS: efs}, 1)
	writeN(t, w, 0, 1) // LSN 1, acknowledged
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if isSync(op) && strings.HasSuffix(path, fileSuffix) {
			entered <- struct{}{}
			<-release
		}
		return nil
	})
	a, err := w.Append(testType, payloadFor(1))
	if err != nil {
		t.Fatal(err)
	}
	<-entered // a's sync runs, held
	b, err := w.Append(testType, make([]byte, pipelineMinBytes))
	if err != nil {
		t.Fatal(err)
	}
	<-entered // b is written and its sync runs beside a's
	// The crash: the file as written, with a's record lost.
	crashed := t.TempDir()
	data, err := os.ReadFile(w.path(1))
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	data[a.Addr.Offset+RecordHeaderSize] ^= 1
	name := filepath.Join(crashed, fileName(1))
	os.WriteFile(name, data, 0o644)
	w, recs, err := openCollect(Options{Dir: crashed}, 1)
	if err != nil {
		t.Fatalf("crash with two batches in flight: %v", err)
	}
	defer w.Close()
	checkRecords(t, recs, 1, 0, 1)
}

// fillDisk appends records of 1000 bytes through w until the disk is full
// and returns the acknowledged ones.
func fillDisk(t *testing.T, w *WAL) []Record {
	t.Helper()
	var acked []Record
	for i := 0; ; i++ {
		payload := []byte(fmt.Sprintf("%08d%s", i, strings.Repeat("f", 992)))
		p, err := w.Append(testType, payload)
		if err == nil {
			err = p.Wait()
		}
		if err != nil {
			if !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append %d on a full disk: %v, want ErrFailed wrapping ENOSPC", i, err)
			}
			return acked
		}
		acked = append(acked, Record{LSN: p.LSN, Type: testType, Payload: payload})
	}
}

// disk is where TestRestartAfterDiskFull fills a disk: a directory of the
// given size and a way to free bytes on it.
type disk struct {
	name string
	size int64
	// make returns the log directory, the filesystem to use and a func
	// that frees n bytes.
	make func(t *testing.T, size int64) (dir string, fs vfs.FS, free func(n int64))
}

// tmpfsDisk mounts a tmpfs of the size asked for, with a ballast file that
// free removes. It returns false if this process may not mount.
func tmpfsDisk(t *testing.T, size int64) (string, vfs.FS, func(int64)) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Fatalf("mount tmpfs on %s: %v", mnt, err)
	}
	t.Cleanup(func() {
		// Cleanups run last first: the test's logs are closed by now. If
		// something still holds a file, detach the mount anyway.
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
			if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
				t.Errorf("detach %s: %v", mnt, err)
			}
		}
	})
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(mnt, "wal"), vfs.Default, func(n int64) {
		if n != 64<<10 {
			t.Fatalf("the tmpfs ballast frees 64 KiB, not %d", n)
		}
		if err := os.Remove(ballast); err != nil {
			t.Fatal(err)
		}
	}
}

func quotaDisk(t *testing.T, size int64) (string, vfs.FS, func(int64)) {
	efs := vfstest.New(vfs.Default)
	efs.SetFreeSpace(size)
	return t.TempDir(), efs, efs.AddFreeSpace
}

// canMount reports whether this process may mount a tmpfs.
func canMount(t *testing.T) bool {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Logf("cannot mount a tmpfs here (%v): the disk-full test runs on the quota filesystem only", err)
		return false
	}
	if err := syscall.Unmount(mnt, 0); err != nil {
		syscall.Unmount(mnt, syscall.MNT_DETACH)
		t.Fatalf("unmount %s: %v", mnt, err)
	}
	return true
}

// TestRestartAfterDiskFull fills the disk under a log whose file is far
// larger than the disk's free space, stops, frees a little space (64 KiB)
// and restarts: recovery repairs the torn write the full disk left in
// place, needs no room for a copy of the file, and keeps every
// acknowledged record; the log then takes appends again.
func TestRestartAfterDiskFull(t *testing.T) {
	disks := []disk{{"quota", 256 << 10, quotaDisk}}
	if canMount(t) {
		disks = append(disks, disk{"tmpfs", 1 << 20, tmpfsDisk})
	}
	for _, d := range disks {
		t.Run(d.name, func(t *testing.T) {
			dir, fs, free := d.make(t, d.size)
			opts := Options{Dir: dir, FS: fs} // one 64 MiB file: the disk fills inside it
			openLog := func() (*WAL, []Record) {
				w, recs := mustOpen(t, opts, 1)
				t.Cleanup(func() { w.Close() }) // before the unmount, even if the test fails
				return w, recs
			}
			w, _ := openLog()
			acked := fillDisk(t, w)
			if err := w.Close(); !errors.Is(err, ErrFailed) {
				t.Fatalf("Close after the disk filled = %v, want the sticky failure", err)
			}
			if int64(len(acked)) < d.size/2048 {
				t.Fatalf("only %d records fit on a %d-byte disk", len(acked), d.size)
			}
			free(64 << 10)
			w, recs := openLog()
			if len(recs) != len(acked) {
				t.Fatalf("recovered %d records, %d were acknowledged", len(recs), len(acked))
			}
			for i, r := range recs {
				if r.LSN != acked[i].LSN || string(r.Payload) != string(acked[i].Payload) {
					t.Fatalf("record %d: LSN %d %.8q, want LSN %d %.8q", i, r.LSN, r.Payload, acked[i].LSN, acked[i].Payload)
				}
			}
			if w.Repaired() == nil {
				t.Fatal("the full disk left no torn write to repair")
			}
			writeN(t, w, 0, 3)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, recs = openLog()
			if len(recs) != len(acked)+3 {
				t.Fatalf("after the restart's appends: %d records, want %d", len(recs), len(acked)+3)
			}
		})
	}
}

// TestOperatorCutAfterRefusal follows what docs/OPERATIONS.md tells an
// operator who accepts losing the damaged record and everything after it:
// cut the named file at the named offset and move every later file aside.
// The log then opens with exactly the records before the damage.
func TestOperatorCutAfterRefusal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record int // index of the damaged record
	}{{"in the newest file", 11}, {"in an older file", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ps := writeLog(t, dir, 13, 256)
			if newest := ps[tc.record].Addr.File == ps[len(ps)-1].Addr.File; newest != (tc.name == "in the newest file") || tc.record == len(ps)-1 {
				t.Fatalf("record %d is at %v, the last at %v: not the case the test is named for", tc.record, ps[tc.record].Addr, ps[len(ps)-1].Addr)
			}
			name := filepath.Join(dir, fileName(ps[tc.record].Addr.File))
			flipByte(t, name, ps[tc.record].Addr.Offset+RecordHeaderSize, 1)
			ce := expectRefusal(t, Options{Dir: dir}, 1, name, ps[tc.record].Addr.Offset)
			if err := os.Truncate(ce.File, ce.Offset); err != nil {
				t.Fatal(err)
			}
			aside := t.TempDir()
			for seq := ps[tc.record].Addr.File + 1; seq <= ps[len(ps)-1].Addr.File; seq++ {
				if err := os.Rename(filepath.Join(dir, fileName(seq)), filepath.Join(aside, fileName(seq))); err != nil {
					t.Fatal(err)
				}
			}
			w, recs := mustOpen(t, Options{Dir: dir, FileSize: 256}, 1)
			checkRecords(t, recs, 1, 0, tc.record)
			writeN(t, w, tc.record, 3)
			w.Close()
		})
	}
}

// TestOpenSyncsReplayedRecords: a process that stops between a batch's
// write and its fsync (here the fsync fails) leaves records that recovery
// reads back, from the page cache if the machine did not stop. Open
// counts every replayed record durable, and the next batch's records say
// so in their synced field, so Open must fsync them first: otherwise a
// machine crash could lose them while a later record claims them durable.
func TestOpenSyncsReplayedRecords(t *testing.T) {
	efs := vfstest.New(vfs.Default)
	dir := t.TempDir()
	w, _ := mustOpen(t, Options{Dir: dir, FS: efs}, 1)
	writeN(t, w, 0, 2)
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if isSync(op) && strings.HasSuffix(path, fileSuffix) {
			return vfstest.ErrInjected
		}
		return nil
	})
	p, err := w.Append(testType, payloadFor(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); !errors.Is(err, ErrFailed) {
		t.Fatalf("append whose fsync failed: %v, want ErrFailed", err)
	}
	w.Close()
	var synced atomic.Bool
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if isSync(op) && path == filepath.Join(dir, fileName(1)) {
			synced.Store(true)
		}
		return nil
	})
	w, recs := mustOpen(t, Options{Dir: dir, FS: efs}, 1)
	defer w.Close()
	checkRecords(t, recs, 1, 0, 3)
	if !synced.Load() || w.DurableLSN() != 3 {
		t.Fatalf("Open counts LSN %d durable; synced the log file: %v", w.DurableLSN(), synced.Load())
	}
}
