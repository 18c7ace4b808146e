package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/protocol"
)

// boundaries returns the offsets where the events of data start, and its
// end, for data starting at offset base.
func boundaries(t *testing.T, data []byte, base int64) map[int64]bool {
	t.Helper()
	out := map[int64]bool{base: true}
	for rest, at := data, base; len(rest) > 0; {
		_, r, err := protocol.NextEvent(rest)
		if err != nil {
			t.Fatal(err)
		}
		at += int64(len(rest) - len(r))
		rest = r
		out[at] = true
	}
	return out
}

// TestTruncateOnlyAtEventBoundaries: every offset inside an event is
// refused with NotEventBoundary and changes nothing, in the log, in a
// tier-2 chunk (with and without marks) and after a restart; every
// boundary is accepted.
func TestTruncateOnlyAtEventBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tier      bool
		partBytes int64
	}{{"log", false, 0}, {"chunk", true, 0}, {"chunk parts", true, 25}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			chunks := newMemChunks()
			chunks.partBytes = tc.partBytes
			cfg := Config{Dir: dir, Cache: cache.New(1)}
			if tc.tier {
				cfg.Chunks = chunks
			}
			c := open(t, cfg)
			name := protocol.SegmentName("sc", "st", 0, 0)
			if err := c.Create(name, nil); err != nil {
				t.Fatal(err)
			}
			var all []byte
			for i := range 4 {
				evs := []string{fmt.Sprintf("first-%d", i), "", fmt.Sprintf("third event of block %d", i)}
				appendEvents(t, c, name, "w", int64(3*i+2), evs...)
				all = append(all, block(evs...)...)
			}
			if tc.tier {
				chunks.tier(t, c, name, 80)
			}
			good := boundaries(t, all, 0)
			for off := int64(1); off < int64(len(all)); off++ {
				if good[off] {
					continue
				}
				if _, err := c.Truncate(name, off); !errors.Is(err, protocol.ErrNotEventBoundary) {
					t.Fatalf("Truncate(%d) inside an event: %v, want ErrNotEventBoundary", off, err)
				}
				if err := c.CheckBoundary(name, off); !errors.Is(err, protocol.ErrNotEventBoundary) {
					t.Fatalf("CheckBoundary(%d) inside an event: %v, want ErrNotEventBoundary", off, err)
				}
				if _, err := c.ReadAtEvent(t.Context(), name, off, 100); !errors.Is(err, protocol.ErrNotEventBoundary) {
					t.Fatalf("ReadAtEvent(%d) inside an event: %v, want ErrNotEventBoundary", off, err)
				}
			}
			if info, _ := c.Info(name); info.StartOffset != 0 {
				t.Fatalf("refused truncations moved the start to %d", info.StartOffset)
			}
			// In random order, so that the boundaries found before (the
			// hints checks start from) are everywhere: never a wrong answer.
			r := rand.New(rand.NewPCG(uint64(len(tc.name)), 1))
			for _, off := range r.Perm(len(all)) {
				off := int64(off)
				err := c.CheckBoundary(name, off)
				_, rerr := c.ReadAtEvent(t.Context(), name, off, 10)
				if good[off] != (err == nil) || good[off] != (rerr == nil) {
					t.Fatalf("offset %d (boundary: %v): CheckBoundary %v, ReadAtEvent %v", off, good[off], err, rerr)
				}
			}
			if got := readBytes(t, c, name); !bytes.Equal(got, all) {
				t.Fatalf("after refused truncations read %q, want %q", got, all)
			}
			// Every boundary, in order, is accepted; reads stay whole.
			for off := int64(1); off <= int64(len(all)); off++ {
				if !good[off] {
					continue
				}
				if err := c.CheckBoundary(name, off); err != nil {
					t.Fatalf("CheckBoundary(%d): %v", off, err)
				}
				if off < int64(len(all)) {
					if _, err := c.ReadAtEvent(t.Context(), name, off, 100); err != nil {
						t.Fatalf("ReadAtEvent(%d): %v", off, err)
					}
				}
				if _, err := c.Truncate(name, off); err != nil {
					t.Fatalf("Truncate(%d) at a boundary: %v", off, err)
				}
				if got := readBytes(t, c, name); !bytes.Equal(got, all[off:]) {
					t.Fatalf("after Truncate(%d) read %q, want %q", off, got, all[off:])
				}
				if off < int64(len(all)) {
					c.Close()
					c = open(t, cfg)
				}
			}
		})
	}
}

