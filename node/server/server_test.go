package server_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
)

func TestCommandsEndToEnd(t *testing.T) {
	e := start(t, nil)
	c := e.dial()
	ctx := ctxT(t)
	s := seg(1)

	if err := c.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	checkIs(t, "create twice", c.CreateSegment(ctx, s), protocol.ErrSegmentExists)

	last, err := c.SetupAppend(ctx, "w1", s)
	if err != nil || last != protocol.NoEventNumber {
		t.Fatalf("setup: %d, %v; want NoEventNumber", last, err)
	}

	// Pipeline blocks, then check the acks in order.
	var want []byte
	var wantEvents []string
	const blocks = 20
	var futures []*segclient.AppendFuture
	var ends []int64 // the segment's length after each block
	for i := 1; i <= blocks; i++ {
		evs := []string{fmt.Sprintf("event %d.a", i), "", fmt.Sprintf("event %d.c %s", i, bytes.Repeat([]byte{'x'}, i*100))}
		b := block(evs...)
		f, err := c.AppendAsync(ctx, "w1", int64(i), int32(len(evs)), b, protocol.NoExpectedOffset)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
		wantEvents = append(wantEvents, evs...)
		futures = append(futures, f)
		ends = append(ends, int64(len(want)))
	}
	prevOffset := int64(0)
	for i, f := range futures {
		ack, err := f.Wait(ctx)
		if err != nil {
			t.Fatalf("ack %d: %v", i+1, err)
		}
		wantPrev := int64(i)
		if i == 0 {
			wantPrev = protocol.NoEventNumber
		}
		if ack.WriterID != "w1" || ack.EventNumber != int64(i+1) || ack.PreviousEventNumber != wantPrev {
			t.Fatalf("ack %d: %+v", i+1, ack)
		}
		if ack.CurrentOffset != ends[i] || ack.CurrentOffset <= prevOffset {
			t.Fatalf("ack %d: offset %d, want %d (previous %d)", i+1, ack.CurrentOffset, ends[i], prevOffset)
		}
		prevOffset = ack.CurrentOffset
	}
	length := int64(len(want))
	got := readAll(t, c, s, 0, length)
	if !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, differ from the %d appended", len(got), len(want))
	}
	if evs := events(t, got); !slices.Equal(evs, wantEvents) {
		t.Fatalf("events read back: %q, want %q", evs, wantEvents)
	}

	info := must(c.GetSegmentInfo(ctx, s))(t)
	if info.Segment != s || info.Length != length || info.StartOffset != 0 || info.Sealed || info.LastModifiedUnixNano <= 0 {
		t.Fatalf("info: %+v, want length %d", info, length)
	}

	// Attributes, with compare-and-set.
	if err := c.UpdateAttributes(ctx, s, []protocol.AttributeUpdate{{Key: "k1", Kind: protocol.Replace, Value: 5}}); err != nil {
		t.Fatal(err)
	}
	checkIs(t, "CAS with a stale value", c.UpdateAttributes(ctx, s, []protocol.AttributeUpdate{
		{Key: "k2", Kind: protocol.Replace, Value: 1},
		{Key: "k1", Kind: protocol.ReplaceIfEquals, Value: 7, Expected: 4},
	}), protocol.ErrAttributeConflict)
	if err := c.UpdateAttributes(ctx, s, []protocol.AttributeUpdate{{Key: "k1", Kind: protocol.ReplaceIfEquals, Value: 6, Expected: 5}}); err != nil {
		t.Fatal(err)
	}
	attrs := must(c.GetAttributes(ctx, s, []string{"k1", "k2"}))(t)
	if len(attrs) != 1 || attrs["k1"] != 6 {
		t.Fatalf("attributes: %v, want k1=6 only (the failed update must not set k2)", attrs)
	}

	// Conditional appends.
	if _, err := c.SetupAppend(ctx, "w2", s); err != nil {
		t.Fatal(err)
	}
	ack, err := c.Append(ctx, "w2", 1, 1, block("conditional"), length)
	if err != nil {
		t.Fatalf("conditional append at the length: %v", err)
	}
	length += int64(len(block("conditional")))
	if ack.CurrentOffset != length {
		t.Fatalf("conditional ack offset %d, want %d", ack.CurrentOffset, length)
	}
	_, err = c.Append(ctx, "w2", 2, 1, block("stale"), 0)
	checkIs(t, "conditional append at a stale offset", err, protocol.ErrConditionalCheckFailed)

	// Seal, then appends fail and a read at the end says so.
	sealed := must(c.SealSegment(ctx, s))(t)
	if sealed != length {
		t.Fatalf("sealed at %d, want %d", sealed, length)
	}
	_, err = c.Append(ctx, "w2", 3, 1, block("late"), protocol.NoExpectedOffset)
	checkIs(t, "append after seal", err, protocol.ErrSegmentSealed)
	r := must(c.ReadSegment(ctx, s, length, 100, time.Second))(t)
	if !r.EndOfSegment || len(r.Data) != 0 {
		t.Fatalf("read at the end of a sealed segment: %+v", r)
	}

	// Truncate, then reads below fail.
	cut := ends[4]
	start := must(c.TruncateSegment(ctx, s, cut))(t)
	if start != cut {
		t.Fatalf("truncated to %d, want %d", start, cut)
	}
	_, err = c.ReadSegment(ctx, s, 0, 100, 0)
	checkIs(t, "read below the start", err, protocol.ErrSegmentTruncated)
	if got := readAll(t, c, s, cut, ends[5]); !bytes.Equal(got, want[cut:ends[5]]) {
		t.Fatalf("read at the new start differs")
	}
	if info := must(c.GetSegmentInfo(ctx, s))(t); info.StartOffset != cut || !info.Sealed {
		t.Fatalf("info after truncate: %+v", info)
	}

	// Merge a sealed transaction segment into its parent.
	parent := seg(2)
	txn := protocol.TransactionSegmentName(parent, "0f8fad5b-d9cb-469f-a165-70867728950e")
	if err := c.CreateSegment(ctx, parent); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateSegment(ctx, txn); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, "p", parent); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, "p", 1, 1, block("parent"), protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, "t", txn); err != nil {
		t.Fatal(err)
	}
	txnData := block("txn 1", "txn 2")
	if _, err := c.Append(ctx, "t", 1, 2, txnData, protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	_, err = c.MergeSegments(ctx, parent, txn)
	checkIs(t, "merge of an unsealed source", err, protocol.ErrSegmentNotSealed)
	if _, err := c.SealSegment(ctx, txn); err != nil {
		t.Fatal(err)
	}
	parentLen := int64(len(block("parent")) + len(txnData))
	if n := must(c.MergeSegments(ctx, parent, txn))(t); n != parentLen {
		t.Fatalf("merged length %d, want %d", n, parentLen)
	}
	if evs := events(t, readAll(t, c, parent, 0, parentLen)); !slices.Equal(evs, []string{"parent", "txn 1", "txn 2"}) {
		t.Fatalf("parent after merge: %q", evs)
	}
	_, err = c.GetSegmentInfo(ctx, txn)
	checkIs(t, "info of a merged source", err, protocol.ErrNoSuchSegment)

	// Segments of different containers cannot be merged.
	var other string
	for i := int64(3); other == ""; i++ {
		if protocol.ContainerOf(seg(i), containers) != protocol.ContainerOf(parent, containers) {
			other = seg(i)
		}
	}
	if err := c.CreateSegment(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SealSegment(ctx, other); err != nil {
		t.Fatal(err)
	}
	_, err = c.MergeSegments(ctx, parent, other)
	checkIs(t, "merge across containers", err, protocol.ErrInvalidArgument)

	// Delete.
	if err := c.DeleteSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSegmentInfo(ctx, s)
	checkIs(t, "info after delete", err, protocol.ErrNoSuchSegment)
	_, err = c.ReadSegment(ctx, s, cut, 10, 0)
	checkIs(t, "read after delete", err, protocol.ErrNoSuchSegment)
	checkIs(t, "delete twice", c.DeleteSegment(ctx, s), protocol.ErrNoSuchSegment)
}
