package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
)

// Events appended while the reader waits at the tail of several segments
// come out each once, in each segment's order, at their offsets, whether
// a fetch's data is handed to a waiting ReadNext by the connection's
// reader or delivered by the fetch's goroutine.
func TestReaderTailHandOver(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "tail", 3)
	a := newAppender(t, d)
	c := newTestClient(t, d)
	r := newTestReader(t, c, "tail")
	keys := []string{"a", "b", "c"}
	const rounds = 200
	type want struct {
		seg string
		off int64
	}
	wants := map[string]want{}
	done := make(chan error, 1)
	var got []Event
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for len(got) < rounds*len(keys) {
			ev, err := r.ReadNext(ctx)
			if err != nil {
				done <- fmt.Errorf("after %d events: %w", len(got), err)
				return
			}
			got = append(got, ev)
		}
		done <- nil
	}()
	for i := range rounds {
		for s, key := range keys {
			ev := fmt.Sprintf("%s/%d", key, i)
			seg := segName("tail", int64(s), 0)
			wants[ev] = want{seg: seg, off: a.add(seg, ev)}
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := keyOrder(t, data(got)); n["a"] != rounds || n["b"] != rounds || n["c"] != rounds {
		t.Fatalf("counts %v, want %d of each", n, rounds)
	}
	for _, e := range got {
		if w := wants[string(e.Data)]; e.Segment != w.seg || e.Offset != w.off {
			t.Fatalf("event %q at %s@%d, want %s@%d", e.Data, e.Segment, e.Offset, w.seg, w.off)
		}
	}
	expectNothing(t, r)
}
