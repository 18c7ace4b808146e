package protocol

import (
	"fmt"
	"math"
	"strconv"
)

// WireVersion is the protocol version this package speaks. Peers exchange
// Hello first and use the highest version both support.
const WireVersion = 1

// Sentinel values carried in int64 fields.
const (
	// NoEventNumber is AppendSetup.LastEventNumber for a writer that never
	// appended to the segment.
	NoEventNumber int64 = math.MinInt64
	// MaxEventNumber is the highest event number a writer may give a
	// block (AppendBlock.LastEventNumber, the number of its last event).
	// Block numbers run from 0 to MaxEventNumber, so a writer's next number
	// (last+1) never overflows, and a writer whose stored number is
	// MaxEventNumber gets its next block refused (InvalidEventNumber)
	// rather than taken for a resend: the node acknowledges a block
	// numbered at or below the stored one without storing it.
	MaxEventNumber int64 = math.MaxInt64 - 1
	// NoExpectedOffset makes an AppendBlock unconditional.
	NoExpectedOffset int64 = -1
	// NoValue is an absent attribute: AttributeUpdate.Expected for
	// ReplaceIfEquals when the attribute must not exist yet. It is never a
	// stored value.
	NoValue int64 = math.MinInt64
)

// Limits checked by Validate.
const (
	// MaxWriterIDLength is the longest writer id, in bytes.
	MaxWriterIDLength = 256
	// MaxAttributeKeyLength is the longest attribute key, in bytes.
	MaxAttributeKeyLength = 256
)

// Type identifies a message on the wire (the frame's type field). The
// numbers are part of the wire format: never renumber, only append.
type Type uint16

// Message types. Requests have even numbers from 10 up, each followed by
// its reply.
const (
	TypeHello             Type = 1 // both directions
	TypeErrorReply        Type = 2
	TypeCreateSegment     Type = 10
	TypeSegmentCreated    Type = 11
	TypeGetSegmentInfo    Type = 12
	TypeSegmentInfo       Type = 13
	TypeSetupAppend       Type = 14
	TypeAppendSetup       Type = 15
	TypeAppendBlock       Type = 16
	TypeDataAppended      Type = 17
	TypeReadSegment       Type = 18
	TypeSegmentRead       Type = 19
	TypeSealSegment       Type = 20
	TypeSegmentSealed     Type = 21
	TypeTruncateSegment   Type = 22
	TypeSegmentTruncated  Type = 23
	TypeDeleteSegment     Type = 24
	TypeSegmentDeleted    Type = 25
	TypeMergeSegments     Type = 26
	TypeSegmentsMerged    Type = 27
	TypeGetAttributes     Type = 28
	TypeAttributes        Type = 29
	TypeUpdateAttributes  Type = 30
	TypeAttributesUpdated Type = 31
	TypeGetTierStats      Type = 32
	TypeTierStats         Type = 33
	TypeCheckBoundary     Type = 34
	TypeBoundaryChecked   Type = 35
	TypeGetSegmentRates   Type = 36
	TypeSegmentRates      Type = 37
	TypeGetWriterState    Type = 38 // see writerstate.go
	TypeWriterState       Type = 39
)

var typeNames = map[Type]string{
	TypeHello:             "Hello",
	TypeErrorReply:        "ErrorReply",
	TypeCreateSegment:     "CreateSegment",
	TypeSegmentCreated:    "SegmentCreated",
	TypeGetSegmentInfo:    "GetSegmentInfo",
	TypeSegmentInfo:       "SegmentInfo",
	TypeSetupAppend:       "SetupAppend",
	TypeAppendSetup:       "AppendSetup",
	TypeAppendBlock:       "AppendBlock",
	TypeDataAppended:      "DataAppended",
	TypeReadSegment:       "ReadSegment",
	TypeSegmentRead:       "SegmentRead",
	TypeSealSegment:       "SealSegment",
	TypeSegmentSealed:     "SegmentSealed",
	TypeTruncateSegment:   "TruncateSegment",
	TypeSegmentTruncated:  "SegmentTruncated",
	TypeDeleteSegment:     "DeleteSegment",
	TypeSegmentDeleted:    "SegmentDeleted",
	TypeMergeSegments:     "MergeSegments",
	TypeSegmentsMerged:    "SegmentsMerged",
	TypeGetAttributes:     "GetAttributes",
	TypeAttributes:        "Attributes",
	TypeUpdateAttributes:  "UpdateAttributes",
	TypeAttributesUpdated: "AttributesUpdated",
	TypeGetTierStats:      "GetTierStats",
	TypeTierStats:         "TierStats",
	TypeCheckBoundary:     "CheckBoundary",
	TypeBoundaryChecked:   "BoundaryChecked",
	TypeGetSegmentRates:   "GetSegmentRates",
	TypeSegmentRates:      "SegmentRates",
	TypeGetWriterState:    "GetWriterState",
	TypeWriterState:       "WriterState",
}

