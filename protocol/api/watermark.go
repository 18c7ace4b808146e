package api

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// RangeWriterTime bounds WriterTime.Time (ms since the Unix epoch).
var RangeWriterTime = Range{"WriterTime", "time", OfValue, 0, math.MaxInt64}

// WriterTime is the body of POST
// /v1/scopes/{scope}/streams/{stream}/writers/{writer}/time: the writer
// noted event time Time (ms since the Unix epoch) with every event it
// wrote before at or before Position (the offset just after its last
// acknowledged event, per segment it wrote to). With Txn set instead of
// Position, the time is a committed transaction's: the controller takes
// the position from the transaction's parent segments.
type WriterTime struct {
	Time     int64     `json:"time"`
	Position StreamCut `json:"position,omitempty"`
	Txn      string    `json:"txn,omitempty"`
}

// Validate checks the time's range, the position (as StreamCut.Validate)
// and the transaction id, and that not both a position and a transaction
// are given. The error wraps ErrInvalid.
func (w *WriterTime) Validate() error {
	if err := RangeWriterTime.Check("time", w.Time); err != nil {
		return err
	}
	if w.Txn != "" {
		if len(w.Position) > 0 {
			return fmt.Errorf("%w: writer time: give a position or a transaction, not both", ErrInvalid)
		}
		if err := ValidateTxnID(w.Txn); err != nil {
			return err
		}
	}
	return w.Position.Validate()
}

// Watermark is one of a stream's watermarks: when the active writers last
// noted event times, the least was LowerTime and the greatest UpperTime
// (ms since the Unix epoch), and every one of them had written only
// before Cut (one epoch's segments; Segments gives their key ranges). Seq
// numbers a stream's watermarks from 1, in order; each one's times and cut
// are at or after its predecessor's.
type Watermark struct {
	Seq       int64          `json:"seq"`
	LowerTime int64          `json:"lowerTime"`
	UpperTime int64          `json:"upperTime"`
	Cut       StreamCut      `json:"cut"`
	Segments  []SegmentRange `json:"segments"`
}

// WatermarkList is the reply of GET .../streams/{stream}/watermarks: the
// stream's watermarks with Seq greater than the query's "after", oldest
// first.
type WatermarkList struct {
	Watermarks []Watermark `json:"watermarks"`
}

// MaxWriterIDLength bounds a writer id in the writers' routes (bytes):
// the client's ids are at most 200.
const MaxWriterIDLength = 256

// ValidateWriterID checks a writer id of the writers' routes: 1 to
// MaxWriterIDLength bytes of UTF-8, not "." or ".." (the id is one path
// segment of the routes). The error wraps ErrInvalid.
func ValidateWriterID(id string) error {
	if id == "" || len(id) > MaxWriterIDLength {
		return fmt.Errorf("%w: writer id of %d bytes: want 1..%d", ErrInvalid, len(id), MaxWriterIDLength)
	}
	if !utf8.ValidString(id) {
		return fmt.Errorf("%w: writer id %q: not UTF-8", ErrInvalid, id)
	}
	if id == "." || id == ".." {
		return fmt.Errorf("%w: writer id %q: a path segment of its own", ErrInvalid, id)
	}
	return nil
}
