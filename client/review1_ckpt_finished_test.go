package client

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"
)

// TestReviewCheckpointOfFinishedGroup: every reader of a bounded group has
// returned ErrEndOfSlice, which ReadNext returns again on every later call,
// so the application stops calling it (the reader stays open). A
// checkpoint then has one right answer, the end cut, and nothing can
// change it; before checkpoint events the heartbeat reported such a
// reader. Now InitiateCheckpoint waits until ctx for a checkpoint event
// that no one will ask for.
func TestReviewCheckpointOfFinishedGroup(t *testing.T) {
	_, c, all := sliceStream(t)
	k, j := sliceCuts(t, all)
	start, end := all[k].Position.Cut(), all[j].Position.Cut()
	ctx := context.Background()
	g, err := c.NewReaderGroup(ctx, "sc", "bg", "bs", GroupFrom(FromCut(start)), GroupTo(end))
	if err != nil {
		t.Fatal(err)
	}
	gr := joinTest(t, c, "bg", "a", WithCommitInterval(20*time.Millisecond), WithGroupReaderOptions(withTailWait(200*time.Millisecond)))
	got, err := readToEnd(gr.ReadNext)
	if !errors.Is(err, ErrEndOfSlice) {
		t.Fatalf("after %d events: %v, want ErrEndOfSlice", len(got), err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cut, err := g.InitiateCheckpoint(cctx, "cp")
	if err != nil {
		t.Fatalf("checkpoint of a group whose readers all returned ErrEndOfSlice: %v", err)
	}
	if !maps.Equal(cut, end) {
		t.Fatalf("checkpoint cut %v, want the end cut %v", cut, end)
	}
}
