package client

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

// TestReviewBoundedGroupTruncatedPastItsEnd: the reader-group variant of
// TestReviewBoundedReaderTruncatedPastItsEnd: a group with an end cut in
// segment 0 meets a truncation that deleted segment 0; the group places
// the head cut's segment 1 (after the end cut) and its reader reads it.
func TestReviewBoundedGroupTruncatedPastItsEnd(t *testing.T) {
	var c *Client
	truncatedPastEnd(t, "gt", "bounded group", func(cl *Client, s0 string, end int64) {
		c = cl
		if _, err := c.NewReaderGroup(context.Background(), "sc", "gg", "gt", GroupFrom(FromCut(api.StreamCut{s0: 0})), GroupTo(api.StreamCut{s0: end})); err != nil {
			t.Fatal(err)
		}
	}, func() func(context.Context) (Event, error) {
		// The group's reader joins after the truncation.
		gr := joinTest(t, c, "gg", "a", WithCommitInterval(20*time.Millisecond), WithGroupReaderOptions(withTailWait(200*time.Millisecond)))
		return gr.ReadNext
	})
}