// String returns the message name, or "Type(N)" for an unknown type.
func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// newMessage returns a zero message of type t, or nil if t is unknown.
func newMessage(t Type) Message {
	switch t {
	case TypeHello:
		return new(Hello)
	case TypeErrorReply:
		return new(ErrorReply)
	case TypeCreateSegment:
		return new(CreateSegment)
	case TypeSegmentCreated:
		return new(SegmentCreated)
	case TypeGetSegmentInfo:
		return new(GetSegmentInfo)
	case TypeSegmentInfo:
		return new(SegmentInfo)
	case TypeSetupAppend:
		return new(SetupAppend)
	case TypeAppendSetup:
		return new(AppendSetup)
	case TypeAppendBlock:
		return new(AppendBlock)
	case TypeDataAppended:
		return new(DataAppended)
	case TypeReadSegment:
		return new(ReadSegment)
	case TypeSegmentRead:
		return new(SegmentRead)
	case TypeSealSegment:
		return new(SealSegment)
	case TypeSegmentSealed:
		return new(SegmentSealed)
	case TypeTruncateSegment:
		return new(TruncateSegment)
	case TypeSegmentTruncated:
		return new(SegmentTruncated)
	case TypeDeleteSegment:
		return new(DeleteSegment)
	case TypeSegmentDeleted:
		return new(SegmentDeleted)
	case TypeMergeSegments:
		return new(MergeSegments)
	case TypeSegmentsMerged:
		return new(SegmentsMerged)
	case TypeGetAttributes:
		return new(GetAttributes)
	case TypeAttributes:
		return new(Attributes)
	case TypeUpdateAttributes:
		return new(UpdateAttributes)
	case TypeGetTierStats:
		return new(GetTierStats)
	case TypeTierStats:
		return new(TierStats)
	case TypeAttributesUpdated:
		return new(AttributesUpdated)
	case TypeCheckBoundary:
		return new(CheckBoundary)
	case TypeBoundaryChecked:
		return new(BoundaryChecked)
	case TypeGetSegmentRates:
		return new(GetSegmentRates)
	case TypeSegmentRates:
		return new(SegmentRates)
	case TypeGetWriterState:
		return new(GetWriterState)
	case TypeWriterState:
		return new(WriterState)
	}
	return nil
}

// Message is any command or reply. Only pointers to the structs of this
// file implement it.
type Message interface {
	Type() Type
}

// Request is a command sent by the client. Validate checks what can be
// checked without state; its error wraps ErrInvalidArgument (or
// ErrEventTooLarge). The Decoder does not call it: the server does.
type Request interface {
	Message
	ReqID() int64
	Validate() error
}

// Reply is sent by the node in answer to the Request with the same
// request id. Hello is both a Request and a Reply.
type Reply interface {
	Message
	ReqID() int64
	reply()
}

// Hello opens a connection in both directions: each side sends the range
// of versions it speaks.
type Hello struct {
	RequestID   int64 `msgpack:"id"`
	HighVersion int32 `msgpack:"hi"`
	LowVersion  int32 `msgpack:"lo"`
}

// CreateSegment creates an empty segment. Reply: SegmentCreated.
type CreateSegment struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
	// Attributes are set on the new segment in the same record (at most
	// MaxCreateAttributes), e.g. the stream's tiering policy.
	Attributes map[string]int64 `msgpack:"a,omitempty"`
}

// MaxCreateAttributes bounds CreateSegment.Attributes.
const MaxCreateAttributes = 64

// Attributes through which a stream overrides the nodes' tiering policy
// for its segments (set by the controller at creation and on update).
const (
	AttrTierSegmentBytes = "_tier.segmentBytes" // tier once this many bytes wait
	AttrTierMaxLagMillis = "_tier.maxLagMillis" // bound on an event's wait for tier 2
)

