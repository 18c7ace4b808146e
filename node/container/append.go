package container

import (
	"fmt"
	"time"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/wal"
	"github.com/sluice-streams/sluice/protocol"
)

// Append is one append block: whole framed events (protocol.AppendEvent)
// from one writer.
type Append struct {
	Segment string
	// Writer identifies the writer for idempotence; EventNumber is the
	// number of the block's last event, within 0..protocol.MaxEventNumber.
	// What the block is follows from the last
	// number stored for Writer (see classifyBlock): a resend (acknowledged
	// without being applied again), new, or refused. An empty Writer turns
	// this off.
	Writer      string
	EventNumber int64
	// EventCount must match the events in Data.
	EventCount int32
	// ExpectedOffset, unless protocol.NoExpectedOffset, makes the append
	// conditional: it happens only if the segment's length equals it.
	ExpectedOffset int64
	// Data is kept by the container (cached as it is): the caller must
	// not modify it after the call.
	Data []byte
}

// AppendResult is the outcome of an acknowledged append.
type AppendResult struct {
	// PreviousEventNumber is the writer's event number before this block.
	PreviousEventNumber int64
	// Offset is the segment's length after the block (for a resend, the
	// length when the resend arrived).
	Offset int64
	// Duplicate is true when the block was a resend, already stored.
	Duplicate bool
}

// PendingAppend is an append that is in the log's queue. Wait for it.
type PendingAppend struct {
	c      *Container
	p      wal.Pending
	seg    *segment
	result AppendResult
	// For a resend: everything logged when it arrived must be durable
	// before it is acknowledged, since the original may still be in flight.
	syncPoint func() error
}

// Wait blocks until the append is durable (then it may be acknowledged)
// or returns why it cannot be.
func (p *PendingAppend) Wait() (AppendResult, error) {
	if p.syncPoint != nil {
		// Everything logged before the resend is durable at its sync
		// point, the original block with it: readers may see it, even if
		// the original's own Wait never ran (its connection died).
		if err := p.syncPoint(); err != nil {
			return p.result, err
		}
		p.c.mu.Lock()
		p.seg.markDurableLocked(p.result.Offset)
		p.c.mu.Unlock()
		return p.result, nil
	}
	if err := p.c.wait(p.p); err != nil {
		return AppendResult{}, err
	}
	p.c.mu.Lock()
	p.seg.markDurableLocked(p.result.Offset)
	p.c.mu.Unlock()
	return p.result, nil
}

// Done returns a channel closed once Wait no longer waits for the log:
// the append is durable or the log has failed. It is nil for a resend,
// whose Wait waits for everything logged before it (a sync point), so a
// caller that selects on Done must call Wait for such an append. Done
// lets one goroutine wait for several appends, and for other events, in
// one select.
func (p *PendingAppend) Done() <-chan struct{} {
	if p.syncPoint != nil {
		return nil
	}
	return p.p.Done()
}

// Append appends a block and waits until it is durable.
func (c *Container) Append(a Append) (AppendResult, error) {
	p, err := c.AppendAsync(a)
	if err != nil {
		return AppendResult{}, err
	}
	return p.Wait()
}

