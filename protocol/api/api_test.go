package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestStreamConfigValidate(t *testing.T) {
	fixed := func(n int32) ScalingPolicy { return ScalingPolicy{Type: FixedNumSegments, MinSegments: n} }
	long := strings.Repeat("k", MaxTagLength+1)
	cases := []struct {
		name string
		cfg  StreamConfig
		want string // "" = valid; else a substring of the error
	}{
		{"fixed 1", StreamConfig{ScalingPolicy: fixed(1)}, ""},
		{"fixed 0", StreamConfig{ScalingPolicy: fixed(0)}, "minSegments"},
		{"fixed -1", StreamConfig{ScalingPolicy: fixed(-1)}, "minSegments"},
		{"fixed too many", StreamConfig{ScalingPolicy: fixed(MaxSegments + 1)}, "minSegments"},
		{"no type", StreamConfig{}, "scalingPolicy.type"},
		{"unknown type", StreamConfig{ScalingPolicy: ScalingPolicy{Type: "X", MinSegments: 1}}, "scalingPolicy.type"},
		{"events ok", StreamConfig{ScalingPolicy: ScalingPolicy{Type: ByRateInEventsPerSec, TargetRate: 10, ScaleFactor: 2, MinSegments: 1}}, ""},
		{"kbytes ok", StreamConfig{ScalingPolicy: ScalingPolicy{Type: ByRateInKBytesPerSec, TargetRate: 1, ScaleFactor: 3, MinSegments: 4}}, ""},
		{"rate 0", StreamConfig{ScalingPolicy: ScalingPolicy{Type: ByRateInEventsPerSec, TargetRate: 0, ScaleFactor: 2, MinSegments: 1}}, "targetRate"},
		{"factor 1", StreamConfig{ScalingPolicy: ScalingPolicy{Type: ByRateInKBytesPerSec, TargetRate: 5, ScaleFactor: 1, MinSegments: 1}}, "scaleFactor"},
		{"rate min 0", StreamConfig{ScalingPolicy: ScalingPolicy{Type: ByRateInKBytesPerSec, TargetRate: 5, ScaleFactor: 2}}, "minSegments"},
		{"retention days", StreamConfig{ScalingPolicy: fixed(1), RetentionPolicy: &RetentionPolicy{Type: RetentionLimitedDays, Value: 7}}, ""},
		{"retention size", StreamConfig{ScalingPolicy: fixed(1), RetentionPolicy: &RetentionPolicy{Type: RetentionLimitedSizeMB, Value: 1}}, ""},
		{"retention 0", StreamConfig{ScalingPolicy: fixed(1), RetentionPolicy: &RetentionPolicy{Type: RetentionLimitedDays}}, "retentionPolicy.value"},
		{"retention days overflow ms", StreamConfig{ScalingPolicy: fixed(1), RetentionPolicy: &RetentionPolicy{Type: RetentionLimitedDays, Value: 107_000_000_000}}, "retentionPolicy.value 107000000000: not in 1..8589934592"},
		{"retention size overflows bytes", StreamConfig{ScalingPolicy: fixed(1), RetentionPolicy: &RetentionPolicy{Type: RetentionLimitedSizeMB, Value: 1 << 43}}, "retentionPolicy.value"},
		{"retention largest", StreamConfig{ScalingPolicy: fixed(1), RetentionPolicy: &RetentionPolicy{Type: RetentionLimitedSizeMB, Value: MaxRetentionValue}}, ""},
		{"rate too high", StreamConfig{ScalingPolicy: ScalingPolicy{Type: ByRateInKBytesPerSec, TargetRate: MaxTargetRate + 1, ScaleFactor: 2, MinSegments: 1}}, "scalingPolicy.targetRate"},
		{"factor too high", StreamConfig{ScalingPolicy: ScalingPolicy{Type: ByRateInKBytesPerSec, TargetRate: 5, ScaleFactor: MaxSegments + 1, MinSegments: 1}}, "scalingPolicy.scaleFactor"},
		{"fixed with a negative rate", StreamConfig{ScalingPolicy: ScalingPolicy{Type: FixedNumSegments, TargetRate: -1, MinSegments: 1}}, "scalingPolicy.targetRate"},
		{"tier lag overflows a Duration", StreamConfig{ScalingPolicy: fixed(1), TieringPolicy: &TieringPolicy{MaxLagMillis: 1 << 60}}, "tieringPolicy.maxLagMillis"},
		{"tier bytes too many", StreamConfig{ScalingPolicy: fixed(1), TieringPolicy: &TieringPolicy{SegmentBytes: MaxTierSegmentBytes + 1}}, "tieringPolicy.segmentBytes"},
		{"tier negative", StreamConfig{ScalingPolicy: fixed(1), TieringPolicy: &TieringPolicy{SegmentBytes: -1}}, "tieringPolicy.segmentBytes"},
		{"retention type", StreamConfig{ScalingPolicy: fixed(1), RetentionPolicy: &RetentionPolicy{Type: "FOREVER", Value: 1}}, "retentionPolicy.type"},
		{"tags ok", StreamConfig{ScalingPolicy: fixed(1), Tags: map[string]string{"a": "b", strings.Repeat("k", MaxTagLength): "v"}}, ""},
		{"tag empty key", StreamConfig{ScalingPolicy: fixed(1), Tags: map[string]string{"": "b"}}, "tag key"},
		{"tag long key", StreamConfig{ScalingPolicy: fixed(1), Tags: map[string]string{long: "b"}}, "tag key"},
		{"tag empty value", StreamConfig{ScalingPolicy: fixed(1), Tags: map[string]string{"a": ""}}, "value length"},
		{"tag long value", StreamConfig{ScalingPolicy: fixed(1), Tags: map[string]string{"a": long}}, "value length"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkValidate(t, tc.cfg.Validate(), tc.want)
		})
	}
}

