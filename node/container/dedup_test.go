package container

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

// TestClassifyBlockRule checks the dedup rule over random and edge-case
// blocks: numbers outside 0..MaxEventNumber are refused (no arithmetic on
// them overflows), a block ending at or below the stored number is a
// resend, any other is applied and leaves room for a next number.
func TestClassifyBlockRule(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	edges := []int64{protocol.NoEventNumber, math.MinInt64 + 1, -2, -1, 0, 1, 2, 1 << 31, math.MaxInt64 - 2,
		protocol.MaxEventNumber, math.MaxInt64}
	pick := func() int64 {
		if r.IntN(3) == 0 {
			return edges[r.IntN(len(edges))]
		}
		return r.Int64N(1<<40) - 1<<20
	}
	counts := []int32{math.MinInt32, -1, 0, 1, 2, 3, 1000, math.MaxInt32}
	for range 200000 {
		stored, last, count := pick(), pick(), counts[r.IntN(len(counts))]
		if stored != protocol.NoEventNumber && stored < 0 {
			continue // never stored: a stored number passed the rule
		}
		resend, err := classifyBlock(stored, last, count)
		first := last - int64(count) + 1
		inRange := count >= 1 && last >= 0 && last <= protocol.MaxEventNumber
		switch {
		case !inRange || stored > protocol.MaxEventNumber: // the latter only from an older version
			if err == nil || !errors.Is(err, protocol.ErrInvalidEventNumber) {
				t.Fatalf("stored %d, block up to %d of %d events: %v, %v; want ErrInvalidEventNumber", stored, last, count, resend, err)
			}
		case stored == protocol.NoEventNumber || last > stored:
			if err != nil || resend {
				t.Fatalf("stored %d, new block %d..%d: resend %v, %v; want applied", stored, first, last, resend, err)
			}
			if last+1 <= last {
				t.Fatalf("applied block %d..%d leaves no next number", first, last)
			}
		default:
			if err != nil || !resend {
				t.Fatalf("stored %d, block %d..%d: resend %v, %v; want a resend", stored, first, last, resend, err)
			}
		}
	}
}

// TestDedupNeverAcknowledgesWhatIsNotStored runs a writer as the client
// does it (blocks numbered once, consecutively, sent in order; after a
// failure a new session sets up, counts the blocks at or below the stored
// number as acknowledged and resends the others in order) against the
// rule and the node's connection (a refused or lost block refuses the
// rest of its session), with blocks lost, refused and delivered twice at
// random: every event is stored exactly once, and no block is
// acknowledged unless all its events are stored.
func TestDedupNeverAcknowledgesWhatIsNotStored(t *testing.T) {
	type blk struct{ first, last int64 }
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		stored := protocol.NoEventNumber
		applied := map[int64]int{} // event number -> times stored
		next := int64(0)
		if r.IntN(4) == 0 {
			next = protocol.MaxEventNumber - 40 // near the end of the range
		}
		var inflight []blk
		var sent int
		ack := func(b blk, how string) {
			for n := b.first; n <= b.last; n++ {
				if applied[n] != 1 {
					t.Fatalf("seed %d: block %v acknowledged (%s), but event %d is stored %d times", seed, b, how, n, applied[n])
				}
			}
		}
		deliver := func(b blk) (ok bool) {
			resend, err := classifyBlock(stored, b.last, int32(b.last-b.first+1))
			if err != nil {
				return false
			}
			if !resend {
				for n := b.first; n <= b.last; n++ {
					applied[n]++
				}
				stored = b.last
			}
			return true
		}
		for session := 0; session < 40 && sent < 150; session++ {
			// Setup: what the node holds counts as acknowledged.
			for len(inflight) > 0 && stored != protocol.NoEventNumber && inflight[0].last <= stored {
				ack(inflight[0], "at setup")
				inflight = inflight[1:]
			}
			for range r.IntN(4) {
				count := int64(1 + r.IntN(5))
				if next > protocol.MaxEventNumber-count+1 { // next+count-1 would pass the range (or overflow)
					break
				}
				inflight = append(inflight, blk{next, next + count - 1})
				next += count
				sent++
			}
			// Send in order; the first block lost or refused ends the
			// session (the node refuses what follows it).
			acked := 0
			for _, b := range inflight {
				if r.IntN(5) == 0 {
					break
				}
				if !deliver(b) {
					t.Fatalf("seed %d: block %v refused after %d", seed, b, stored)
				}
				if r.IntN(6) == 0 && !deliver(b) { // a duplicate on the way
					t.Fatalf("seed %d: duplicate of %v refused", seed, b)
				}
				if r.IntN(4) == 0 {
					break // stored, but its acknowledgement is lost
				}
				ack(b, "by reply")
				acked++
			}
			inflight = inflight[acked:]
		}
		for n, times := range applied {
			if times != 1 {
				t.Fatalf("seed %d: event %d stored %d times", seed, n, times)
			}
		}
	}
}