// SegmentCreated answers CreateSegment.
type SegmentCreated struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
}

// GetSegmentInfo asks for a segment's state. Reply: SegmentInfo.
type GetSegmentInfo struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
}

// SegmentInfo answers GetSegmentInfo. Readable bytes are
// [StartOffset, Length).
type SegmentInfo struct {
	RequestID            int64  `msgpack:"id"`
	Segment              string `msgpack:"s"`
	StartOffset          int64  `msgpack:"so"`
	Length               int64  `msgpack:"l"`
	Sealed               bool   `msgpack:"sd"`
	LastModifiedUnixNano int64  `msgpack:"lm"`
	// Tier 2: bytes kept below TieredOffset are in tier 2, chunks and
	// the container's recovery record both (they survive the loss of the
	// node's disk); UntieredBytes
	// durable bytes from it are not yet, the oldest logged at
	// OldestUntieredUnixNano (0 if none); Tier2Error is the container's
	// latest tier-2 failure while tiering is stalled.
	TieredOffset           int64  `msgpack:"to,omitempty"`
	UntieredBytes          int64  `msgpack:"ub,omitempty"`
	OldestUntieredUnixNano int64  `msgpack:"ou,omitempty"`
	Tier2Error             string `msgpack:"te,omitempty"`
}

// GetTierStats asks a node for its storage writers' counters. Reply:
// TierStats.
type GetTierStats struct {
	RequestID int64 `msgpack:"id"`
}

// TierStats answers GetTierStats: one entry per container the node hosts
// with tier 2 (none if the node has no tier 2).
type TierStats struct {
	RequestID  int64           `msgpack:"id"`
	Containers []ContainerTier `msgpack:"c"`
}

// ContainerTier is one container's tiering counters.
type ContainerTier struct {
	Container   int32  `msgpack:"id"`
	TieredBytes int64  `msgpack:"tb"` // put in tier 2 since the node started
	Chunks      int64  `msgpack:"ch"` // chunks written since the node started
	Untiered    int64  `msgpack:"ub"` // bytes logged, not yet in tier 2
	LagNanos    int64  `msgpack:"lag"`
	Errors      int64  `msgpack:"err"`
	LastError   string `msgpack:"le,omitempty"`
	Stalled     bool   `msgpack:"st,omitempty"`
}

// SetupAppend prepares a writer to append to a segment on this connection.
// Reply: AppendSetup.
type SetupAppend struct {
	RequestID int64  `msgpack:"id"`
	WriterID  string `msgpack:"w"`
	Segment   string `msgpack:"s"`
}

// AppendSetup answers SetupAppend. LastEventNumber is the last event number
// the segment holds for the writer, NoEventNumber if none: the writer
// resends only what comes after it.
type AppendSetup struct {
	RequestID       int64  `msgpack:"id"`
	WriterID        string `msgpack:"w"`
	Segment         string `msgpack:"s"`
	LastEventNumber int64  `msgpack:"le"`
}

// AppendBlock appends a block of EventCount framed events (see
// AppendEvent) to the segment of the writer's SetupAppend. LastEventNumber
// is the writer's event number of the last event in the block. With
// ExpectedOffset != NoExpectedOffset the append happens only if the
// segment's length equals ExpectedOffset. Reply: DataAppended.
//
// Data travels as the frame's raw payload, not in msgpack. The Encoder
// writes it without copying; the Decoder allocates it afresh per frame (the
// receiver may keep it) and leaves it nil when empty.
type AppendBlock struct {
	RequestID       int64  `msgpack:"id"`
	WriterID        string `msgpack:"w"`
	LastEventNumber int64  `msgpack:"le"`
	EventCount      int32  `msgpack:"n"`
	ExpectedOffset  int64  `msgpack:"eo"`
	Data            []byte `msgpack:"-"`
}

// DataAppended answers AppendBlock: events up to EventNumber are durable;
// CurrentOffset is the segment's length after the append.
type DataAppended struct {
	RequestID           int64  `msgpack:"id"`
	WriterID            string `msgpack:"w"`
	EventNumber         int64  `msgpack:"e"`
	PreviousEventNumber int64  `msgpack:"pe"`
	CurrentOffset       int64  `msgpack:"co"`
}

