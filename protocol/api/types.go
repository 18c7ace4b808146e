package api

import (
	"errors"
	"fmt"
	"sort"
)

// ErrInvalid is wrapped by every validation and parse error of this package.
var ErrInvalid = errors.New("api: invalid")

// Scaling policy types (ScalingPolicy.Type).
const (
	FixedNumSegments       = "FIXED_NUM_SEGMENTS"
	ByRateInEventsPerSec   = "BY_RATE_IN_EVENTS_PER_SEC"
	ByRateInKBytesPerSec   = "BY_RATE_IN_KBYTES_PER_SEC"
	RetentionLimitedDays   = "LIMITED_DAYS"
	RetentionLimitedSizeMB = "LIMITED_SIZE_MB"
)

// Stream states (StreamState.State, JSON "streamState").
const StateSealed = "SEALED"

// Transaction statuses (TxnInfo.Status).
const (
	TxnOpen       = "OPEN"
	TxnCommitting = "COMMITTING"
	TxnCommitted  = "COMMITTED"
	TxnAborting   = "ABORTING"
	TxnAborted    = "ABORTED"
)

// MaxTagLength bounds tag keys and values (in bytes).
const MaxTagLength = 256

// MaxSegments bounds scalingPolicy.minSegments and the new ranges of one
// scale: each segment is created on a node and kept in the stream's one
// metadata record, so an unbounded count could exhaust the controller's
// memory or the store's value size for everyone.
const MaxSegments = 1024

// ScopeProperty is a scope: the body of POST /v1/scopes and an element of
// the scope list.
type ScopeProperty struct {
	ScopeName string `json:"scopeName"`
}

// ScalingPolicy says how many segments a stream is created with: MinSegments,
// for every type, and no scale (manual or automatic) leaves fewer.
// FIXED_NUM_SEGMENTS keeps that number until a scale is asked for.
// BY_RATE_* streams are scaled by the controller's auto-scaler as well: a
// segment above TargetRate (events/s, or KB/s of event bytes with their
// framing) splits into ScaleFactor segments, cold neighbours merge back
// (controller/autoscale).
type ScalingPolicy struct {
	Type        string `json:"type"`
	TargetRate  int64  `json:"targetRate,omitempty"`
	ScaleFactor int32  `json:"scaleFactor,omitempty"`
	MinSegments int32  `json:"minSegments"`
}

// RetentionPolicy bounds what a stream keeps: Value days (LIMITED_DAYS) or
// Value MB (LIMITED_SIZE_MB).
type RetentionPolicy struct {
	Type  string `json:"type"`
	Value int64  `json:"value"`
}

// StreamConfig is a stream's configuration: the body of POST
// /v1/scopes/{scope}/streams and PUT .../streams/{stream}.
type StreamConfig struct {
	ScopeName       string            `json:"scopeName"`
	StreamName      string            `json:"streamName"`
	ScalingPolicy   ScalingPolicy     `json:"scalingPolicy"`
	RetentionPolicy *RetentionPolicy  `json:"retentionPolicy,omitempty"`
	TieringPolicy   *TieringPolicy    `json:"tieringPolicy,omitempty"`
	Tags            map[string]string `json:"tags,omitempty"`
}

// TieringPolicy overrides, for one stream's segments, when the nodes move
// data to tier 2 (zero fields keep the nodes' settings).
type TieringPolicy struct {
	// MaxLagMillis bounds how long an event waits before it is in tier 2.
	MaxLagMillis int64 `json:"maxLagMillis,omitempty"`
	// SegmentBytes: a segment is tiered once this many of its bytes wait.
	SegmentBytes int64 `json:"segmentBytes,omitempty"`
}

