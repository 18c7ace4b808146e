package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
)

// TestReviewSequencedNewWriterWhileNodeRestarts: a sequenced NewWriter
// asks the node of every segment what it stores (GetWriterState),
// "retrying what may pass until ctx is done". A node that is restarting
// (connections refused for a moment) is such a failure, as every other
// client path treats it (a plain writer's segment goroutine, a reader's
// fetch). NewWriter must wait for the node within its ctx, not fail at
// once with the dial error.
func TestReviewSequencedNewWriterWhileNodeRestarts(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "nd", 1)
	c := newClient(t, d)
	d.StopNode()
	started := make(chan struct{})
	go func() {
		defer close(started)
		time.Sleep(500 * time.Millisecond)
		d.StartNode()
	}()
	defer func() { <-started }()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	w, err := c.NewWriter(ctx, "sc", "nd", client.WithWriterID("sw"), client.WithSequenced())
	if err != nil {
		t.Fatalf("sequenced NewWriter while the node restarts failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	w.Close(ctx)
}
