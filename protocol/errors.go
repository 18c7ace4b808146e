package protocol

import (
	"errors"
	"strconv"
)

// ErrorCode is the wire form of an error, carried by ErrorReply. The
// numbers are part of the wire format: never renumber, only append.
type ErrorCode uint16

// The error codes. Each has exactly one sentinel error (see Err).
const (
	CodeNone                   ErrorCode = 0  // no error
	CodeNoSuchSegment          ErrorCode = 1  // the segment does not exist
	CodeSegmentExists          ErrorCode = 2  // CreateSegment on an existing segment
	CodeSegmentSealed          ErrorCode = 3  // append or update on a sealed segment
	CodeSegmentNotSealed       ErrorCode = 4  // merge source must be sealed first
	CodeSegmentTruncated       ErrorCode = 5  // read or offset below the segment's start offset
	CodeConditionalCheckFailed ErrorCode = 6  // conditional append: length != ExpectedOffset
	CodeAttributeConflict      ErrorCode = 7  // attribute compare-and-set failed
	CodeInvalidEventNumber     ErrorCode = 8  // event numbers out of order for the writer
	CodeWrongHost              ErrorCode = 9  // the segment's container is not owned by this node
	CodeContainerUnavailable   ErrorCode = 10 // container failed or shutting down: retry later or elsewhere
	CodeMalformedFrame         ErrorCode = 11 // bad frame header; the connection is closed
	CodeFrameTooLarge          ErrorCode = 12 // frame length above MaxFrameSize; the connection is closed
	CodeEventTooLarge          ErrorCode = 13 // an event above MaxEventSize
	CodeMalformedMessage       ErrorCode = 14 // the msgpack header does not decode into the message type
	CodeUnknownCommand         ErrorCode = 15 // frame type unknown to the receiver
	CodeSetupInProgress        ErrorCode = 16 // second SetupAppend for a writer while the first is in flight
	CodeWriterNotSetUp         ErrorCode = 17 // AppendBlock for a writer with no completed SetupAppend on the connection
	CodeInvalidArgument        ErrorCode = 18 // a request field fails validation
	CodeInternal               ErrorCode = 19 // anything else; a bug or an unexpected I/O failure
	CodeNotEventBoundary       ErrorCode = 20 // an offset that must start an event (truncate, checked read) does not
)

// Sentinel errors, one per ErrorCode. Classify with errors.Is; never match
// message text. Errors rebuilt from an ErrorReply (see Error) unwrap to these.
var (
	ErrNoSuchSegment          = errors.New("sluice: no such segment")
	ErrSegmentExists          = errors.New("sluice: segment already exists")
	ErrSegmentSealed          = errors.New("sluice: segment is sealed")
	ErrSegmentNotSealed       = errors.New("sluice: segment is not sealed")
	ErrSegmentTruncated       = errors.New("sluice: segment is truncated at a higher offset")
	ErrConditionalCheckFailed = errors.New("sluice: conditional append failed: segment length differs")
	ErrAttributeConflict      = errors.New("sluice: attribute update conflict")
	ErrInvalidEventNumber     = errors.New("sluice: invalid event number")
	ErrWrongHost              = errors.New("sluice: segment is not owned by this node")
	ErrContainerUnavailable   = errors.New("sluice: container unavailable")
	ErrMalformedFrame         = errors.New("sluice: malformed frame")
	ErrFrameTooLarge          = errors.New("sluice: frame too large")
	ErrEventTooLarge          = errors.New("sluice: event too large")
	ErrMalformedMessage       = errors.New("sluice: malformed message")
	ErrUnknownCommand         = errors.New("sluice: unknown command")
	ErrSetupInProgress        = errors.New("sluice: append setup already in progress for writer")
	ErrWriterNotSetUp         = errors.New("sluice: writer not set up on this connection")
	ErrInvalidArgument        = errors.New("sluice: invalid argument")
	ErrInternal               = errors.New("sluice: internal error")
	ErrNotEventBoundary       = errors.New("sluice: offset is not an event boundary")

	// ErrUnknownType is the name the Decoder's documentation uses for
	// ErrUnknownCommand; both are the same value.
	ErrUnknownType = ErrUnknownCommand
)