// ReadSegment reads up to MaxBytes from Offset. If no byte is available
// there yet, the node waits up to WaitMillis for one (long poll). The node
// may return fewer bytes than asked, and caps MaxBytes so that the reply
// fits a frame. With AtEvent set, Offset must be where an event starts:
// the node refuses any other with NotEventBoundary (a reader sets it
// whenever it holds no part of an event, so that a bad position is one
// clear error rather than garbage parsed as events). Reply: SegmentRead.
type ReadSegment struct {
	RequestID  int64  `msgpack:"id"`
	Segment    string `msgpack:"s"`
	Offset     int64  `msgpack:"o"`
	MaxBytes   int32  `msgpack:"m"`
	WaitMillis int32  `msgpack:"wt"`
	AtEvent    bool   `msgpack:"ae"`
}

// SegmentRead answers ReadSegment with the bytes from Offset. AtTail: the
// data ends at the segment's current length. EndOfSegment: the segment is
// sealed and the data ends at its final length.
//
// Data travels as the frame's raw payload, not in msgpack. The node sets it
// to slices of cached blocks, written with one writev and never copied; the
// Decoder returns it as one freshly allocated slice (nil when empty).
type SegmentRead struct {
	RequestID    int64    `msgpack:"id"`
	Segment      string   `msgpack:"s"`
	Offset       int64    `msgpack:"o"`
	AtTail       bool     `msgpack:"t"`
	EndOfSegment bool     `msgpack:"eos"`
	Data         [][]byte `msgpack:"-"`
}

// SealSegment makes a segment read-only. Reply: SegmentSealed.
type SealSegment struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
}

// SegmentSealed answers SealSegment with the final length.
type SegmentSealed struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
	Length    int64  `msgpack:"l"`
}

// TruncateSegment discards the bytes before Offset, which must be an event
// boundary (see CheckBoundary): the node refuses any other offset above
// the segment's start with NotEventBoundary and logs nothing. Reply:
// SegmentTruncated.
type TruncateSegment struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
	Offset    int64  `msgpack:"o"`
}

// SegmentTruncated answers TruncateSegment with the new start offset.
type SegmentTruncated struct {
	RequestID   int64  `msgpack:"id"`
	Segment     string `msgpack:"s"`
	StartOffset int64  `msgpack:"so"`
}

// CheckBoundary asks whether Offset is an event boundary of the segment:
// where an event starts, or its current length. It changes nothing; the
// controller asks it of every offset of a cut before recording a
// truncation. Reply: BoundaryChecked, or NotEventBoundary naming the
// nearest boundaries.
type CheckBoundary struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
	Offset    int64  `msgpack:"o"`
}

// BoundaryChecked answers CheckBoundary: Offset is an event boundary.
type BoundaryChecked struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
	Offset    int64  `msgpack:"o"`
}

// DeleteSegment deletes a segment. Reply: SegmentDeleted.
type DeleteSegment struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
}

// SegmentDeleted answers DeleteSegment.
type SegmentDeleted struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
}

// MergeSegments appends the sealed Source (a transaction segment) to
// Target and deletes Source. Reply: SegmentsMerged.
type MergeSegments struct {
	RequestID int64  `msgpack:"id"`
	Target    string `msgpack:"t"`
	Source    string `msgpack:"src"`
}

// SegmentsMerged answers MergeSegments with Target's new length.
type SegmentsMerged struct {
	RequestID    int64  `msgpack:"id"`
	Target       string `msgpack:"t"`
	Source       string `msgpack:"src"`
	TargetLength int64  `msgpack:"l"`
}

// GetAttributes reads attributes of a segment. Keys are 1..256 bytes;
// UUID keys use the canonical 36-character text form
// (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, lower case). Reply: Attributes.
type GetAttributes struct {
	RequestID int64    `msgpack:"id"`
	Segment   string   `msgpack:"s"`
	Keys      []string `msgpack:"k"`
}

// Attributes answers GetAttributes. Absent keys are absent from Values.
type Attributes struct {
	RequestID int64            `msgpack:"id"`
	Segment   string           `msgpack:"s"`
	Values    map[string]int64 `msgpack:"v"`
}

// UpdateKind says how an AttributeUpdate applies.
type UpdateKind uint8