func TestStreamCutText(t *testing.T) {
	cases := []struct {
		text string
		cut  StreamCut
	}{
		{"", StreamCut{}},
		{"sc/st:0.#epoch.0=0", StreamCut{"sc/st/0.#epoch.0": 0}},
		{"sc/st:2.#epoch.1=5,3.#epoch.1=0,10.#epoch.4=9223372036854775807", StreamCut{
			"sc/st/10.#epoch.4": 9223372036854775807, "sc/st/3.#epoch.1": 0, "sc/st/2.#epoch.1": 5}},
		{"a.b/_c-d:1.#epoch.0=12", StreamCut{"a.b/_c-d/1.#epoch.0": 12}},
		{"a/x:0.#epoch.0=1;b/x:0.#epoch.0=2", StreamCut{"b/x/0.#epoch.0": 2, "a/x/0.#epoch.0": 1}},
	}
	for _, tc := range cases {
		if got := tc.cut.String(); got != tc.text {
			t.Errorf("String(%v) = %q, want %q", tc.cut, got, tc.text)
		}
		got, err := ParseStreamCut(tc.text)
		if err != nil {
			t.Errorf("ParseStreamCut(%q): %v", tc.text, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.cut) {
			t.Errorf("ParseStreamCut(%q) = %v, want %v", tc.text, got, tc.cut)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("Validate(%q): %v", tc.text, err)
		}
		// JSON round trip too.
		b, _ := json.Marshal(tc.cut)
		var back StreamCut
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, tc.cut) {
			t.Errorf("JSON round trip of %v: %v %v", tc.cut, back, err)
		}
	}
}

func TestParseStreamCutRejects(t *testing.T) {
	cases := []struct{ text, want string }{
		{"sc/st", "want scope/stream:"},
		{"scst:0.#epoch.0=1", "want scope/stream before"},
		{"sc/st:", "no segments"},
		{"sc/st:0.#epoch.0", "want N.#epoch.E=OFFSET"},
		{"sc/st:0.#epoch.0=", "canonical"},
		{"sc/st:0.#epoch.0=-1", "canonical"},
		{"sc/st:0.#epoch.0=01", "canonical"},
		{"sc/st:0.#epoch.0=1x", "canonical"},
		{"sc/st:0.#epoch.0=99999999999999999999", "out of range"},
		{"sc/st:0.#epoch.0=1,0.#epoch.0=2", "twice"},
		{"sc/st:0.#epoch.0=1,", "want N.#epoch.E"},
		{"sc/st:x.#epoch.0=1", "segment number"},
		{"sc/st:01.#epoch.0=1", "segment number"},
		{"sc/st:1.#epoch=1", "N.#epoch.E"},
		{"sc/st:1=1", "N.#epoch.E"},
		{"s c/st:0.#epoch.0=1", "scope"},
		{"sc/st/x:0.#epoch.0=1", ""},
		{"sc/st:0.#epoch.0#transaction.0f8fad5b-d9cb-469f-a165-70867728950e=1", "not a segment"},
		{"sc/st:0.#epoch.0=1;", "want scope/stream:"},
		{" sc/st:0.#epoch.0=1", "scope"},
		{"sc/st:0.#epoch.0=1 ", "canonical"},
	}
	for _, tc := range cases {
		c, err := ParseStreamCut(tc.text)
		if err == nil {
			t.Errorf("ParseStreamCut(%q) = %v, want an error", tc.text, c)
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseStreamCut(%q) = %v, want ErrInvalid mentioning %q", tc.text, err, tc.want)
		}
	}
}