// TestTruncateBeyondTheEndRacingAppends truncates just past the end of a
// segment, where the next event's frame will be, while appends extend
// it: an offset that was beyond the end when Truncate checked it must be
// refused, not truncated at unchecked once an append has put it inside
// an event.
func TestTruncateBeyondTheEndRacingAppends(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir(), CheckpointBytes: -1})
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	data := block("twenty bytes of data")
	const appends = 20000
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer stop.Store(true)
		var ps []*PendingAppend
		for i := 0; i < appends && !stop.Load(); i++ {
			p, err := c.AppendAsync(Append{Segment: seg, EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset, Data: data})
			if err != nil {
				t.Error(err)
				return
			}
			ps = append(ps, p)
		}
		for _, p := range ps {
			if _, err := p.Wait(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var bad error
	for !stop.Load() && bad == nil {
		c.mu.Lock()
		length := c.mu.st.byName[seg].length
		c.mu.Unlock()
		// Inside the frame of the event appended next, at length.
		_, err := c.Truncate(seg, length+3)
		switch {
		case err == nil:
			bad = errors.New("truncated inside an event")
		case !errors.Is(err, protocol.ErrInvalidArgument) && !errors.Is(err, protocol.ErrNotEventBoundary):
			bad = err
		}
		if bad != nil {
			stop.Store(true)
			t.Errorf("Truncate(%d) with the segment %d bytes long: %v", length+3, length, bad)
		}
	}
	wg.Wait()
}

// TestRepairOfATruncationInsideAnEvent: a segment whose start an older
// version put inside an event (a truncate record logged with no check) is
// read with a clear error at its start, and truncating again at the next
// event boundary, above the start, is accepted and makes it readable.
func TestRepairOfATruncationInsideAnEvent(t *testing.T) {
	for _, tier := range []bool{false, true} {
		t.Run(fmt.Sprint("tiered=", tier), func(t *testing.T) {
			dir := t.TempDir()
			chunks := newMemChunks()
			chunks.partBytes = 20
			cfg := Config{Dir: dir, Cache: cache.New(1)}
			if tier {
				cfg.Chunks = chunks
			}
			c := open(t, cfg)
			name := protocol.SegmentName("sc", "st", 0, 0)
			if err := c.Create(name, nil); err != nil {
				t.Fatal(err)
			}
			evs := []string{"alpha", "bravo", "charlie", "delta"}
			appendEvents(t, c, name, "w", 3, evs...)
			appendEvents(t, c, name, "w", 4, "echo")
			if tier {
				chunks.tier(t, c, name, 1000)
			}
			// What an older version did: log the truncation unchecked.
			poisoned := int64(len(block("alpha")) + 2)
			c.mu.Lock()
			s := c.mu.st.byName[name]
			p, err := c.logLocked(recTruncate, encode(truncateRecord{ID: s.id, Offset: poisoned}))
			if err != nil {
				c.mu.Unlock()
				t.Fatal(err)
			}
			c.mu.st.applyTruncate(s, poisoned, 0)
			c.mu.Unlock()
			if err := c.wait(p); err != nil {
				t.Fatal(err)
			}
			c.Close()
			c = open(t, cfg)

			_, err = c.ReadAtEvent(t.Context(), name, poisoned, 100)
			if !errors.Is(err, protocol.ErrNotEventBoundary) {
				t.Fatalf("read at the poisoned start: %v, want ErrNotEventBoundary", err)
			}
			next := int64(len(block("alpha", "bravo")))
			if _, err := c.Truncate(name, next-1); !errors.Is(err, protocol.ErrNotEventBoundary) {
				t.Fatalf("repair inside the next event: %v, want ErrNotEventBoundary", err)
			}
			if _, err := c.Truncate(name, next); err != nil {
				t.Fatalf("repair at the next boundary %d: %v", next, err)
			}
			if got := readAll(t, c, name, next); fmt.Sprint(got) != "[charlie delta echo]" {
				t.Fatalf("after the repair read %v", got)
			}
		})
	}
}

// TestEventNumberOutsideTheRangeIsRefused: a block numbered outside
// 0..protocol.MaxEventNumber is refused, and the writer's next proper
// block is stored, not taken for a resend.
func TestEventNumberOutsideTheRangeIsRefused(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir()})
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		last  int64
		count int32
	}{{1<<63 - 1, 1}, {1<<63 - 1, 3}, {-1, 1}, {-1 << 63, 2}} {
		_, err := c.Append(Append{Segment: seg, Writer: "w", EventNumber: bad.last, EventCount: bad.count,
			ExpectedOffset: protocol.NoExpectedOffset, Data: block(make([]string, bad.count)...)})
		if !errors.Is(err, protocol.ErrInvalidEventNumber) {
			t.Fatalf("append numbered up to %d (%d events): %v, want ErrInvalidEventNumber", bad.last, bad.count, err)
		}
	}
	if last, _ := c.SetupAppend(seg, "w"); last != protocol.NoEventNumber {
		t.Fatalf("refused appends left the writer at %d", last)
	}
	r := appendEvents(t, c, seg, "w", 5, "stored")
	if r.Duplicate {
		t.Fatal("the proper append after a refused one was taken for a resend")
	}
	if _, err := c.Append(Append{Segment: seg, Writer: "w", EventNumber: protocol.MaxEventNumber, EventCount: 1,
		ExpectedOffset: protocol.NoExpectedOffset, Data: block("last")}); err != nil {
		t.Fatalf("append numbered MaxEventNumber: %v", err)
	}
	if got := readAll(t, c, seg, 0); fmt.Sprint(got) != "[stored last]" {
		t.Fatalf("read %v", got)
	}
}

