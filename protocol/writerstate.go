package protocol

// GetWriterState asks what a segment holds of a writer: the last event
// number stored for WriterID, as SetupAppend would answer, but without
// binding the writer to the connection and without changing anything. It
// answers for sealed segments too, once everything logged before it is
// durable; a segment that does not exist (never created, or deleted by a
// truncation) is NoSuchSegment. A resuming writer asks it of every segment
// of its stream's history before its first write (see package client,
// "Writers across restarts"). Reply: WriterState.
type GetWriterState struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
	WriterID  string `msgpack:"w"`
}

// WriterState answers GetWriterState. LastEventNumber is NoEventNumber
// when the segment holds nothing of the writer.
type WriterState struct {
	RequestID       int64  `msgpack:"id"`
	Segment         string `msgpack:"s"`
	WriterID        string `msgpack:"w"`
	LastEventNumber int64  `msgpack:"le"`
	Sealed          bool   `msgpack:"sd,omitempty"`
}

func (*GetWriterState) Type() Type { return TypeGetWriterState }
func (*WriterState) Type() Type    { return TypeWriterState }

func (m *GetWriterState) ReqID() int64 { return m.RequestID }
func (m *WriterState) ReqID() int64    { return m.RequestID }

func (*WriterState) reply() {}

// Validate checks the writer id and segment name.
func (m *GetWriterState) Validate() error {
	if err := validateWriterID(m.WriterID); err != nil {
		return err
	}
	return ValidateSegmentName(m.Segment)
}