// Update kinds; the numbers are part of the wire format.
const (
	// Replace sets the value.
	Replace UpdateKind = 1
	// ReplaceIfEquals sets the value if the current one equals Expected
	// (NoValue: if the attribute is absent); AttributeConflict otherwise.
	ReplaceIfEquals UpdateKind = 2
	// ReplaceIfGreater sets the value if it is greater than the current one
	// (an absent attribute counts as less); AttributeConflict otherwise.
	ReplaceIfGreater UpdateKind = 3
	// Remove deletes the attribute; Value is ignored.
	Remove UpdateKind = 4
)

// String returns the kind's name.
func (k UpdateKind) String() string {
	switch k {
	case Replace:
		return "Replace"
	case ReplaceIfEquals:
		return "ReplaceIfEquals"
	case ReplaceIfGreater:
		return "ReplaceIfGreater"
	case Remove:
		return "Remove"
	}
	return "UpdateKind(" + strconv.Itoa(int(k)) + ")"
}

// AttributeUpdate is one change in UpdateAttributes. Key follows the rules
// of GetAttributes.Keys.
type AttributeUpdate struct {
	Key      string     `msgpack:"k"`
	Kind     UpdateKind `msgpack:"t"`
	Value    int64      `msgpack:"v"`
	Expected int64      `msgpack:"e"`
}

// UpdateAttributes applies Updates atomically: all or none. Reply:
// AttributesUpdated.
type UpdateAttributes struct {
	RequestID int64             `msgpack:"id"`
	Segment   string            `msgpack:"s"`
	Updates   []AttributeUpdate `msgpack:"u"`
}

// AttributesUpdated answers UpdateAttributes.
type AttributesUpdated struct {
	RequestID int64  `msgpack:"id"`
	Segment   string `msgpack:"s"`
}

// ErrorReply answers any request that failed. Turn it into an error with
// ErrorFromReply; build it with NewErrorReply. RequestID is -1 when the
// failed request's id could not be read.
type ErrorReply struct {
	RequestID int64     `msgpack:"id"`
	Code      ErrorCode `msgpack:"c"`
	Segment   string    `msgpack:"s"`
	WriterID  string    `msgpack:"w"`
	Message   string    `msgpack:"m"`
}

func (*Hello) Type() Type             { return TypeHello }
func (*ErrorReply) Type() Type        { return TypeErrorReply }
func (*CreateSegment) Type() Type     { return TypeCreateSegment }
func (*SegmentCreated) Type() Type    { return TypeSegmentCreated }
func (*GetSegmentInfo) Type() Type    { return TypeGetSegmentInfo }
func (*SegmentInfo) Type() Type       { return TypeSegmentInfo }
func (*SetupAppend) Type() Type       { return TypeSetupAppend }
func (*AppendSetup) Type() Type       { return TypeAppendSetup }
func (*AppendBlock) Type() Type       { return TypeAppendBlock }
func (*DataAppended) Type() Type      { return TypeDataAppended }
func (*ReadSegment) Type() Type       { return TypeReadSegment }
func (*SegmentRead) Type() Type       { return TypeSegmentRead }
func (*SealSegment) Type() Type       { return TypeSealSegment }
func (*SegmentSealed) Type() Type     { return TypeSegmentSealed }
func (*TruncateSegment) Type() Type   { return TypeTruncateSegment }
func (*SegmentTruncated) Type() Type  { return TypeSegmentTruncated }
func (*DeleteSegment) Type() Type     { return TypeDeleteSegment }
func (*SegmentDeleted) Type() Type    { return TypeSegmentDeleted }
func (*MergeSegments) Type() Type     { return TypeMergeSegments }
func (*SegmentsMerged) Type() Type    { return TypeSegmentsMerged }
func (*GetAttributes) Type() Type     { return TypeGetAttributes }
func (*Attributes) Type() Type        { return TypeAttributes }
func (*UpdateAttributes) Type() Type  { return TypeUpdateAttributes }
func (*AttributesUpdated) Type() Type { return TypeAttributesUpdated }
func (*GetTierStats) Type() Type      { return TypeGetTierStats }
func (*TierStats) Type() Type         { return TypeTierStats }
func (*CheckBoundary) Type() Type     { return TypeCheckBoundary }
func (*BoundaryChecked) Type() Type   { return TypeBoundaryChecked }

