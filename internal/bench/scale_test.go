package bench

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/controller"
)

// TestScaleAt splits the stream during a Write run against a real node
// and controller: the report has writes during the scale and outside it,
// in the order asked, sealed, served.
func TestScaleAt(t *testing.T) {
	d := clienttest.Start(t)
	r, err := Run(context.Background(), Config{Controller: d.URL, Mode: Write, Writers: 1, Readers: 1, Segments: 2, EventSize: 100,
		Rate: 2000, Duration: 3 * time.Second, ScaleAt: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Scale
	if s == nil || s.EventsDuring == 0 || s.EventsOutside == 0 || s.EventsDuring+s.EventsOutside != int(r.Events) ||
		s.AskedMS < 1000 || s.CallMS <= 0 || s.SealedMS < s.AskedMS || s.ServedMS < s.SealedMS {
		t.Fatalf("scale report %+v (events %d)", s, r.Events)
	}
	checkLatency(t, "during the scale", s.During)
	checkLatency(t, "outside the scale", s.Outside)
}

// TestScaleReaction runs bench scale against a real node and controller
// auto-scaling with windows of seconds: the first split is seen, its parts
// add up, and the reason is the controller's.
func TestScaleReaction(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithAutoScale([4]time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second},
		controller.AutoScaleOptions{Interval: 100 * time.Millisecond, Cooldown: 500 * time.Millisecond, MaxSegments: 4}))
	r, err := Run(context.Background(), Config{Controller: d.URL, Mode: Scale, Writers: 1, Readers: 1, Segments: 1, EventSize: 50,
		Target: 50, Rate: 500, Warmup: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	x := r.Reaction
	if x == nil || r.Scale == nil || x.Target != 50 || !strings.Contains(x.Reason, "hot") || x.DetectMS < 0 || x.DecideMS < 0 || x.ServeMS < 0 {
		t.Fatalf("reaction %+v, scale %+v", x, r.Scale)
	}
	if sum := x.DecideMS + x.PublishMS + x.ServeMS; sum-x.TotalMS > 1e-6 || x.TotalMS-sum > 1e-6 {
		t.Fatalf("reaction %+v: the parts add up to %v", x, sum)
	}
	if r.Readers != 0 || r.Segments != 1 {
		t.Fatalf("report %+v: want no readers and the stream's one segment at the start", r)
	}
}

// TestManyStreamsAndServerMemory writes to several streams through
// shared clients and reads this process's memory (the node runs in it).
func TestManyStreamsAndServerMemory(t *testing.T) {
	d := clienttest.Start(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	r, err := Run(ctx, Config{Controller: d.URL, Mode: Write, Writers: 4, Readers: 1, Segments: 2, Streams: 3, Clients: 2,
		EventSize: 100, Count: 400, ServerPID: os.Getpid(), ServerPprof: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if r.Streams != 3 || r.Segments != 6 || r.Events != 400 {
		t.Fatalf("report %+v: want 3 streams, 6 segments, 400 events", r)
	}
	m := r.Server
	if m == nil || m.RSSBytes <= 0 || m.PeakRSSBytes < m.RSSBytes || m.HeapAllocBytes <= 0 || m.HeapInuseBytes <= 0 || m.SysBytes < m.HeapInuseBytes || m.Goroutines <= 0 {
		t.Fatalf("server memory %+v", m)
	}
	if streams, err := d.Controller.ListStreams(ctx, Scope, nil); err != nil || len(streams) != 0 {
		t.Fatalf("streams of %s after the run: %v, %v; want none", Scope, streams, err)
	}
}

func TestValidateScaleFields(t *testing.T) {
	ok := Config{Controller: "x", Mode: Write, Writers: 1, Readers: 1, Segments: 1, EventSize: 1}
	for _, tc := range []struct {
		name string
		mod  func(c *Config)
		want string
	}{
		{"streams with stream", func(c *Config) { c.Streams, c.Stream = 2, "a/b" }, "--streams applies to the streams bench creates"},
		{"negative clients", func(c *Config) { c.Clients = -1 }, "--clients -1"},
		{"scale-at on read", func(c *Config) { c.Mode, c.ScaleAt = Read, time.Second }, "--scale-at applies to bench write"},
		{"scale-at after the run", func(c *Config) { c.ScaleAt, c.Duration = 2*time.Second, time.Second }, "want it within --duration"},
		{"target on write", func(c *Config) { c.Target = 5 }, "--target and --warmup apply to bench scale"},
		{"scale without target", func(c *Config) { c.Mode = Scale }, "needs the stream's target rate"},
		{"scale rate below", func(c *Config) { c.Mode, c.Target, c.Rate = Scale, 100, 50 }, "writes above --target"},
		{"scale with count", func(c *Config) { c.Mode, c.Target, c.Rate, c.Count = Scale, 100, 500, 5 }, "no --count or --duration"},
		{"scale of a stream", func(c *Config) { c.Mode, c.Target, c.Rate, c.Stream = Scale, 100, 500, "a/b" }, "creates its own stream"},
	} {
		c := ok
		tc.mod(&c)
		err := c.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}
