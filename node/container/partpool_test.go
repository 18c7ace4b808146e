package container

import (
	"bytes"
	"testing"
)

// TestPartPoolReusesWhatNobodyHolds: a released buffer comes back for a
// load that fits it, at most its maximum are kept idle, and a buffer
// still held is never handed out.
func TestPartPoolReusesWhatNobodyHolds(t *testing.T) {
	p := NewPartPool(2)
	a := p.get(3 << 20)
	a.Retain() // a second holder
	a.Release()
	if b := p.get(3 << 20); b == a {
		t.Fatal("a held buffer was handed out")
	}
	a.Release() // the last holder
	if b := p.get(1 << 20); b != a || len(b.buf) != 1<<20 {
		t.Fatalf("a released buffer was not reused for a smaller load (%p, %p)", a, b)
	}
	if c := p.get(5 << 20); c == a || len(c.buf) != 5<<20 || p.made.Load() != 3 {
		t.Fatalf("a larger load got %d bytes; %d buffers made", len(c.buf), p.made.Load())
	}
	var bufs []*partBuffer
	for range 4 {
		bufs = append(bufs, p.get(1<<20))
	}
	for _, b := range bufs {
		b.Release()
	}
	if n := len(p.mu.free); n != 2 {
		t.Fatalf("%d idle buffers kept, want the pool's 2", n)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("releasing a buffer nobody holds did not panic")
		}
	}()
	bufs[0].Release()
}

// TestAdviseHugePagesLeavesMemoryAsItIs: the advice is only advice, for
// buffers of any size and alignment.
func TestAdviseHugePagesLeavesMemoryAsItIs(t *testing.T) {
	for _, n := range []int{0, 1, hugePage - 1, hugePage, 5*hugePage + 3} {
		buf := make([]byte, n)
		adviseHugePages(buf)
		for i := range buf {
			buf[i] = byte(i)
		}
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i)
		}
		if !bytes.Equal(buf, want) {
			t.Fatalf("%d bytes: memory changed", n)
		}
		if n > 1 {
			adviseHugePages(buf[1:]) // unaligned
		}
	}
}
