package client

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestReviewBoundedReaderTruncatedPastItsEnd: a reader bounded by an end
// cut in segment 0 (after x/4) meets a truncation that deleted segment 0
// (the stream was scaled to segment 1, then truncated at segment 1's
// start). Every event of segment 1 lies after the end cut: a bounded read
// must never return one of them (it may return ErrEndOfSlice or fail),
// but the reader follows the head cut past its end cut.
func TestReviewBoundedReaderTruncatedPastItsEnd(t *testing.T) {
	var r *Reader
	truncatedPastEnd(t, "bt", "bounded reader", func(c *Client, s0 string, end int64) {
		r = newTestReader(t, c, "bt", FromCut(api.StreamCut{s0: 0}), ToCut(api.StreamCut{s0: end}))
	}, func() func(context.Context) (Event, error) { return r.ReadNext })
}

// truncatedPastEnd writes x/0..x/9 to segment 0 of a new stream
// sc/<stream>, and calls bound with the cut just after x/4 (the end cut of
// the reader under test). It then scales the stream to segment 1, writes
// y/0..y/4 to it and truncates the stream at segment 1's start. It reads
// with what reader returns for 3 s at the most (until it fails): none of
// the events of segment 1, all after the end cut, may come back.
func truncatedPastEnd(t *testing.T, stream, what string, bound func(c *Client, s0 string, end int64), reader func() func(context.Context) (Event, error)) {
	t.Helper()
	d := clienttest.Start(t)
	d.CreateStream("sc", stream, 1)
	a := newAppender(t, d)
	s0 := segName(stream, 0, 0)
	var end int64
	for i := range 10 {
		off := a.add(s0, fmt.Sprintf("x/%d", i))
		if i == 5 {
			end = off // just after x/4
		}
	}
	c := newTestClient(t, d)
	bound(c, s0, end)

	ctx := context.Background()
	if _, err := d.Controller.Scale(ctx, "sc", stream, api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 1}}}); err != nil {
		t.Fatal(err)
	}
	s1 := segName(stream, 1, 1)
	for i := range 5 {
		a.add(s1, fmt.Sprintf("y/%d", i))
	}
	if err := d.Controller.TruncateStream(ctx, "sc", stream, api.StreamCut{s1: 0}); err != nil {
		t.Fatal(err)
	}

	next := reader()
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var got []string
	for {
		ev, err := next(rctx)
		if err != nil {
			t.Logf("ReadNext: %v", err)
			break
		}
		if !ev.IsCheckpoint() {
			got = append(got, string(ev.Data))
		}
	}
	for _, e := range got {
		if strings.HasPrefix(e, "y/") {
			t.Fatalf("%s (end cut %s=%d) returned %v: events of %s, after its end cut", what, s0, end, got, s1)
		}
	}
}
