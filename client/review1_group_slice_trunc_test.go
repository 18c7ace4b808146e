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

// TestReviewBoundedGroupTruncatedPastItsEnd: the reader-group variant of
// TestReviewBoundedReaderTruncatedPastItsEnd: a group with an end cut in
// segment 0 meets a truncation that deleted segment 0; the group places
// the head cut's segment 1 (after the end cut) and its reader reads it.
func TestReviewBoundedGroupTruncatedPastItsEnd(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "gt", 1)
	a := newAppender(t, d)
	s0 := segName("gt", 0, 0)
	var end int64
	for i := range 10 {
		off := a.add(s0, fmt.Sprintf("x/%d", i))
		if i == 5 {
			end = off // just after x/4
		}
	}
	c := newTestClient(t, d)
	ctx := context.Background()
	if _, err := c.NewReaderGroup(ctx, "sc", "gg", "gt", GroupFrom(FromCut(api.StreamCut{s0: 0})), GroupTo(api.StreamCut{s0: end})); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Controller.Scale(ctx, "sc", "gt", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 1}}}); err != nil {
		t.Fatal(err)
	}
	s1 := segName("gt", 1, 1)
	for i := range 5 {
		a.add(s1, fmt.Sprintf("y/%d", i))
	}
	if err := d.Controller.TruncateStream(ctx, "sc", "gt", api.StreamCut{s1: 0}); err != nil {
		t.Fatal(err)
	}
	gr := joinTest(t, c, "gg", "a", WithCommitInterval(20*time.Millisecond), WithGroupReaderOptions(withTailWait(200*time.Millisecond)))
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var got []string
	for {
		ev, err := gr.ReadNext(rctx)
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
			t.Fatalf("bounded group (end cut %s=%d) returned %v: events of %s, after its end cut", s0, end, got, s1)
		}
	}
}