// AppendAsync checks and queues an append and returns without waiting for
// the disk. Blocks queued by one goroutine are applied and logged in the
// order of its calls, which lets a connection pipeline a writer's blocks
// and acknowledge them in order.
func (c *Container) AppendAsync(a Append) (*PendingAppend, error) {
	n, err := protocol.CheckBlock(a.Data)
	if err != nil {
		return nil, fmt.Errorf("container %d: segment %q: %w", c.cfg.ID, a.Segment, err)
	}
	if int32(n) != a.EventCount {
		return nil, c.errorf(protocol.ErrInvalidArgument, a.Segment, "block holds %d events, header says %d", n, a.EventCount)
	}
	if len(a.Writer) > 0xffff {
		return nil, c.errorf(protocol.ErrInvalidArgument, a.Segment, "writer id of %d bytes", len(a.Writer))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return nil, err
	}
	s, err := c.segmentLocked(a.Segment)
	if err != nil {
		return nil, err
	}
	prev := protocol.NoEventNumber
	if a.Writer != "" {
		v, ok := s.writers[a.Writer]
		if ok {
			prev = v
		} else if len(s.writers) >= MaxWriters {
			return nil, c.errorf(protocol.ErrInvalidArgument, a.Segment, "more than %d writers", MaxWriters)
		}
		resend, err := classifyBlock(prev, a.EventNumber, a.EventCount)
		if err != nil {
			return nil, fmt.Errorf("container %d: segment %q: writer %q: %w", c.cfg.ID, a.Segment, a.Writer, err)
		}
		if resend {
			return &PendingAppend{c: c, seg: s, result: AppendResult{PreviousEventNumber: v, Offset: s.length, Duplicate: true},
				syncPoint: c.syncPointLocked()}, nil
		}
	}
	if s.sealed {
		return nil, c.errorf(protocol.ErrSegmentSealed, a.Segment, "")
	}
	if c.cfg.MaxUntieredBytes > 0 {
		if n := c.untieredLocked(); n >= c.cfg.MaxUntieredBytes {
			return nil, c.errorf(protocol.ErrContainerUnavailable, a.Segment,
				"%d bytes wait for tier 2, the bound is %d: tier 2 is stalled or behind", n, c.cfg.MaxUntieredBytes)
		}
	}
	if a.ExpectedOffset != protocol.NoExpectedOffset && a.ExpectedOffset != s.length {
		return nil, c.errorf(protocol.ErrConditionalCheckFailed, a.Segment, "length is %d, expected %d", s.length, a.ExpectedOffset)
	}
	hdr := appendHeader(s.id, s.length, a.EventNumber, a.Writer)
	p, err := c.logLocked(recAppend, hdr, a.Data)
	if err != nil {
		return nil, err
	}
	r := appendRecord{segID: s.id, offset: s.length, eventNumber: a.EventNumber, writer: a.Writer, dataOff: len(hdr), data: a.Data}
	now := time.Now().UnixNano()
	c.mu.st.applyAppend(s, r, p.Addr, now, now)
	s.events += int64(n)
	if c.cfg.Rates != nil {
		s.meter.Add(c.cfg.Rates, RatesNow(), int64(n), int64(len(a.Data)))
	}
	c.cache.Put(c.cacheKey(p.Addr), a.Data)
	return &PendingAppend{c: c, p: p, seg: s, result: AppendResult{PreviousEventNumber: prev, Offset: s.length}}, nil
}

func (c *Container) cacheKey(a wal.Addr) cache.Key {
	return cache.Key{Container: uint32(c.cfg.ID), File: a.File, Offset: a.Offset}
}

// classifyBlock decides what a writer's block of count events numbered up
// to last is, the writer's last stored event number being stored
// (protocol.NoEventNumber if it has none). The rule:
//
//   - last outside 0..protocol.MaxEventNumber, or count < 1: refused,
//     with an error wrapping protocol.ErrInvalidEventNumber;
//   - a stored number above MaxEventNumber (math.MaxInt64, which an older
//     version stored): every block refused the same way, since any would
//     count as a resend and be dropped; the writer must use a new id;
//   - no stored number, or last > stored: new, to be applied (and stored
//     becomes last);
//   - last <= stored: a resend of a block already stored, acknowledged
//     without being applied.
//
// A resend is acknowledged as stored, so the rule relies on what a writer
// and a connection guarantee: a writer numbers each block once, rising,
// and resends blocks unchanged, in order, after a SetupAppend that told it
// the stored number; a connection refuses a writer's blocks that follow a
// refused one until it sets up again (node/server). Then every number at
// or below the stored one is in a stored block. Since MaxEventNumber is
// below math.MaxInt64, a writer's next number (last+1) never overflows.
func classifyBlock(stored, last int64, count int32) (resend bool, err error) {
	if err := protocol.CheckEventNumbers(last, count); err != nil {
		return false, err
	}
	if stored > protocol.MaxEventNumber {
		return false, fmt.Errorf("%w: %w: the writer's stored event number %d is above %d (an older version stored it); "+
			"append with a new writer id", protocol.ErrInvalidEventNumber, protocol.ErrInvalidArgument, stored, protocol.MaxEventNumber)
	}
	return stored != protocol.NoEventNumber && last <= stored, nil
}
