package boltstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/boltstore"
)

// pageSize is bbolt's page size on this machine's files (the OS page
// size, 4096 on the platforms the tests run on); the test reads it from
// the file's first meta page to be sure.
func pageSizeOf(t *testing.T, file []byte) int {
	t.Helper()
	// Page header (16 bytes), then meta: magic uint32, version uint32,
	// pageSize uint32, native byte order (little endian here).
	ps := int(binary.LittleEndian.Uint32(file[16+8:]))
	if ps < 512 || ps > 1<<16 || len(file)%ps != 0 {
		t.Fatalf("page size %d read from the file of %d bytes", ps, len(file))
	}
	return ps
}

// bbolt's page kinds, the flags field of a page header (offset 8).
const (
	branchPage   = 0x01
	leafPage     = 0x02
	metaPage     = 0x04
	freelistPage = 0x10
)

// fixture writes a store of n keys to a file, closes it and returns the
// file's path and the values written. The last two transactions write a
// key outside the map, so that falling back to the older meta page (what
// bbolt does when the newer one is damaged) loses nothing checked here.
func fixture(t testing.TB, n int) (string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "meta.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range n {
		key := fmt.Sprintf("scopes/s%d/streams/st%03d", i%3, i)
		val := fmt.Sprintf(`{"scalingPolicy":{"minSegments":%d},"n":%d}`, 1+i%5, i)
		if _, err := s.Put(ctx, key, []byte(val)); err != nil {
			t.Fatal(err)
		}
		want[key] = val
	}
	for _, k := range []string{"scopes/s0", "scopes/s1", "scopes/s2", "scopes"} {
		want[k] = ""
	}
	for range 2 {
		if _, err := s.Put(ctx, "pad", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, want
}

// openDamaged copies the file at path with byte off xor-ed by mask, and
// opens the copy. It returns the copy's path, the store (nil if Open
// failed) and Open's error.
func openDamaged(t *testing.T, path string, off int, mask byte) (string, *boltstore.Store, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= mask
	damaged := filepath.Join(t.TempDir(), fmt.Sprintf("damaged-%d.db", off))
	if err := os.WriteFile(damaged, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := boltstore.Open(damaged)
	return damaged, s, err
}

// checkDamaged is the contract for a store file with one damaged byte:
// Open fails with an error that names the file (and wraps
// cluster.ErrCorrupt unless it is bbolt's own refusal), or it succeeds and
// every key reads back as written or is refused with ErrCorrupt. Never a
// panic, never a changed value.
func checkDamaged(t *testing.T, what, path string, s *boltstore.Store, err error, want map[string]string) {
	t.Helper()
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("%s: Open error %q does not name the file", what, err)
		}
		if !errors.Is(err, cluster.ErrCorrupt) {
			t.Fatalf("%s: Open error %q is not cluster.ErrCorrupt", what, err)
		}
		return
	}
	defer s.Close()
	ctx := context.Background()
	for k, v := range want {
		kv, err := s.Get(ctx, k)
		switch {
		case errors.Is(err, cluster.ErrCorrupt):
		case err != nil:
			t.Fatalf("%s: Get(%q): %v", what, k, err)
		case string(kv.Value) != v:
			t.Fatalf("%s: Get(%q) = %q, written %q", what, k, kv.Value, v)
		}
	}
	for _, dir := range []string{"", "scopes", "scopes/s1"} {
		kvs, err := s.List(ctx, dir)
		if err != nil {
			if !errors.Is(err, cluster.ErrCorrupt) {
				t.Fatalf("%s: List(%q): %v", what, dir, err)
			}
			continue
		}
		for _, kv := range kvs {
			if w, ok := want[kv.Key]; ok && w != string(kv.Value) {
				t.Fatalf("%s: List(%q) has %q = %q, written %q", what, dir, kv.Key, kv.Value, w)
			}
		}
	}
}

// TestFlippedRecordByteRefused is the review's case: one flipped byte in
// a stream's record turned minSegments 1 into 0 and was read as such. Now
// Open refuses the file, naming it and the key. (How reads and writes
// treat a record damaged while the store is open: TestDamagedRecordWhileOpen.)
func TestFlippedRecordByteRefused(t *testing.T) {
	path, _ := fixture(t, 1)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := bytes.Index(b, []byte(`"minSegments":1`))
	if off < 0 {
		t.Fatal("record not found in the file")
	}
	off += len(`"minSegments":`)
	damaged, s, err := openDamaged(t, path, off, '1'^'0')
	if err == nil {
		kv, gerr := s.Get(context.Background(), "scopes/s0/streams/st000")
		s.Close()
		t.Fatalf("store with a damaged record opened; Get = %q, %v", kv.Value, gerr)
	}
	if !errors.Is(err, cluster.ErrCorrupt) || !strings.Contains(err.Error(), damaged) ||
		!strings.Contains(err.Error(), `"scopes/s0/streams/st000"`) {
		t.Fatalf("Open: %v; want ErrCorrupt naming the file and the key", err)
	}
}

