package fs_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// A chunk a reader opened before it was removed (a head streaming it to
// a Spark job, a catch-up read) was read whole after an unlink: the open
// file keeps its blocks. Through the Reclaimer its blocks are cut away
// under the reader: the chunk is neither whole nor invisible to it.
func TestAnOpenChunkStaysWholeAfterRemove(t *testing.T) {
	s, r := newReclaimed(t)
	data := bytes.Repeat([]byte("x"), 64<<10)
	tier2test.Put(t, s, "sc/st/segment=0/0.seq", data)
	f, err := s.Open("sc/st/segment=0/0.seq")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := s.Remove("sc/st/segment=0/0.seq"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, f.Size())
	n, err := f.ReadAt(got, 0)
	if err != nil && err != io.EOF || n != len(data) {
		t.Fatalf("ReadAt of an open chunk after Remove = %d bytes, %v; want all %d (Size says %d)", n, err, len(data), f.Size())
	}
}
