package server_test

import (
	"errors"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

// TestGetWriterState: a segment answers what it holds of a writer, open,
// sealed and for a writer it never saw, without binding the writer (an
// append after it, with no SetupAppend, is refused); a deleted segment is
// NoSuchSegment; a bad writer id is InvalidArgument and harms nothing.
func TestGetWriterState(t *testing.T) {
	e := start(t, nil)
	ctx := ctxT(t)
	c := e.dial()
	s := seg(3)
	if err := c.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if last, sealed, err := c.WriterState(ctx, s, "w"); err != nil || last != protocol.NoEventNumber || sealed {
		t.Fatalf("state of a writer never seen: %d, %v, %v; want NoEventNumber, open", last, sealed, err)
	}
	if _, err := c.SetupAppend(ctx, "w", s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, "w", 41, 2, block("a", "b"), protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	other := e.dial()
	if last, _, err := other.WriterState(ctx, s, "w"); err != nil || last != 41 {
		t.Fatalf("state after an append: %d, %v; want 41", last, err)
	}
	if _, err := other.Append(ctx, "w", 50, 1, block("c"), protocol.NoExpectedOffset); !errors.Is(err, protocol.ErrWriterNotSetUp) {
		t.Fatalf("append after GetWriterState alone: %v, want ErrWriterNotSetUp", err)
	}
	if _, err := c.SealSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if last, sealed, err := other.WriterState(ctx, s, "w"); err != nil || last != 41 || !sealed {
		t.Fatalf("state of a sealed segment: %d, %v, %v; want 41, sealed", last, sealed, err)
	}
	if _, _, err := other.WriterState(ctx, s, ""); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("empty writer id: %v, want ErrInvalidArgument", err)
	}
	if err := c.DeleteSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.WriterState(ctx, s, "w"); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("state in a deleted segment: %v, want ErrNoSuchSegment", err)
	}
}