// TestDamagedRecordWhileOpen damages a record in the file under an open
// store (the file is mapped, so reads see it): reads and the writes that
// depend on the record refuse it with ErrCorrupt naming the key and the
// file, the other records are served, and Put, which does not depend on
// it, replaces it.
func TestDamagedRecordWhileOpen(t *testing.T) {
	path, _ := fixture(t, 1)
	s, b := openWithBytes(t, path)
	// Every copy: the live one, and stale ones in freed pages.
	pattern := []byte(`"minSegments":1`)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; ; {
		i := bytes.Index(b[off:], pattern)
		if i < 0 {
			break
		}
		off += i + len(pattern)
		if _, err := f.WriteAt([]byte("0"), int64(off-1)); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()

	ctx := context.Background()
	const key = "scopes/s0/streams/st000"
	kv, err := s.Get(ctx, key)
	if !errors.Is(err, cluster.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"`+key+`"`) {
		t.Fatalf("Get of the damaged record = %q, %v; want ErrCorrupt naming the file and the key", kv.Value, err)
	}
	if _, err := s.List(ctx, "scopes/s0/streams"); !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("List over the damaged record: %v, want ErrCorrupt", err)
	}
	if _, err := s.CompareAndSet(ctx, key, []byte("x"), 1); !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("CompareAndSet over the damaged record: %v, want ErrCorrupt", err)
	}
	if _, err := s.Create(ctx, key, []byte("x")); !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("Create over the damaged record: %v, want ErrCorrupt", err)
	}
	if err := s.Delete(ctx, key, 1); !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("conditional Delete of the damaged record: %v, want ErrCorrupt", err)
	}
	if kv, err := s.Get(ctx, "pad"); err != nil || string(kv.Value) != "x" {
		t.Fatalf("Get of an intact record: %q, %v", kv.Value, err)
	}
	if _, err := s.Put(ctx, key, []byte(`{"minSegments":1}`)); err != nil {
		t.Fatalf("Put over the damaged record: %v", err)
	}
	if kv, err := s.Get(ctx, key); err != nil || string(kv.Value) != `{"minSegments":1}` {
		t.Fatalf("Get after Put: %q, %v", kv.Value, err)
	}
}

// pagesOf returns the offsets of the file's pages by kind.
func pagesOf(t *testing.T, b []byte) map[int][]int {
	ps := pageSizeOf(t, b)
	pages := map[int][]int{}
	for off := 0; off+ps <= len(b); off += ps {
		flags := int(binary.LittleEndian.Uint16(b[off+8:]))
		pages[flags] = append(pages[flags], off)
	}
	return pages
}

// TestDamagedPageHeaders flips bytes of the page headers (id, flags,
// count, overflow) and first elements of every kind of page in a real
// store file: Open refuses with a clear error or the data reads back
// unchanged; the process never panics (the review's case: a flipped
// page-header byte panicked at start).
func TestDamagedPageHeaders(t *testing.T) {
	path, want := fixture(t, 120)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesOf(t, b)
	for _, kind := range []int{metaPage, freelistPage, branchPage, leafPage} {
		if len(pages[kind]) == 0 {
			t.Fatalf("the fixture has no page of kind 0x%02x: %v", kind, pages)
		}
	}
	type field struct {
		name string
		at   int
		mask byte
	}
	fields := []field{
		{"id", 0, 0x01}, {"id high", 7, 0x80},
		{"flags", 8, 0x03}, {"flags to freelist", 8, 0x12}, {"flags high", 9, 0xff},
		{"count", 10, 0x01}, {"count high", 11, 0x40},
		{"overflow", 12, 0x01}, {"overflow high", 15, 0x10},
		{"first element", 16, 0x01}, {"first element high", 19, 0x80},
		{"first element size", 20, 0x04}, {"second element", 32, 0x08},
	}
	names := map[int]string{metaPage: "meta", freelistPage: "freelist", branchPage: "branch", leafPage: "leaf"}
	for _, kind := range []int{metaPage, freelistPage, branchPage, leafPage} {
		for i, page := range pages[kind] {
			for _, f := range fields {
				what := fmt.Sprintf("%s page %d (offset %d) %s ^0x%02x", names[kind], i, page, f.name, f.mask)
				t.Run(strings.ReplaceAll(what, " ", "_"), func(t *testing.T) {
					damaged, s, err := openDamaged(t, path, page+f.at, f.mask)
					checkDamaged(t, what, damaged, s, err, want)
				})
			}
		}
	}
}

// TestDamagedBytesSweep flips, one at a time, each non-zero byte of a real
// store file (the bytes that hold something) in its lowest bit, and every
// third one in its highest: the same contract as TestDamagedPageHeaders.
func TestDamagedBytesSweep(t *testing.T) {
	path, want := fixture(t, 40)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, flips := 0, 0
	for off, c := range b {
		if c == 0 {
			continue
		}
		n++
		masks := []byte{0x01}
		if n%3 == 0 {
			masks = append(masks, 0x80)
		}
		for _, mask := range masks {
			damaged, s, err := openDamaged(t, path, off, mask)
			checkDamaged(t, fmt.Sprintf("byte %d ^0x%02x", off, mask), damaged, s, err, want)
			os.Remove(damaged)
			flips++
		}
	}
	t.Logf("%d non-zero bytes of %d, %d flips", n, len(b), flips)
}

// TestLegacyV1FileMigrated: a file written before records had checksums
// (bucket sluice.cluster.v1, values = version + data) opens, reads back
// with its versions, keeps its version counter, and is moved to v2, where
// every record is checked.
func TestLegacyV1FileMigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	legacy := map[string]uint64{"scopes": 1, "scopes/s": 2, "scopes/s/streams": 3, "scopes/s/streams/st": 4}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("sluice.cluster.v1"))
		if err != nil {
			return err
		}
		for k, v := range legacy {
			val := binary.BigEndian.AppendUint64(nil, v)
			if k == "scopes/s/streams/st" {
				val = append(val, `{"minSegments":1}`...)
			}
			if err := b.Put([]byte(k), val); err != nil {
				return err
			}
		}
		return b.SetSequence(7)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	ctx := context.Background()
	for range 2 { // migrated, then opened as v2
		s, err := boltstore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		kv, err := s.Get(ctx, "scopes/s/streams/st")
		if err != nil || string(kv.Value) != `{"minSegments":1}` || kv.Version != 4 {
			t.Fatalf("legacy record: %+v, %v", kv, err)
		}
		kvs, err := s.List(ctx, "scopes/s")
		if err != nil || len(kvs) != 1 || kvs[0].Version != 3 {
			t.Fatalf("List: %+v, %v", kvs, err)
		}
		s.Close()
	}
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Put(ctx, "scopes/t", nil)
	if err != nil || v <= 7 {
		t.Fatalf("Put after migration: version %d, %v; want above the legacy sequence 7", v, err)
	}
	s.Close()

	// The file now holds v2 only, every value in its envelope.
	db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("sluice.cluster.v1")) != nil {
			t.Error("v1 bucket still there")
		}
		return tx.Bucket([]byte("sluice.cluster.v2")).ForEach(func(k, v []byte) error {
			if _, legacy, err := cluster.DecodeRecord(string(k), v); err != nil || legacy {
				t.Errorf("%q after migration: legacy %v, %v", k, legacy, err)
			}
			return nil
		})
	})
}

// FuzzDamagedFile: any one byte of a real store file changed in any way
// gives the contract of checkDamaged (a clear error at open, or the data
// as written or refused; never a panic, a hang or a changed value).
func FuzzDamagedFile(f *testing.F) {
	f.Add(uint32(8+2*4096), byte(0x03))  // the flags of page 2
	f.Add(uint32(12+3*4096), byte(0x10)) // an overflow count
	f.Add(uint32(0), byte(0))
	path, want := fixture(f, 40)
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	size := len(b)
	f.Fuzz(func(t *testing.T, off uint32, mask byte) {
		if mask == 0 {
			mask = 0xff
		}
		damaged, s, err := openDamaged(t, path, int(off)%size, mask)
		checkDamaged(t, fmt.Sprintf("byte %d ^0x%02x", int(off)%size, mask), damaged, s, err, want)
	})
}

// TestPanicWhileOpenIsSticky: once a call finds the file damaged under an
// open store (bbolt panics or faults on a page the open checks saw whole),
// every later call returns that failure, even after the bytes are put
// back: nothing more is read or written through a database a panic
// interrupted.
func TestPanicWhileOpenIsSticky(t *testing.T) {
	path, want := fixture(t, 120)
	s, b := openWithBytes(t, path)
	branches := pagesOf(t, b)[branchPage]
	if len(branches) == 0 {
		t.Fatal("the fixture has no branch page")
	}
	// Every branch page's first element's position, far past the file (a
	// lookup through it reads outside the mapping); stale copies in freed
	// pages are damaged too, as it is not known here which one is live.
	poke := func(src []byte) {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range branches {
			if _, err := f.WriteAt(src[p+19:p+20], int64(p+19)); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	var key string
	for k := range want {
		key = k
		break
	}
	damaged := bytes.Clone(b)
	for _, p := range branches {
		damaged[p+19] ^= 0x80
	}
	poke(damaged)
	if _, err := s.List(ctx, ""); !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("List through a damaged branch page = %v, want ErrCorrupt", err)
	}
	poke(b)
	if _, err := s.Get(ctx, key); !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("Get after a panic = %v, want the same ErrCorrupt", err)
	}
	if _, err := s.Put(ctx, "scopes/new", []byte("{}")); !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("Put after a panic = %v, want the same ErrCorrupt", err)
	}
}

// openWithBytes opens the store at path (closed when the test ends) and
// returns it with the file's bytes as they were at open.
func openWithBytes(t *testing.T, path string) (*boltstore.Store, []byte) {
	t.Helper()
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}
