package tiering

import (
	"sort"
	"time"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
)

// Defaults of Policy.
const (
	// DefaultChunkBytes and DefaultSegmentBytes: catch-up reads of 8, 16
	// and 64 MiB chunks were measured at 79-93 % of the disk
	// (docs/BENCHMARKS.md), the smaller ones fastest; larger chunks mean
	// fewer files for HDFS's NameNode and fewer input splits, at the cost
	// of more memory while a chunk is written (--tier-chunk-bytes and
	// --tier-segment-bytes raise them).
	DefaultChunkBytes   = 16 << 20
	DefaultSegmentBytes = 8 << 20
	DefaultMaxLag       = 30 * time.Second
	// DefaultPartBytes is Config.PartBytes' default: a read loads about
	// this much of a chunk, as much as one read returns
	// (container.MaxReadSize).
	DefaultPartBytes = container.MaxReadSize
)

// Attributes through which a stream overrides the policy for its
// segments.
const (
	AttrSegmentBytes = protocol.AttrTierSegmentBytes
	AttrMaxLagMillis = protocol.AttrTierMaxLagMillis
)

// Policy says when a segment's data moves to tier 2.
type Policy struct {
	// ChunkBytes bounds a chunk's file, its records' keys and lengths
	// counted (a chunk holds whole blocks, so one block larger than this
	// makes a larger chunk).
	ChunkBytes int64
	// SegmentBytes: tier a segment once this many of its bytes wait.
	SegmentBytes int64
	// MaxLag bounds how long an event waits before it is in tier 2.
	MaxLag time.Duration
	// PressureBytes: when the container's untiered bytes exceed it, tier
	// the largest segments first until they do not. 0: no pressure rule.
	PressureBytes int64
}

// WithDefaults fills the zero fields.
func (p Policy) WithDefaults() Policy {
	if p.ChunkBytes <= 0 {
		p.ChunkBytes = DefaultChunkBytes
	}
	if p.SegmentBytes <= 0 {
		p.SegmentBytes = DefaultSegmentBytes
	}
	if p.MaxLag <= 0 {
		p.MaxLag = DefaultMaxLag
	}
	return p
}

// forSegment applies a segment's overrides.
func (p Policy) forSegment(ts container.TierState) Policy {
	if v, ok := ts.Attrs[AttrSegmentBytes]; ok && v > 0 {
		p.SegmentBytes = v
	}
	if v, ok := ts.Attrs[AttrMaxLagMillis]; ok && v > 0 {
		p.MaxLag = time.Duration(v) * time.Millisecond
	}
	return p
}

// Reason says why a segment is tiered.
type Reason string

const (
	ReasonSealed   Reason = "sealed"
	ReasonSize     Reason = "size"
	ReasonAge      Reason = "age"
	ReasonPressure Reason = "pressure"
	// ReasonFlush: Writer.Flush asked for everything durable.
	ReasonFlush Reason = "flush"
)

// Decision is one segment to tier now.
type Decision struct {
	Segment string
	Reason  Reason
}

// Decide returns the segments to tier now, in the order to tier them:
// the sealed, sized and aged ones by name, then under pressure the
// largest of the rest until the container's untiered bytes would fall
// below PressureBytes. untiered is the container's total.
func Decide(now time.Time, p Policy, states []container.TierState, untiered int64) []Decision {
	p = p.WithDefaults()
	var out []Decision
	var rest []container.TierState
	for _, ts := range states {
		if ts.Transaction || ts.Untiered <= 0 {
			continue
		}
		sp := p.forSegment(ts)
		switch {
		case ts.Sealed:
			out = append(out, Decision{ts.Name, ReasonSealed})
		case ts.Untiered >= sp.SegmentBytes:
			out = append(out, Decision{ts.Name, ReasonSize})
		case !ts.Oldest.IsZero() && now.Sub(ts.Oldest) >= sp.MaxLag/2:
			out = append(out, Decision{ts.Name, ReasonAge})
		default:
			rest = append(rest, ts)
			continue
		}
		untiered -= ts.Untiered
	}
	if p.PressureBytes > 0 && untiered > p.PressureBytes {
		sort.SliceStable(rest, func(i, j int) bool { return rest[i].Untiered > rest[j].Untiered })
		for _, ts := range rest {
			if untiered <= p.PressureBytes {
				break
			}
			out = append(out, Decision{ts.Name, ReasonPressure})
			untiered -= ts.Untiered
		}
	}
	return out
}