// codeTable maps codes to sentinels and names; index = code.
var codeTable = [...]struct {
	err  error
	name string
}{
	CodeNone:                   {nil, "None"},
	CodeNoSuchSegment:          {ErrNoSuchSegment, "NoSuchSegment"},
	CodeSegmentExists:          {ErrSegmentExists, "SegmentExists"},
	CodeSegmentSealed:          {ErrSegmentSealed, "SegmentSealed"},
	CodeSegmentNotSealed:       {ErrSegmentNotSealed, "SegmentNotSealed"},
	CodeSegmentTruncated:       {ErrSegmentTruncated, "SegmentTruncated"},
	CodeConditionalCheckFailed: {ErrConditionalCheckFailed, "ConditionalCheckFailed"},
	CodeAttributeConflict:      {ErrAttributeConflict, "AttributeConflict"},
	CodeInvalidEventNumber:     {ErrInvalidEventNumber, "InvalidEventNumber"},
	CodeWrongHost:              {ErrWrongHost, "WrongHost"},
	CodeContainerUnavailable:   {ErrContainerUnavailable, "ContainerUnavailable"},
	CodeMalformedFrame:         {ErrMalformedFrame, "MalformedFrame"},
	CodeFrameTooLarge:          {ErrFrameTooLarge, "FrameTooLarge"},
	CodeEventTooLarge:          {ErrEventTooLarge, "EventTooLarge"},
	CodeMalformedMessage:       {ErrMalformedMessage, "MalformedMessage"},
	CodeUnknownCommand:         {ErrUnknownCommand, "UnknownCommand"},
	CodeSetupInProgress:        {ErrSetupInProgress, "SetupInProgress"},
	CodeWriterNotSetUp:         {ErrWriterNotSetUp, "WriterNotSetUp"},
	CodeInvalidArgument:        {ErrInvalidArgument, "InvalidArgument"},
	CodeInternal:               {ErrInternal, "Internal"},
	CodeNotEventBoundary:       {ErrNotEventBoundary, "NotEventBoundary"},
}

// String returns the code's name, or "ErrorCode(N)" for a code this
// version does not know.
func (c ErrorCode) String() string {
	if int(c) < len(codeTable) {
		return codeTable[c].name
	}
	return "ErrorCode(" + strconv.Itoa(int(c)) + ")"
}

// Err returns the code's sentinel error: nil for None, ErrInternal for a
// code this version does not know (a newer peer's).
func (c ErrorCode) Err() error {
	if int(c) < len(codeTable) {
		return codeTable[c].err
	}
	return ErrInternal
}

// CodeOf classifies err: CodeNone for nil, the code of an *Error in the
// chain, else the first sentinel that errors.Is matches, else CodeInternal.
func CodeOf(err error) ErrorCode {
	if err == nil {
		return CodeNone
	}
	var pe *Error
	if errors.As(err, &pe) {
		if pe.Code == CodeNone {
			return CodeInternal
		}
		return pe.Code
	}
	for c := ErrorCode(1); int(c) < len(codeTable); c++ {
		if errors.Is(err, codeTable[c].err) {
			return c
		}
	}
	return CodeInternal
}

// IsRetriable reports whether the request may succeed if sent again later
// or to the node that now owns the segment: WrongHost and
// ContainerUnavailable. The caller refreshes its routing before retrying.
func IsRetriable(err error) bool {
	return errors.Is(err, ErrWrongHost) || errors.Is(err, ErrContainerUnavailable)
}

// Error is an error with a wire code, the segment and writer it concerns
// (either may be empty) and a human-readable message. It unwraps to the
// code's sentinel, so errors.Is(err, ErrNoSuchSegment) works on errors the
// client rebuilds from an ErrorReply.
type Error struct {
	Code     ErrorCode
	Segment  string
	WriterID string
	Message  string // full text shown by Error(); empty = derived from Code
}

// Error returns Message when set, else the sentinel's text with the segment.
func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	s := "sluice: error code " + e.Code.String()
	if err := e.Code.Err(); err != nil {
		s = err.Error()
	}
	if e.Segment != "" {
		s += ": " + e.Segment
	}
	return s
}

// Unwrap returns the code's sentinel.
func (e *Error) Unwrap() error { return e.Code.Err() }

// ErrorFromReply turns an ErrorReply into an *Error. A reply with code None
// (a peer's bug) becomes Internal so that it is never mistaken for success.
func ErrorFromReply(r *ErrorReply) error {
	c := r.Code
	if c == CodeNone {
		c = CodeInternal
	}
	return &Error{Code: c, Segment: r.Segment, WriterID: r.WriterID, Message: r.Message}
}

// NewErrorReply builds the reply for a failed request: the code from
// CodeOf(err), the message from err.Error(), and the segment and writer id
// of an *Error in err's chain (the caller may set them otherwise). err must
// not be nil.
func NewErrorReply(reqID int64, err error) *ErrorReply {
	r := &ErrorReply{RequestID: reqID, Code: CodeOf(err)}
	if err != nil {
		r.Message = err.Error()
	}
	var pe *Error
	if errors.As(err, &pe) {
		r.Segment, r.WriterID = pe.Segment, pe.WriterID
	}
	return r
}
