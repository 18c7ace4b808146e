package client_test

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
)

// TestAckSettled writes through a real node and checks that each Ack's
// settle time lies between its Write call and the moment its Done was
// seen closed, and that the Acks of one segment settle in write order.
func TestAckSettled(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "settled", 1)
	c := newClient(t, d)
	ctx := testCtx(t)
	w, err := c.NewWriter(ctx, "s", "settled")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	var prev time.Time
	for i := range 200 {
		before := time.Now()
		ack, err := w.Write(ctx, "", []byte("event"))
		if err != nil {
			t.Fatal(err)
		}
		if err := ack.Wait(ctx); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		seen := time.Now()
		at := ack.Settled()
		if at.IsZero() || at.Before(before) || at.After(seen) || at.Before(prev) {
			t.Fatalf("event %d settled at %v: want between its Write %v and Done seen %v, not before the previous %v",
				i, at, before, seen, prev)
		}
		prev = at
	}
}
