package container

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/rates"
	"github.com/sluice-streams/sluice/protocol"
)

// A committed transaction's events count in its target's rates (a stream
// written through transactions is measured as loaded), once: the target
// is measured at the merge as if they had been appended to it then.
func TestMergeCountsInTargetRates(t *testing.T) {
	cfg := rates.ConfigFor([rates.NumWindows]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second})
	c := open(t, Config{Dir: t.TempDir(), Rates: &cfg})
	defer c.Close()
	txn := protocol.TransactionSegmentName(seg, "6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	c.Create(seg, nil)
	c.Create(txn, nil)
	appendEvents(t, c, txn, "t", 3, "t1", "t2", "t3")
	c.Seal(txn)
	if _, err := c.Merge(seg, txn); err != nil {
		t.Fatal(err)
	}
	r, err := c.Rates(seg, RatesNow())
	if err != nil {
		t.Fatal(err)
	}
	// 3 events spread over the shortest window (1 s): about 3 events/s.
	if r.Events[0] < 2 || r.Events[0] > 4 || r.Bytes[0] <= 0 {
		t.Fatalf("target rates after merging 3 events: %.2f events/s, %.2f bytes/s, want about 3 events/s", r.Events[0], r.Bytes[0])
	}
}
