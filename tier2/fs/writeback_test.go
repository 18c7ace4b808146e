package fs

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sluice-streams/sluice/tier2"
)

type rangeCall struct {
	off, n int64
	flags  int
}

// hookSyncFileRange replaces syncFileRange for the test: each call is
// recorded, then answered by fail (if it returns an error) or by the
// real system call.
func hookSyncFileRange(t *testing.T, fail func(rangeCall) error) *[]rangeCall {
	t.Helper()
	var mu sync.Mutex
	calls := &[]rangeCall{}
	real := syncFileRange
	syncFileRange = func(fd int, off, n int64, flags int) error {
		c := rangeCall{off, n, flags}
		mu.Lock()
		*calls = append(*calls, c)
		mu.Unlock()
		if fail != nil {
			if err := fail(c); err != nil {
				return err
			}
		}
		return real(fd, off, n, flags)
	}
	t.Cleanup(func() { syncFileRange = real })
	return calls
}

func newTestStorage(t *testing.T) *Storage {
	t.Helper()
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// A file written in pieces has its write-back started for every
// WritebackBytes written, and waited for one range behind, so that
// ranges cover the file from 0 without gaps; the file reads back whole.
func TestWritebackFollowsTheWriter(t *testing.T) {
	calls := hookSyncFileRange(t, nil)
	s := newTestStorage(t)
	p := tier2.ChunkPath("sc", "st", 0, 0)
	w, err := s.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(5*WritebackBytes + 12345)
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 300<<10)
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var started, waited int64
	for _, c := range *calls {
		switch c.flags {
		case unix.SYNC_FILE_RANGE_WRITE:
			if c.off != started || c.n < WritebackBytes {
				t.Fatalf("write-back started at %d for %d bytes, want at %d for at least %d", c.off, c.n, started, WritebackBytes)
			}
			started += c.n
		case unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER:
			if c.off != waited || c.off+c.n > started {
				t.Fatalf("waited for [%d, %d), want from %d up to at most %d", c.off, c.off+c.n, waited, started)
			}
			waited += c.n
		default:
			t.Fatalf("unexpected flags %#x", c.flags)
		}
	}
	if started < 4*WritebackBytes || waited < 3*WritebackBytes {
		t.Errorf("write-back started for %d and waited for %d bytes of %d", started, waited, len(data))
	}
	got, err := os.ReadFile(filepath.Join(s.Root(), p))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, not what was written (%d)", len(got), len(data))
	}
}

// An I/O error of write-back is a write error: sticky, reported by
// later writes and Close, and the data is not trusted.
func TestWritebackErrorIsSticky(t *testing.T) {
	hookSyncFileRange(t, func(c rangeCall) error {
		if c.off > 0 {
			return unix.EIO
		}
		return nil
	})
	s := newTestStorage(t)
	w, err := s.Create("sc/st/f")
	if err != nil {
		t.Fatal(err)
	}
	piece := pattern(WritebackBytes)
	var werr error
	for i := 0; i < 4 && werr == nil; i++ {
		_, werr = w.Write(piece)
	}
	if !errors.Is(werr, unix.EIO) || !errors.Is(werr, tier2.ErrUnavailable) {
		t.Fatalf("write error %v, want EIO (unavailable)", werr)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, unix.EIO) {
		t.Errorf("a write after the failure: %v, want the same EIO", err)
	}
	if err := w.Close(); !errors.Is(err, unix.EIO) {
		t.Errorf("Close: %v, want the write-back's EIO", err)
	}
}

// A filesystem without sync_file_range (EINVAL, ENOSYS...) is written
// as before: write-back is left to Close's fsync.
func TestWritebackUnsupportedIsTurnedOff(t *testing.T) {
	calls := hookSyncFileRange(t, func(rangeCall) error { return unix.EINVAL })
	s := newTestStorage(t)
	w, err := s.Create("sc/st/f")
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(3 * WritebackBytes)
	for i := 0; i < 3; i++ {
		if _, err := w.Write(data[i*WritebackBytes : (i+1)*WritebackBytes]); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(*calls) != 1 {
		t.Errorf("%d sync_file_range calls after EINVAL, want 1 (then off)", len(*calls))
	}
	got, err := os.ReadFile(filepath.Join(s.Root(), "sc/st/f"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(data))
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, iofs.ErrClosed) {
		t.Errorf("write after Close: %v", err)
	}
}
