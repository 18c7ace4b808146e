package protocol_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

func TestValidate(t *testing.T) {
	// Every request in the samples is valid.
	for _, m := range sampleMessages() {
		if r, ok := m.(protocol.Request); ok {
			if ab, ok := m.(*protocol.AppendBlock); ok && len(ab.Data) == 0 {
				continue // the empty-payload sample exists for the round trip
			}
			if ab, ok := m.(*protocol.AppendBlock); ok && ab.RequestID == 11 {
				continue // one raw byte: not a framed event
			}
			if err := r.Validate(); err != nil {
				t.Errorf("%s: %v", m.Type(), err)
			}
		}
	}
	block := protocol.AppendEvent(nil, []byte("e"))
	bad := []struct {
		name string
		r    protocol.Request
		want error
	}{
		{"hello low > high", &protocol.Hello{LowVersion: 2, HighVersion: 1}, protocol.ErrInvalidArgument},
		{"hello zero", &protocol.Hello{}, protocol.ErrInvalidArgument},
		{"create bad name", &protocol.CreateSegment{Segment: "x"}, protocol.ErrInvalidArgument},
		{"setup empty writer", &protocol.SetupAppend{Segment: seg}, protocol.ErrInvalidArgument},
		{"setup long writer", &protocol.SetupAppend{WriterID: strings.Repeat("w", 257), Segment: seg}, protocol.ErrInvalidArgument},
		{"append no events", &protocol.AppendBlock{WriterID: "w", EventCount: 0, ExpectedOffset: -1, Data: block}, protocol.ErrInvalidArgument},
		{"append count mismatch", &protocol.AppendBlock{WriterID: "w", EventCount: 2, ExpectedOffset: -1, Data: block}, protocol.ErrInvalidArgument},
		{"append empty data", &protocol.AppendBlock{WriterID: "w", EventCount: 1, ExpectedOffset: -1}, protocol.ErrInvalidArgument},
		{"append bad offset", &protocol.AppendBlock{WriterID: "w", EventCount: 1, ExpectedOffset: -2, Data: block}, protocol.ErrInvalidArgument},
		{"append negative event number", &protocol.AppendBlock{WriterID: "w", EventCount: 1, LastEventNumber: -1, ExpectedOffset: -1, Data: block}, protocol.ErrInvalidArgument},
		{"append oversized event", &protocol.AppendBlock{WriterID: "w", EventCount: 1, ExpectedOffset: -1, Data: []byte{0xff, 0, 0, 0}}, protocol.ErrEventTooLarge},
		{"read max bytes 0", &protocol.ReadSegment{Segment: seg}, protocol.ErrInvalidArgument},
		{"read negative offset", &protocol.ReadSegment{Segment: seg, Offset: -1, MaxBytes: 1}, protocol.ErrInvalidArgument},
		{"read negative wait", &protocol.ReadSegment{Segment: seg, MaxBytes: 1, WaitMillis: -1}, protocol.ErrInvalidArgument},
		{"truncate negative", &protocol.TruncateSegment{Segment: seg, Offset: -1}, protocol.ErrInvalidArgument},
		{"merge same", &protocol.MergeSegments{Target: seg, Source: seg}, protocol.ErrInvalidArgument},
		{"merge bad source", &protocol.MergeSegments{Target: seg, Source: ""}, protocol.ErrInvalidArgument},
		{"get no keys", &protocol.GetAttributes{Segment: seg}, protocol.ErrInvalidArgument},
		{"get empty key", &protocol.GetAttributes{Segment: seg, Keys: []string{""}}, protocol.ErrInvalidArgument},
		{"get long key", &protocol.GetAttributes{Segment: seg, Keys: []string{strings.Repeat("k", 257)}}, protocol.ErrInvalidArgument},
		{"update none", &protocol.UpdateAttributes{Segment: seg}, protocol.ErrInvalidArgument},
		{"update kind 0", &protocol.UpdateAttributes{Segment: seg, Updates: []protocol.AttributeUpdate{{Key: "k"}}}, protocol.ErrInvalidArgument},
		{"update NoValue", &protocol.UpdateAttributes{Segment: seg, Updates: []protocol.AttributeUpdate{{Key: "k", Kind: protocol.Replace, Value: protocol.NoValue}}}, protocol.ErrInvalidArgument},
		{"seal bad", &protocol.SealSegment{}, protocol.ErrInvalidArgument},
		{"delete bad", &protocol.DeleteSegment{Segment: "a/b/c"}, protocol.ErrInvalidArgument},
		{"info bad", &protocol.GetSegmentInfo{Segment: "a/b/1.#epoch.x"}, protocol.ErrInvalidArgument},
	}
	for _, tt := range bad {
		if err := tt.r.Validate(); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// Boundaries that are valid.
	ok := []protocol.Request{
		&protocol.GetAttributes{Segment: seg, Keys: []string{strings.Repeat("k", 256)}},
		&protocol.SetupAppend{WriterID: strings.Repeat("w", 256), Segment: seg},
		&protocol.UpdateAttributes{Segment: seg, Updates: []protocol.AttributeUpdate{{Key: "k", Kind: protocol.Remove, Value: protocol.NoValue}}},
		&protocol.AppendBlock{WriterID: "w", EventCount: 1, ExpectedOffset: 0, Data: protocol.AppendEvent(nil, nil)},
	}
	for _, r := range ok {
		if err := r.Validate(); err != nil {
			t.Errorf("%#v: %v", r, err)
		}
	}
}
