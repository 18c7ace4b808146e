package api

import (
	"fmt"
	"math"
	"time"
)

// Range is the closed interval [Min, Max] that a number in a request body
// must lie in. Schema and Field name the number as docs/openapi.yaml does
// (the schema and its property), and Of says which number of the property
// is bounded; the document states the same bounds (OpenAPI minimum and
// maximum, or minItems and maxItems for OfCount), and a test of the
// controller's REST handler keeps the two equal.
type Range struct {
	Schema string
	Field  string
	Of     RangeOf
	Min    int64
	Max    int64
}

// RangeOf says which number of a property a Range bounds.
type RangeOf int

const (
	// OfValue: the property's value (OpenAPI minimum/maximum).
	OfValue RangeOf = iota
	// OfItems: each item of an array (items.minimum/maximum).
	OfItems
	// OfCount: the number of items of an array (minItems/maxItems).
	OfCount
	// OfMapValues: each value of an object used as a map
	// (additionalProperties.minimum/maximum).
	OfMapValues
)

// Bounds of the request numbers. Each keeps every conversion the
// controller and the nodes make (days to milliseconds, MiB to bytes,
// milliseconds to a time.Duration in nanoseconds) inside int64, with room.
const (
	// MaxTargetRate bounds scalingPolicy.targetRate (events/s or KB/s;
	// 2^40 KB/s is 2^50 bytes/s).
	MaxTargetRate = 1 << 40
	// MaxRetentionValue bounds retentionPolicy.value: 2^33 days is
	// 7.4e17 ms; 2^33 MiB is 2^53 bytes (8 PiB).
	MaxRetentionValue = 1 << 33
	// MaxTierLagMillis bounds tieringPolicy.maxLagMillis (365 days).
	MaxTierLagMillis = 365 * 24 * 60 * 60 * 1000
	// MaxTierSegmentBytes bounds tieringPolicy.segmentBytes (1 TiB).
	MaxTierSegmentBytes = 1 << 40
	// MaxLeaseMillis bounds leaseMillis: the longest lease a
	// time.Duration holds (the controller's maximum lease bounds it
	// further).
	MaxLeaseMillis = math.MaxInt64 / int64(time.Millisecond)
)

// The ranges that request validation uses (Ranges lists them all).
var (
	RangeTargetRate     = Range{"ScalingPolicy", "targetRate", OfValue, 0, MaxTargetRate}
	RangeScaleFactor    = Range{"ScalingPolicy", "scaleFactor", OfValue, 0, MaxSegments}
	RangeMinSegments    = Range{"ScalingPolicy", "minSegments", OfValue, 1, MaxSegments}
	RangeRetentionValue = Range{"RetentionPolicy", "value", OfValue, 1, MaxRetentionValue}
	RangeTierLag        = Range{"TieringPolicy", "maxLagMillis", OfValue, 0, MaxTierLagMillis}
	RangeTierBytes      = Range{"TieringPolicy", "segmentBytes", OfValue, 0, MaxTierSegmentBytes}
	RangeSealedSegment  = Range{"ScaleRequest", "sealedSegments", OfItems, 0, math.MaxInt64}
	RangeSealedCount    = Range{"ScaleRequest", "sealedSegments", OfCount, 1, MaxSegments}
	RangeNewRangeCount  = Range{"ScaleRequest", "newRanges", OfCount, 1, MaxSegments}
	RangeKeyLow         = Range{"KeyRange", "low", OfValue, 0, 1}
	RangeKeyHigh        = Range{"KeyRange", "high", OfValue, 0, 1}
	RangeLease          = Range{"TxnRequest", "leaseMillis", OfValue, 0, MaxLeaseMillis}
	RangeGroupVersion   = Range{"ReaderGroupState", "version", OfValue, 0, math.MaxInt64}
	RangeCutOffset      = Range{"StreamCut", "", OfMapValues, 0, math.MaxInt64}
)

// Ranges returns every range a request number is checked against.
func Ranges() []Range {
	return []Range{
		RangeTargetRate, RangeScaleFactor, RangeMinSegments, RangeRetentionValue,
		RangeTierLag, RangeTierBytes, RangeSealedSegment, RangeSealedCount,
		RangeNewRangeCount, RangeKeyLow, RangeKeyHigh, RangeLease,
		RangeGroupVersion, RangeCutOffset,
		RangeWriterTime,
	}
}

// Check returns nil if v lies in r, or an error wrapping ErrInvalid that
// names the field by path (as the body spells it: "scalingPolicy.minSegments"),
// the value and the range.
func (r Range) Check(path string, v int64) error {
	if v < r.Min || v > r.Max {
		return fmt.Errorf("%w: %s %d: not in %d..%d", ErrInvalid, path, v, r.Min, r.Max)
	}
	return nil
}

// CheckFloat is Check for a number JSON holds as a float (NaN fails).
func (r Range) CheckFloat(path string, v float64) error {
	if !(v >= float64(r.Min) && v <= float64(r.Max)) {
		return fmt.Errorf("%w: %s %v: not in %d..%d", ErrInvalid, path, v, r.Min, r.Max)
	}
	return nil
}

// Validate checks the scale's counts, segment numbers and key ranges (the
// controller checks that the ranges cover the sealed segments' exactly).
func (s *ScaleRequest) Validate() error {
	if err := RangeSealedCount.count("sealedSegments", len(s.SealedSegments)); err != nil {
		return err
	}
	if err := RangeNewRangeCount.count("newRanges", len(s.NewRanges)); err != nil {
		return err
	}
	for i, n := range s.SealedSegments {
		if err := RangeSealedSegment.Check(fmt.Sprintf("sealedSegments[%d]", i), n); err != nil {
			return err
		}
	}
	for i, kr := range s.NewRanges {
		if err := RangeKeyLow.CheckFloat(fmt.Sprintf("newRanges[%d].low", i), kr.Low); err != nil {
			return err
		}
		if err := RangeKeyHigh.CheckFloat(fmt.Sprintf("newRanges[%d].high", i), kr.High); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the lease (0: the controller's default).
func (r *TxnRequest) Validate() error { return RangeLease.Check("leaseMillis", r.LeaseMillis) }

// Validate checks the version (the state itself is checked by the
// controller).
func (s *ReaderGroupState) Validate() error { return RangeGroupVersion.Check("version", s.Version) }

// Validate checks both cuts.
func (c *CutRange) Validate() error {
	if err := c.From.Validate(); err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if err := c.To.Validate(); err != nil {
		return fmt.Errorf("to: %w", err)
	}
	return nil
}

// Validate checks the start cut (the name, streams and state are checked
// by the controller).
func (c *ReaderGroupConfig) Validate() error { return c.StartCut.Validate() }

// count is Check for the number of items of an array.
func (r Range) count(path string, n int) error {
	if int64(n) < r.Min || int64(n) > r.Max {
		return fmt.Errorf("%w: %s: %d items, want %d..%d", ErrInvalid, path, n, r.Min, r.Max)
	}
	return nil
}
