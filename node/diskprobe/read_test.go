package diskprobe

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
)

func TestSequentialRead(t *testing.T) {
	for _, tt := range probeSizes {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := SequentialRead(dir, tt.blockSize, tt.total)
			if err != nil {
				t.Fatal(err)
			}
			if res.Bytes != tt.total || res.Syncs != tt.syncs || res.BlockSize != tt.blockSize {
				t.Fatalf("got %+v, want %d bytes in %d reads", res, tt.total, tt.syncs)
			}
			if res.Elapsed <= 0 || res.BytesPerSecond() <= 0 {
				t.Fatalf("nothing timed: %+v", res)
			}
			assertEmpty(t, dir)
		})
	}
}

// TestWriteFileThenReadFile: a reference file written once and read back
// whole, twice, in reads of the block size.
func TestWriteFileThenReadFile(t *testing.T) {
	for _, tt := range probeSizes {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "ref")
			if err := WriteFile(p, tt.blockSize, tt.total); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(p); err != nil || fi.Size() != tt.total {
				t.Fatalf("file %v, %v; want %d bytes", fi, err, tt.total)
			}
			for range 2 {
				res, err := ReadFile(p, tt.blockSize)
				if err != nil {
					t.Fatal(err)
				}
				if res.Bytes != tt.total || res.Syncs != tt.syncs || res.Elapsed <= 0 {
					t.Fatalf("got %+v, want %d bytes in %d reads", res, tt.total, tt.syncs)
				}
			}
			if err := WriteFile(p, tt.blockSize, tt.total); !errors.Is(err, os.ErrExist) {
				t.Fatalf("WriteFile over an existing file: %v, want ErrExist", err)
			}
		})
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing"), 4096); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "x"), 0, 1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("blockSize 0: %v", err)
	}
}

func TestSequentialReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := SequentialRead(dir, 0, 1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("blockSize 0: err = %v, want ErrInvalidArgument", err)
	}
	if _, err := SequentialRead(dir, 1, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("total 0: err = %v, want ErrInvalidArgument", err)
	}
	if _, err := SequentialRead(filepath.Join(dir, "missing"), 4096, 4096); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing dir: err = %v, want ErrNotExist", err)
	}
	assertEmpty(t, dir)
}

func TestDropCache(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := DropCache(p); err != nil {
		t.Fatal(err)
	}
	// The file is unchanged: only its cached pages may go.
	if b, err := os.ReadFile(p); err != nil || string(b) != "data" {
		t.Fatalf("after DropCache: %q, %v", b, err)
	}
	if err := DropCache(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
}

// BenchmarkDiskSequentialRead reports the disk's cold sequential read
// bandwidth: one op is one 1 MiB read of a file written and fsync'd
// beforehand (not timed) whose page cache was dropped (DropCache).
func BenchmarkDiskSequentialRead(b *testing.B) {
	dir := diskprobetest.Dir(b)
	b.SetBytes(DefaultBlockSize)
	res, err := SequentialRead(dir, DefaultBlockSize, int64(b.N)*DefaultBlockSize)
	if err != nil {
		b.Fatal(err)
	}
	// Report the read's own timing, which leaves out writing the file.
	b.ReportMetric(res.BytesPerSecond()/1e6, "MB/s")
}
