package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestReviewCheckpointDroppedByReset: a checkpoint is pending (its one
// reader has not returned the checkpoint event yet) when the group is
// reset. The reset drops the checkpoint: it can never complete. The
// caller of InitiateCheckpoint must then be told so, with an error of
// its own, not be left polling until its ctx ends (for ever with
// context.Background).
func TestReviewCheckpointDroppedByReset(t *testing.T) {
	_, c, segs := fourSegments(t)
	ctx := context.Background()
	g, err := c.NewReaderGroup(ctx, "sc", "cr", "gs")
	if err != nil {
		t.Fatal(err)
	}
	joinTest(t, c, "cr", "a", WithCommitInterval(20*time.Millisecond)) // never reads: the checkpoint stays pending

	cctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := g.InitiateCheckpoint(cctx, "cp"); done <- err }()
	waitFor(t, "the checkpoint pending", func() bool { return groupState(t, g).Checkpoint != nil })
	cut := map[string]int64{}
	for _, s := range segs {
		cut[s] = 0
	}
	if err := g.ResetToCut(ctx, cut); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("InitiateCheckpoint after the reset dropped its checkpoint: %v after %v, want an error saying the checkpoint was dropped", err, time.Since(start).Round(time.Millisecond))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("InitiateCheckpoint still waiting")
	}
}
