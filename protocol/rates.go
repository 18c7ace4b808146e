package protocol

// The messages of auto-scaling (types 36 and 37): the controller asks a
// node for the append rates of named segments (package node/rates
// measures them).

// MaxRateSegments bounds GetSegmentRates.Segments, so a request and its
// reply stay small (about 100 bytes per segment in the reply).
const MaxRateSegments = 1024

// GetSegmentRates asks for the append rates of up to MaxRateSegments
// segments. Reply: SegmentRates, one entry per segment in the same order.
type GetSegmentRates struct {
	RequestID int64    `msgpack:"id"`
	Segments  []string `msgpack:"s"`
}

// SegmentRates answers GetSegmentRates. WindowMillis are the node's
// averaging windows, shortest first; each entry's Events and Bytes hold
// one average per window.
type SegmentRates struct {
	RequestID    int64         `msgpack:"id"`
	WindowMillis []int64       `msgpack:"w"`
	Rates        []SegmentRate `msgpack:"r"`
}

// SegmentRate is one segment's rates on the node that answered. Missing
// is set (and the rest zero) when that node does not serve the segment
// now: it does not exist, or its container is elsewhere, opening or
// closing. AgeMillis is how long the node has measured it (since its first
// append in this process, or since its rates were first asked for).
type SegmentRate struct {
	Segment   string    `msgpack:"s"`
	Missing   bool      `msgpack:"m,omitempty"`
	AgeMillis int64     `msgpack:"age,omitempty"`
	Events    []float64 `msgpack:"e,omitempty"` // events per second, per window
	Bytes     []float64 `msgpack:"b,omitempty"` // bytes per second, per window
}

func (*GetSegmentRates) Type() Type     { return TypeGetSegmentRates }
func (*SegmentRates) Type() Type        { return TypeSegmentRates }
func (m *GetSegmentRates) ReqID() int64 { return m.RequestID }
func (m *SegmentRates) ReqID() int64    { return m.RequestID }
func (*SegmentRates) reply()            {}

// Validate checks the count (1..MaxRateSegments) and every name.
func (m *GetSegmentRates) Validate() error {
	if len(m.Segments) == 0 || len(m.Segments) > MaxRateSegments {
		return invalid("segment rates: %d segments, want 1..%d", len(m.Segments), MaxRateSegments)
	}
	for _, s := range m.Segments {
		if err := ValidateSegmentName(s); err != nil {
			return err
		}
	}
	return nil
}