func TestStreamCutValidate(t *testing.T) {
	for _, c := range []StreamCut{
		{"nope": 1},
		{"sc/st/0.#epoch.0": -1},
		{"sc/st/0.#epoch.0#transaction.0f8fad5b-d9cb-469f-a165-70867728950e": 0},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%v) = %v, want ErrInvalid", c, err)
		}
	}
}

func TestRequestValidate(t *testing.T) {
	cases := []struct {
		name string
		req  interface{ Validate() error }
		want string // "" = valid; else a substring of the error
	}{
		{"scale ok", &ScaleRequest{SealedSegments: []int64{0}, NewRanges: []KeyRange{{0, 0.5}, {0.5, 1}}}, ""},
		{"scale negative segment", &ScaleRequest{SealedSegments: []int64{-1}, NewRanges: []KeyRange{{0, 1}}}, "sealedSegments[0] -1"},
		{"scale no segments", &ScaleRequest{NewRanges: []KeyRange{{0, 1}}}, "sealedSegments: 0 items"},
		{"scale no ranges", &ScaleRequest{SealedSegments: []int64{0}}, "newRanges: 0 items"},
		{"scale too many ranges", &ScaleRequest{SealedSegments: []int64{0}, NewRanges: make([]KeyRange, MaxSegments+1)}, "newRanges: 1025 items"},
		{"scale key above 1", &ScaleRequest{SealedSegments: []int64{0}, NewRanges: []KeyRange{{0, 1.5}}}, "newRanges[0].high 1.5"},
		{"scale key below 0", &ScaleRequest{SealedSegments: []int64{0}, NewRanges: []KeyRange{{-0.5, 1}}}, "newRanges[0].low -0.5"},
		{"lease ok", &TxnRequest{LeaseMillis: 1000}, ""},
		{"lease negative", &TxnRequest{LeaseMillis: -5}, "leaseMillis -5"},
		{"lease overflows a Duration", &TxnRequest{LeaseMillis: MaxLeaseMillis + 1}, "leaseMillis"},
		{"group version negative", &ReaderGroupState{Version: -1}, "version -1"},
		{"cut range ok", &CutRange{From: StreamCut{"s/t/0.#epoch.0": 5}}, ""},
		{"cut range negative", &CutRange{To: StreamCut{"s/t/0.#epoch.0": -5}}, "negative offset"},
		{"group start cut negative", &ReaderGroupConfig{StartCut: StreamCut{"s/t/0.#epoch.0": -5}}, "negative offset"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkValidate(t, tc.req.Validate(), tc.want)
		})
	}
}

// checkValidate fails t unless err is nil for want "", or ErrInvalid with a
// message containing want.
func checkValidate(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("Validate = %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Validate = %v, want ErrInvalid mentioning %q", err, want)
	}
}

func TestValidateIDs(t *testing.T) {
	const uuid = "0f8fad5b-d9cb-469f-a165-70867728950e"
	cases := []struct {
		name  string
		check func(string) error
		id    string
		want  string // "" = valid; else a substring of the error
	}{
		{"txn ok", ValidateTxnID, uuid, ""},
		{"txn upper case", ValidateTxnID, strings.ToUpper(uuid), "not a canonical"},
		{"txn short", ValidateTxnID, uuid[:35], "not a canonical"},
		{"txn slash", ValidateTxnID, "0f8fad5b/d9cb-469f-a165-70867728950e", "not a canonical"},
		{"txn with a second name", ValidateTxnID, uuid + "#transaction." + uuid, "not a canonical"},
		{"txn empty", ValidateTxnID, "", "not a canonical"},
		{"node ok", ValidateNodeID, "node-1.example:9090", ""},
		{"node utf8", ValidateNodeID, "nœud", ""},
		{"node empty", ValidateNodeID, "", "length 0"},
		{"node long", ValidateNodeID, strings.Repeat("n", MaxNodeIDLength+1), "length 256"},
		{"node dot dot", ValidateNodeID, "..", "reserved"},
		{"node slash", ValidateNodeID, "a/b", `character "/" at byte 1`},
		{"node control", ValidateNodeID, "a\x00", `character "\x00" at byte 1`},
		{"node C1 control", ValidateNodeID, "a\u0085", `character "\u0085" at byte 1`},
		{"node bad utf8", ValidateNodeID, "a\xff", `character "\xff" at byte 1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkValidate(t, tc.check(tc.id), tc.want)
		})
	}
}
