package controller

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestTieringPolicyReachesTheSegments: a stream's tiering policy is set on
// its segments when they are created (also by a scale) and on the current
// ones when an update changes it.
func TestTieringPolicyReachesTheSegments(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	ctx := ctxT(t)
	c := e.conn()
	must(t, s.CreateScope(ctx, "sc"))
	cfg := fixed("sc", "st", 1)
	cfg.TieringPolicy = &api.TieringPolicy{MaxLagMillis: 5000}
	_, err := s.CreateStream(ctx, cfg)
	must(t, err)
	attrs := func(seg string) map[string]int64 {
		t.Helper()
		a, err := c.GetAttributes(ctx, seg, []string{protocol.AttrTierMaxLagMillis, protocol.AttrTierSegmentBytes})
		must(t, err)
		return a
	}
	s0 := protocol.SegmentName("sc", "st", 0, 0)
	if got, want := attrs(s0), map[string]int64{protocol.AttrTierMaxLagMillis: 5000}; !reflect.DeepEqual(got, want) {
		t.Fatalf("attributes at creation %v, want %v", got, want)
	}
	cfg.TieringPolicy = &api.TieringPolicy{SegmentBytes: 1 << 20}
	_, err = s.UpdateStream(ctx, "sc", "st", cfg)
	must(t, err)
	if got, want := attrs(s0), map[string]int64{protocol.AttrTierMaxLagMillis: 0, protocol.AttrTierSegmentBytes: 1 << 20}; !reflect.DeepEqual(got, want) {
		t.Fatalf("attributes after the update %v, want %v", got, want)
	}
	_, err = s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 0.5}, {Low: 0.5, High: 1}}})
	must(t, err)
	for _, n := range []int64{1, 2} {
		seg := protocol.SegmentName("sc", "st", n, 1)
		if got, want := attrs(seg), map[string]int64{protocol.AttrTierSegmentBytes: 1 << 20}; !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: attributes after a scale %v, want %v", seg, got, want)
		}
	}
	cfg.TieringPolicy = &api.TieringPolicy{MaxLagMillis: -1}
	if _, err := s.UpdateStream(ctx, "sc", "st", cfg); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative lag: %v", err)
	}
}
