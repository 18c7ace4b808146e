package client

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
)

// A reader catching up on a long segment, whose application takes the
// events more slowly than the node answers, holds a bounded number of
// bytes per segment (readahead.go: "at most about twice readBuffer"):
// reads queued in segRead.pend must not pile up while the buffer's
// remnant is only the start of an event or runs empty.
func TestReviewReadAheadStaysBounded(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "rabound", 1)
	a := newAppender(t, d)
	seg := segName("rabound", 0, 0)
	// 100-byte events: reads of 1000 bytes cut events.
	for b := range 40 {
		var evs []string
		for i := range 100 {
			evs = append(evs, fmt.Sprintf("%06d/%s", b*100+i, strings.Repeat("x", 93)))
		}
		a.add(seg, evs...)
	}
	c := newTestClient(t, d)
	const rb = 1000
	r := newTestReader(t, c, "rabound", WithReadBuffer(rb))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	most := 0
	for i := range 600 {
		ev, err := r.ReadNext(ctx)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if want := fmt.Sprintf("%06d/", i); !strings.HasPrefix(string(ev.Data), want) {
			t.Fatalf("event %d: %.10q", i, ev.Data)
		}
		// Between calls the segment's state is the caller's to look at.
		if sr := r.segs[seg]; sr != nil {
			most = max(most, sr.buffered())
		}
		time.Sleep(time.Millisecond) // a slow application: fetches land meanwhile
	}
	if most > 3*rb {
		t.Fatalf("the segment held up to %d bytes with a read buffer of %d: the read-ahead queue grows without bound", most, rb)
	}
}