func (m *Hello) ReqID() int64             { return m.RequestID }
func (m *ErrorReply) ReqID() int64        { return m.RequestID }
func (m *CreateSegment) ReqID() int64     { return m.RequestID }
func (m *SegmentCreated) ReqID() int64    { return m.RequestID }
func (m *GetSegmentInfo) ReqID() int64    { return m.RequestID }
func (m *SegmentInfo) ReqID() int64       { return m.RequestID }
func (m *SetupAppend) ReqID() int64       { return m.RequestID }
func (m *AppendSetup) ReqID() int64       { return m.RequestID }
func (m *AppendBlock) ReqID() int64       { return m.RequestID }
func (m *DataAppended) ReqID() int64      { return m.RequestID }
func (m *ReadSegment) ReqID() int64       { return m.RequestID }
func (m *SegmentRead) ReqID() int64       { return m.RequestID }
func (m *SealSegment) ReqID() int64       { return m.RequestID }
func (m *SegmentSealed) ReqID() int64     { return m.RequestID }
func (m *TruncateSegment) ReqID() int64   { return m.RequestID }
func (m *SegmentTruncated) ReqID() int64  { return m.RequestID }
func (m *DeleteSegment) ReqID() int64     { return m.RequestID }
func (m *SegmentDeleted) ReqID() int64    { return m.RequestID }
func (m *MergeSegments) ReqID() int64     { return m.RequestID }
func (m *SegmentsMerged) ReqID() int64    { return m.RequestID }
func (m *GetAttributes) ReqID() int64     { return m.RequestID }
func (m *Attributes) ReqID() int64        { return m.RequestID }
func (m *UpdateAttributes) ReqID() int64  { return m.RequestID }
func (m *AttributesUpdated) ReqID() int64 { return m.RequestID }
func (m *GetTierStats) ReqID() int64      { return m.RequestID }
func (m *TierStats) ReqID() int64         { return m.RequestID }
func (m *CheckBoundary) ReqID() int64     { return m.RequestID }
func (m *BoundaryChecked) ReqID() int64   { return m.RequestID }

func (*Hello) reply()             {}
func (*ErrorReply) reply()        {}
func (*SegmentCreated) reply()    {}
func (*SegmentInfo) reply()       {}
func (*AppendSetup) reply()       {}
func (*DataAppended) reply()      {}
func (*SegmentRead) reply()       {}
func (*SegmentSealed) reply()     {}
func (*SegmentTruncated) reply()  {}
func (*SegmentDeleted) reply()    {}
func (*SegmentsMerged) reply()    {}
func (*Attributes) reply()        {}
func (*AttributesUpdated) reply() {}
func (*TierStats) reply()         {}
func (*BoundaryChecked) reply()   {}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

func validateWriterID(w string) error {
	if len(w) == 0 || len(w) > MaxWriterIDLength {
		return invalid("writer id length %d not in 1..%d", len(w), MaxWriterIDLength)
	}
	return nil
}

func validateKey(k string) error {
	if len(k) == 0 || len(k) > MaxAttributeKeyLength {
		return invalid("attribute key length %d not in 1..%d", len(k), MaxAttributeKeyLength)
	}
	return nil
}

func validateOffset(what string, o int64) error {
	if o < 0 {
		return invalid("%s %d is negative", what, o)
	}
	return nil
}

// Validate checks the version range.
func (m *Hello) Validate() error {
	if m.LowVersion < 1 || m.LowVersion > m.HighVersion {
		return invalid("hello: version range [%d, %d]", m.LowVersion, m.HighVersion)
	}
	return nil
}

// Validate checks the segment name.
func (m *CreateSegment) Validate() error {
	if len(m.Attributes) > MaxCreateAttributes {
		return fmt.Errorf("%w: %d attributes on create, at most %d", ErrInvalidArgument, len(m.Attributes), MaxCreateAttributes)
	}
	return ValidateSegmentName(m.Segment)
}

// Validate checks the segment name.
func (m *GetSegmentInfo) Validate() error { return ValidateSegmentName(m.Segment) }

// Validate accepts every GetTierStats.
func (m *GetTierStats) Validate() error { return nil }

// Validate checks the writer id and segment name.
func (m *SetupAppend) Validate() error {
	if err := validateWriterID(m.WriterID); err != nil {
		return err
	}
	return ValidateSegmentName(m.Segment)
}