// Validate checks the policies and tags (not the names: the controller
// checks those with protocol.ValidateName and its reserved-name rule):
// every number against its Range (Ranges), then what a policy's type
// needs. The error wraps ErrInvalid and names the field.
func (c *StreamConfig) Validate() error {
	p := c.ScalingPolicy
	switch p.Type {
	case FixedNumSegments, ByRateInEventsPerSec, ByRateInKBytesPerSec:
	default:
		return fmt.Errorf("%w: scalingPolicy.type %q: want %s, %s or %s", ErrInvalid, p.Type, FixedNumSegments, ByRateInEventsPerSec, ByRateInKBytesPerSec)
	}
	for _, f := range []struct {
		r    Range
		path string
		v    int64
	}{
		{RangeTargetRate, "scalingPolicy.targetRate", p.TargetRate},
		{RangeScaleFactor, "scalingPolicy.scaleFactor", int64(p.ScaleFactor)},
		{RangeMinSegments, "scalingPolicy.minSegments", int64(p.MinSegments)},
	} {
		if err := f.r.Check(f.path, f.v); err != nil {
			return err
		}
	}
	if p.Type != FixedNumSegments {
		if p.TargetRate < 1 {
			return fmt.Errorf("%w: scalingPolicy.targetRate %d: a %s policy needs at least 1", ErrInvalid, p.TargetRate, p.Type)
		}
		if p.ScaleFactor < 2 {
			return fmt.Errorf("%w: scalingPolicy.scaleFactor %d: a %s policy needs at least 2", ErrInvalid, p.ScaleFactor, p.Type)
		}
	}
	if r := c.RetentionPolicy; r != nil {
		if r.Type != RetentionLimitedDays && r.Type != RetentionLimitedSizeMB {
			return fmt.Errorf("%w: retentionPolicy.type %q: want %s or %s", ErrInvalid, r.Type, RetentionLimitedDays, RetentionLimitedSizeMB)
		}
		if err := RangeRetentionValue.Check("retentionPolicy.value", r.Value); err != nil {
			return err
		}
	}
	if t := c.TieringPolicy; t != nil {
		if err := RangeTierLag.Check("tieringPolicy.maxLagMillis", t.MaxLagMillis); err != nil {
			return err
		}
		if err := RangeTierBytes.Check("tieringPolicy.segmentBytes", t.SegmentBytes); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(c.Tags))
	for k := range c.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(k) < 1 || len(k) > MaxTagLength {
			return fmt.Errorf("%w: tag key %q: length %d not in 1..%d", ErrInvalid, k, len(k), MaxTagLength)
		}
		if v := c.Tags[k]; len(v) < 1 || len(v) > MaxTagLength {
			return fmt.Errorf("%w: tag %q: value length %d not in 1..%d", ErrInvalid, k, len(v), MaxTagLength)
		}
	}
	return nil
}

// StreamState is the body of PUT .../streams/{stream}/state, as in
// Pravega: {"streamState": "SEALED"} seals the stream.
type StreamState struct {
	State string `json:"streamState"`
}

// StreamInfo describes a stream: its configuration, whether it is sealed,
// its current epoch and when it was created (milliseconds since the Unix
// epoch).
type StreamInfo struct {
	StreamConfig
	Sealed       bool  `json:"sealed"`
	Epoch        int64 `json:"epoch"`
	CreationTime int64 `json:"creationTime"`
}

// KeyRange is a half-open range [Low, High) of the routing-key space [0,1).
type KeyRange struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// SegmentRange is a segment with its key range: Segment is the qualified
// name, Number and Epoch (the epoch that created it) its parts.
type SegmentRange struct {
	Segment string  `json:"segment"`
	Number  int64   `json:"number"`
	Epoch   int64   `json:"epoch"`
	KeyLow  float64 `json:"keyLow"`
	KeyHigh float64 `json:"keyHigh"`
}

// EpochInfo is one epoch of a stream's history: the epoch number, when it
// began (CreationTime, ms since the Unix epoch; it lasts until the next
// epoch's creation) and the segments active in it, ordered by key range.
type EpochInfo struct {
	Epoch        int64          `json:"epoch"`
	CreationTime int64          `json:"creationTime"`
	Segments     []SegmentRange `json:"segments"`
	// Trigger is why the epoch began: TriggerCreate (epoch 0),
	// TriggerManual (POST .../scale, and every scale recorded before
	// triggers were kept) or TriggerAuto (the auto-scaler). Reason, for an
	// automatic scale, names the hot or cold segments with their measured
	// rates against the target.
	Trigger string `json:"trigger,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// EpochInfo.Trigger values.
const (
	TriggerCreate = "create"
	TriggerManual = "manual"
	TriggerAuto   = "auto"
)

// Successor is a segment that follows a sealed one, with the qualified
// names of all the segments it succeeds (a reader reads it only once it has
// read all of them).
type Successor struct {
	Segment      SegmentRange `json:"segment"`
	Predecessors []string     `json:"predecessors"`
}

// ScaleRequest is the body of POST .../streams/{stream}/scale: seal the
// segments numbered SealedSegments (active, contiguous) and replace them
// by segments with NewRanges, which must cover exactly the union of their
// ranges.
type ScaleRequest struct {
	SealedSegments []int64    `json:"sealedSegments"`
	NewRanges      []KeyRange `json:"newRanges"`
}

// TxnInfo describes a transaction. Segments are its shadow segments (one per
// segment of epoch Epoch); LeaseMillis the lease granted by the last create
// or ping; ExpiryTime (ms since the Unix epoch) when an OPEN transaction is
// aborted unless pinged.
type TxnInfo struct {
	ID          string   `json:"id"`
	Scope       string   `json:"scope"`
	Stream      string   `json:"stream"`
	Epoch       int64    `json:"epoch"`
	Segments    []string `json:"segments"`
	LeaseMillis int64    `json:"leaseMillis"`
	ExpiryTime  int64    `json:"expiryTime"`
	Status      string   `json:"status"`
}

// Error is the body of every 4xx/5xx reply. Code is a stable word
// (NOT_FOUND, EXISTS, INVALID, CONFLICT, INTERNAL); Message says what is
// wrong, for people.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }
