package protocol_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

func TestGetSegmentRatesValidate(t *testing.T) {
	many := make([]string, protocol.MaxRateSegments+1)
	for i := range many {
		many[i] = seg
	}
	for _, tc := range []struct {
		segs []string
		want string // "" if valid
	}{
		{[]string{seg}, ""},
		{many[:protocol.MaxRateSegments], ""},
		{nil, "0 segments"},
		{many, "1025 segments"},
		{[]string{seg, "not a segment"}, "not a segment"},
	} {
		err := (&protocol.GetSegmentRates{Segments: tc.segs}).Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%d segments: %v", len(tc.segs), err)
			}
			continue
		}
		if !errors.Is(err, protocol.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d segments: %v, want ErrInvalidArgument naming %q", len(tc.segs), err, tc.want)
		}
	}
}
