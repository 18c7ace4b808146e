package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/controller/rest/resttest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestTruncateInsideAnEventIsRefused: a truncation cut inside an event,
// sent to the REST API, is refused with 400 NOT_EVENT_BOUNDARY naming the
// segment and offset; nothing changes, in the metadata or on the node;
// the stream reads whole from the head; a cut at a boundary then works.
func TestTruncateInsideAnEventIsRefused(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "mid", 1)
	a := newAppender(t, d)
	s0 := segName("mid", 0, 0)
	var offs []int64
	for i := range 6 {
		offs = append(offs, a.add(s0, fmt.Sprintf("event-%d", i), fmt.Sprintf("second of block %d", i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before := resttest.Dump(t, d.Store)
	mid := offs[2] + 3 // inside the length prefix of a block's first event
	body := fmt.Sprintf(`{%q: %d}`, s0, mid)
	resp, err := http.Post(d.URL+"/v1/scopes/sc/streams/mid/truncate", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var e api.Error
	err = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || e.Code != api.CodeNotEventBoundary ||
		!strings.Contains(e.Message, s0) || !strings.Contains(e.Message, fmt.Sprint(mid)) {
		t.Fatalf("truncate inside an event: %d %+v; want 400 %s naming %s and %d", resp.StatusCode, e, api.CodeNotEventBoundary, s0, mid)
	}
	err = d.Controller.TruncateStream(ctx, "sc", "mid", api.StreamCut{s0: offs[3] - 1})
	if !errors.Is(err, ctlclient.ErrInvalid) || !errors.Is(err, protocol.ErrNotEventBoundary) {
		t.Fatalf("truncate just before an event: %v; want ErrInvalid and ErrNotEventBoundary", err)
	}
	if after := resttest.Dump(t, d.Store); !maps.Equal(before, after) {
		t.Fatal("a refused truncation changed the metadata")
	}
	conn := d.Dial()
	if info, err := conn.GetSegmentInfo(ctx, s0); err != nil || info.StartOffset != 0 {
		t.Fatalf("segment after refused truncations: %+v, %v", info, err)
	}
	c := newTestClient(t, d)
	r := newTestReader(t, c, "mid", FromHead())
	if got := data(readN(t, r, 12)); got[0] != "event-0" || got[11] != "second of block 5" {
		t.Fatalf("read from the head: %v", got)
	}

	// A boundary the system gave (an event's offset) is accepted.
	if err := d.Controller.TruncateStream(ctx, "sc", "mid", api.StreamCut{s0: offs[4]}); err != nil {
		t.Fatal(err)
	}
	r2 := newTestReader(t, c, "mid", FromHead())
	if got := data(readN(t, r2, 4)); !slices.Equal(got, []string{"event-4", "second of block 4", "event-5", "second of block 5"}) {
		t.Fatalf("read after truncating at a boundary: %v", got)
	}
}

// TestReaderAtAnOffsetInsideAnEvent: a reader started from a cut inside an
// event gets a clear NotEventBoundary error, and nothing else is harmed: a
// reader from a proper cut reads the segment whole.
func TestReaderAtAnOffsetInsideAnEvent(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "badpos", 1)
	a := newAppender(t, d)
	s0 := segName("badpos", 0, 0)
	var offs []int64
	for i := range 4 {
		offs = append(offs, a.add(s0, fmt.Sprintf("e%d-%s", i, bytes.Repeat([]byte{'x'}, 300))))
	}
	c := newTestClient(t, d)
	bad := newTestReader(t, c, "badpos", FromCut(api.StreamCut{s0: offs[1] + 7}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 { // the same clear error each time, no garbage events
		ev, err := bad.ReadNext(ctx)
		if !errors.Is(err, protocol.ErrNotEventBoundary) || !strings.Contains(err.Error(), s0) {
			t.Fatalf("read from inside an event: %q, %v; want ErrNotEventBoundary naming %s", ev.Data, err, s0)
		}
	}
	good := newTestReader(t, c, "badpos", FromCut(api.StreamCut{s0: offs[1]}))
	if got := readN(t, good, 3); !strings.HasPrefix(string(got[0].Data), "e1-") || !strings.HasPrefix(string(got[2].Data), "e3-") {
		t.Fatalf("read from a boundary: %v", data(got))
	}
}

// TestAppendNumberedMaxInt64OverTheWire: a block numbered 2^63-1 is
// refused with InvalidEventNumber, and the writer's next proper block is
// stored and read back (it used to be acknowledged and dropped).
func TestAppendNumberedMaxInt64OverTheWire(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "maxnum", 1)
	s0 := segName("maxnum", 0, 0)
	conn := d.Dial()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := conn.SetupAppend(ctx, "w", s0); err != nil {
		t.Fatal(err)
	}
	_, err := conn.Append(ctx, "w", math.MaxInt64, 1, protocol.AppendEvent(nil, []byte("poison")), protocol.NoExpectedOffset)
	if !errors.Is(err, protocol.ErrInvalidEventNumber) {
		t.Fatalf("append numbered MaxInt64: %v, want ErrInvalidEventNumber", err)
	}
	ack, err := conn.Append(ctx, "w", 0, 1, protocol.AppendEvent(nil, []byte("proper")), protocol.NoExpectedOffset)
	if err != nil {
		t.Fatalf("the next proper append: %v", err)
	}
	if ack.PreviousEventNumber != protocol.NoEventNumber || ack.CurrentOffset == 0 {
		t.Fatalf("the next proper append was not stored: %+v", ack)
	}
	if got := d.ReadAll(conn, s0); len(got) != 1 || string(got[0]) != "proper" {
		t.Fatalf("segment holds %q", got)
	}
	if last, err := conn.SetupAppend(ctx, "w", s0); err != nil || last != 0 {
		t.Fatalf("writer's stored number %d, %v; want 0", last, err)
	}
}