// TestWriterPoisonedByAnOlderVersion: a writer whose stored number is
// math.MaxInt64 (an older version accepted such a block) gets every block
// refused, never acknowledged as a resend and dropped; other writers are
// unaffected.
func TestWriterPoisonedByAnOlderVersion(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir()})
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	// What an older version stored: an append record numbered MaxInt64.
	c.mu.Lock()
	s := c.mu.st.byName[seg]
	data := block("poison")
	hdr := appendHeader(s.id, s.length, 1<<63-1, "old")
	p, err := c.logLocked(recAppend, hdr, data)
	if err != nil {
		c.mu.Unlock()
		t.Fatal(err)
	}
	c.mu.st.applyAppend(s, appendRecord{segID: s.id, offset: s.length, eventNumber: 1<<63 - 1, writer: "old", dataOff: len(hdr), data: data}, p.Addr, 0, 0)
	c.mu.Unlock()
	if err := c.wait(p); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{0, 5, protocol.MaxEventNumber} {
		_, err := c.Append(Append{Segment: seg, Writer: "old", EventNumber: n, EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: block("lost?")})
		if !errors.Is(err, protocol.ErrInvalidEventNumber) {
			t.Fatalf("append %d by the poisoned writer: %v, want ErrInvalidEventNumber", n, err)
		}
	}
	appendEvents(t, c, seg, "new", 0, "fine")
	if got := readAll(t, c, seg, 0); fmt.Sprint(got) != "[poison fine]" {
		t.Fatalf("read %v", got)
	}
}

// BenchmarkReadAtEvent compares reads with and without the boundary
// check, on a 1 MiB block of 100-byte events: "sequential" reads 4 KiB at
// a time from where the last read's whole events ended, as a reader does
// (the check walks from the previous read's start, a hint); "far" starts
// each read at the last event of the block, a different segment's hints
// never helping (the check walks the whole block: the worst case).
func BenchmarkReadAtEvent(b *testing.B) {
	c, err := Open(Config{Dir: b.TempDir(), Cache: cache.New(64 << 20)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ev := bytes.Repeat([]byte{'x'}, 96)
	var data []byte
	n := 0
	for len(data) < 1<<20 {
		data = protocol.AppendEvent(data, ev)
		n++
	}
	for i := range 2 {
		name := protocol.SegmentName("sc", "st", int64(i), 0)
		if err := c.Create(name, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Append(Append{Segment: name, EventCount: int32(n), ExpectedOffset: protocol.NoExpectedOffset, Data: data}); err != nil {
			b.Fatal(err)
		}
	}
	seq, far := protocol.SegmentName("sc", "st", 0, 0), protocol.SegmentName("sc", "st", 1, 0)
	for _, tc := range []struct {
		name string
		read func(context.Context, string, int64, int) (ReadResult, error)
	}{{"Read", c.Read}, {"ReadAtEvent", c.ReadAtEvent}} {
		b.Run("sequential/"+tc.name, func(b *testing.B) {
			off := int64(0)
			for b.Loop() {
				r, err := tc.read(context.Background(), seq, off, 4096)
				if err != nil {
					b.Fatal(err)
				}
				off += int64(r.Len()) / 100 * 100 // the whole events read
				if off >= int64(len(data))-4096 {
					off = 0
				}
			}
		})
		b.Run("far/"+tc.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				c.mu.Lock()
				c.mu.st.byName[far].hints.at = [boundaryHints]int64{}
				c.mu.Unlock()
				if _, err := tc.read(context.Background(), far, int64(len(data)-100), 100); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
