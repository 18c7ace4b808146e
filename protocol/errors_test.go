package protocol_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

func TestErrorCodes(t *testing.T) {
	seen := map[error]protocol.ErrorCode{}
	for c := protocol.CodeNoSuchSegment; c <= protocol.CodeNotEventBoundary; c++ {
		err := c.Err()
		if err == nil || !strings.HasPrefix(err.Error(), "sluice: ") {
			t.Errorf("%v: sentinel %v", c, err)
		}
		if prev, dup := seen[err]; dup {
			t.Errorf("%v and %v share a sentinel", c, prev)
		}
		seen[err] = c
		if strings.HasPrefix(c.String(), "ErrorCode(") {
			t.Errorf("%d has no name", c)
		}
		// A wrapped sentinel classifies to its code.
		if got := protocol.CodeOf(fmt.Errorf("ctx: %w", err)); got != c {
			t.Errorf("CodeOf(wrapped %v) = %v", c, got)
		}
		// A reply round-trips into an error that matches the sentinel.
		rerr := protocol.ErrorFromReply(protocol.NewErrorReply(5, fmt.Errorf("detail: %w", err)))
		if !errors.Is(rerr, err) || protocol.CodeOf(rerr) != c {
			t.Errorf("%v: rebuilt error %v does not match", c, rerr)
		}
	}
	if protocol.CodeOf(nil) != protocol.CodeNone || protocol.CodeNone.Err() != nil {
		t.Error("CodeNone")
	}
	if protocol.CodeOf(errors.New("other")) != protocol.CodeInternal {
		t.Error("unknown errors must be Internal")
	}
	if protocol.ErrorCode(999).String() != "ErrorCode(999)" || protocol.ErrorCode(999).Err() != protocol.ErrInternal {
		t.Error("unknown code")
	}
	if protocol.CodeOf(protocol.ErrUnknownType) != protocol.CodeUnknownCommand {
		t.Error("ErrUnknownType must map to UnknownCommand")
	}
}

func TestErrorReply(t *testing.T) {
	src := &protocol.Error{Code: protocol.CodeSegmentSealed, Segment: seg, WriterID: "w1"}
	r := protocol.NewErrorReply(9, fmt.Errorf("append: %w", src))
	if r.RequestID != 9 || r.Code != protocol.CodeSegmentSealed || r.Segment != seg || r.WriterID != "w1" || !strings.Contains(r.Message, seg) {
		t.Fatalf("reply %+v", r)
	}
	err := protocol.ErrorFromReply(r)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Segment != seg || pe.WriterID != "w1" || err.Error() != r.Message {
		t.Fatalf("rebuilt %#v", err)
	}
	if !errors.Is(err, protocol.ErrSegmentSealed) || errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatal("errors.Is on rebuilt error")
	}
	// A peer's reply with code None is not success.
	if err := protocol.ErrorFromReply(&protocol.ErrorReply{}); !errors.Is(err, protocol.ErrInternal) {
		t.Fatalf("code None: %v", err)
	}
	// A decode error classifies to its code.
	if c := protocol.CodeOf(&protocol.DecodeError{RequestID: -1, Err: protocol.ErrMalformedMessage}); c != protocol.CodeMalformedMessage {
		t.Fatalf("decode error code %v", c)
	}
}

func TestIsRetriable(t *testing.T) {
	for _, err := range []error{protocol.ErrWrongHost, protocol.ErrContainerUnavailable, &protocol.Error{Code: protocol.CodeWrongHost}, fmt.Errorf("x: %w", protocol.ErrContainerUnavailable)} {
		if !protocol.IsRetriable(err) {
			t.Errorf("IsRetriable(%v) = false", err)
		}
	}
	for _, err := range []error{nil, protocol.ErrNoSuchSegment, protocol.ErrInternal, errors.New("x")} {
		if protocol.IsRetriable(err) {
			t.Errorf("IsRetriable(%v) = true", err)
		}
	}
}