// Validate checks the writer id, the numbers, and that Data is a whole
// number of well-formed events (CheckBlock) matching EventCount.
func (m *AppendBlock) Validate() error {
	if err := validateWriterID(m.WriterID); err != nil {
		return err
	}
	if m.EventCount < 1 {
		return invalid("append: event count %d < 1", m.EventCount)
	}
	if m.ExpectedOffset < 0 && m.ExpectedOffset != NoExpectedOffset {
		return invalid("append: expected offset %d", m.ExpectedOffset)
	}
	n, err := CheckBlock(m.Data)
	if err != nil {
		return err
	}
	if n != int(m.EventCount) {
		return invalid("append: block holds %d events, event count says %d", n, m.EventCount)
	}
	return CheckEventNumbers(m.LastEventNumber, m.EventCount)
}

// Validate checks the segment name, offset, byte count and wait.
func (m *ReadSegment) Validate() error {
	if err := ValidateSegmentName(m.Segment); err != nil {
		return err
	}
	if err := validateOffset("read offset", m.Offset); err != nil {
		return err
	}
	if m.MaxBytes <= 0 {
		return invalid("read: max bytes %d <= 0", m.MaxBytes)
	}
	if m.WaitMillis < 0 {
		return invalid("read: wait %d ms is negative", m.WaitMillis)
	}
	return nil
}

// Validate checks the segment name.
func (m *SealSegment) Validate() error { return ValidateSegmentName(m.Segment) }

// Validate checks the segment name and offset.
func (m *TruncateSegment) Validate() error {
	if err := ValidateSegmentName(m.Segment); err != nil {
		return err
	}
	return validateOffset("truncate offset", m.Offset)
}

// Validate checks the segment name and offset.
func (m *CheckBoundary) Validate() error {
	if err := ValidateSegmentName(m.Segment); err != nil {
		return err
	}
	return validateOffset("boundary offset", m.Offset)
}

// Validate checks the segment name.
func (m *DeleteSegment) Validate() error { return ValidateSegmentName(m.Segment) }

// CheckEventNumbers checks a block's numbers: count >= 1 events, the
// last numbered within 0..MaxEventNumber. (The node keeps and compares
// only a block's last number; the Go client numbers events consecutively
// from 0, so its blocks' first numbers are never negative either.) The
// error wraps both ErrInvalidEventNumber (its wire code) and
// ErrInvalidArgument.
func CheckEventNumbers(last int64, count int32) error {
	if count < 1 {
		return fmt.Errorf("%w: %w: a block of %d events", ErrInvalidEventNumber, ErrInvalidArgument, count)
	}
	if last < 0 || last > MaxEventNumber {
		return fmt.Errorf("%w: %w: block numbered %d, outside 0..%d",
			ErrInvalidEventNumber, ErrInvalidArgument, last, MaxEventNumber)
	}
	return nil
}

// Validate checks both names and that they differ.
func (m *MergeSegments) Validate() error {
	if err := ValidateSegmentName(m.Target); err != nil {
		return err
	}
	if err := ValidateSegmentName(m.Source); err != nil {
		return err
	}
	if m.Target == m.Source {
		return invalid("merge: source and target are both %q", m.Target)
	}
	return nil
}

// Validate checks the segment name and the keys (at least one).
func (m *GetAttributes) Validate() error {
	if err := ValidateSegmentName(m.Segment); err != nil {
		return err
	}
	if len(m.Keys) == 0 {
		return invalid("get attributes: no keys")
	}
	for _, k := range m.Keys {
		if err := validateKey(k); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the segment name and each update (at least one): key,
// kind, and that no value stored is NoValue.
func (m *UpdateAttributes) Validate() error {
	if err := ValidateSegmentName(m.Segment); err != nil {
		return err
	}
	if len(m.Updates) == 0 {
		return invalid("update attributes: no updates")
	}
	for _, u := range m.Updates {
		if err := validateKey(u.Key); err != nil {
			return err
		}
		switch u.Kind {
		case Replace, ReplaceIfEquals, ReplaceIfGreater:
			if u.Value == NoValue {
				return invalid("update attribute %q: value NoValue is reserved", u.Key)
			}
		case Remove:
		default:
			return invalid("update attribute %q: unknown kind %d", u.Key, u.Kind)
		}
	}
	return nil
}
