package client_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/protocol"
)

// A writer's Acks are settled in the order of its writes (the connection's
// reader settles them as the node's acknowledgements arrive), and an
// event whose Ack is done is stored: a read after it finds every event
// up to it.
func TestWriterAcksSettleInOrder(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "ord", 1)
	c := newClient(t, d)
	ctx := testCtx(t)
	// Small blocks: many in flight at once on the connection.
	w, err := c.NewWriter(ctx, "s", "ord", client.WithMaxBatch(256))
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	acks := make([]*client.Ack, n)
	for i := range acks {
		if acks[i], err = w.Write(ctx, "k", []byte(fmt.Sprintf("k:%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	conn := d.Dial()
	seg := protocol.SegmentName("s", "ord", 0, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	for k, i := range rng.Perm(n) {
		if err := acks[i].Wait(ctx); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		for j := 0; j < i; j++ {
			select {
			case <-acks[j].Done():
			default:
				t.Fatalf("event %d acknowledged before event %d", i, j)
			}
		}
		if k%500 == 0 {
			if got := len(d.ReadAll(conn, seg)); got <= i {
				t.Fatalf("event %d acknowledged, but the segment holds %d events", i, got)
			}
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkPerKey(t, d, []string{seg}, map[string]int{"k": n})
}
