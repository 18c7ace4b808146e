package container

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/rates"
	"github.com/sluice-streams/sluice/protocol"
)

// TestMergeCountsInTargetRates: a committed transaction's events and bytes
// count in its parent's rates (a stream written only in transactions is
// measured), and an abort (a deleted transaction segment) counts nothing.
func TestMergeCountsInTargetRates(t *testing.T) {
	rc := rates.ConfigFor([rates.NumWindows]time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second})
	c := open(t, Config{Dir: t.TempDir(), Rates: &rc})
	other := protocol.SegmentName("sc", "st", 1, 0)
	committed := protocol.TransactionSegmentName(seg, "6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	aborted := protocol.TransactionSegmentName(other, "6ba7b810-9dad-11d1-80b4-00c04fd430c9")
	for _, n := range []string{seg, other, committed, aborted} {
		if err := c.Create(n, nil); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().UnixNano()
	for _, n := range []string{seg, other} {
		if _, err := c.Rates(n, start); err != nil { // measured from start, at zero
			t.Fatal(err)
		}
	}
	appendEvents(t, c, committed, "t", 3, "t1", "t2", "t3")
	appendEvents(t, c, aborted, "u", 2, "u1", "u2")
	for _, n := range []string{committed, aborted} {
		if _, err := c.Seal(n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Merge(seg, committed); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(aborted); err != nil {
		t.Fatal(err)
	}
	later := time.Now().UnixNano() + int64(time.Second)
	got, err := c.Rates(seg, later)
	if err != nil {
		t.Fatal(err)
	}
	if !(got.Events[0] > 0) || !(got.Bytes[0] > 0) {
		t.Fatalf("parent's rates after a merge of 3 events: %+v; want above zero", got)
	}
	got, err = c.Rates(other, later)
	if err != nil {
		t.Fatal(err)
	}
	if got.Events[0] != 0 || got.Bytes[0] != 0 {
		t.Fatalf("rates of a segment whose transaction was aborted: %+v; want zero", got)
	}
}
