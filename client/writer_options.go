package client

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/sluice-streams/sluice/internal/retry"
)

// Writer defaults.
const (
	DefaultMaxInflight = 4 << 20
	DefaultMaxBatch    = 1 << 20
	DefaultBackoffMin  = 10 * time.Millisecond
	DefaultBackoffMax  = 2 * time.Second
	// maxBlock keeps an append block (with its frame header) below
	// protocol.MaxFrameSize whatever WithMaxBatch says.
	maxBlock = 15 << 20
	// maxWriterIDLength leaves room in protocol.MaxWriterIDLength for the
	// segment suffix of the wire writer id (see Writer).
	maxWriterIDLength = 200
)

// WriterOption configures a Writer (NewWriter).
type WriterOption func(*writerConfig)

type writerConfig struct {
	id                     string
	maxInflight            int64
	maxBatch               int
	backoffMin, backoffMax time.Duration
	state                  func(StateChange)
	sequenced              bool // WithSequenced
	idSet                  bool // WithWriterID was given
}

func defaultWriterConfig() writerConfig {
	return writerConfig{
		id:          newUUID(),
		maxInflight: DefaultMaxInflight,
		maxBatch:    DefaultMaxBatch,
		backoffMin:  DefaultBackoffMin,
		backoffMax:  DefaultBackoffMax,
	}
}

// newBackoff returns the waits of one retry loop of the writer (or of its
// transactions): retry.NewJittered over WithBackoff's bounds.
func (c *writerConfig) newBackoff() *backoff.ExponentialBackOff {
	return retry.NewJittered(c.backoffMin, c.backoffMax)
}

func (c *writerConfig) validate() error {
	switch {
	case c.id == "" || len(c.id) > maxWriterIDLength:
		return fmt.Errorf("client: writer id must be 1-%d bytes, got %d", maxWriterIDLength, len(c.id))
	case c.id == "." || c.id == "..":
		return fmt.Errorf("client: writer id %q: \".\" and \"..\" are not writer ids (the controller's routes take the id as a path segment)", c.id)
	case c.maxInflight <= 0:
		return fmt.Errorf("client: max in-flight bytes must be positive, got %d", c.maxInflight)
	case c.maxBatch <= 0:
		return fmt.Errorf("client: max batch bytes must be positive, got %d", c.maxBatch)
	case c.sequenced && !c.idSet:
		return fmt.Errorf("client: a sequenced writer (WithSequenced) needs WithWriterID: %w", ErrSequenced)
	case c.backoffMin <= 0 || c.backoffMax < c.backoffMin:
		return fmt.Errorf("client: backoff must satisfy 0 < min <= max, got %v..%v", c.backoffMin, c.backoffMax)
	}
	if c.maxBatch > maxBlock {
		c.maxBatch = maxBlock
	}
	return nil
}

// WithWriterID sets the writer id (default: a random UUID). Within one
// Writer every event is stored exactly once, whatever breaks. A plain
// Writer made again with the id of one that stopped continues after its
// event numbers: events the application gives it again are new events,
// stored again. For exactly once across restarts of the application, add
// WithSequenced and number the events (WriteSeq). Two live writers must
// never share an id. At most 200 bytes; not "." or "..".
func WithWriterID(id string) WriterOption {
	return func(c *writerConfig) { c.id, c.idSet = id, true }
}

// WithMaxInflight bounds the bytes of events written but not yet
// acknowledged (default 4 MiB); Write blocks while the window is full.
// One event larger than the bound is let through when nothing else is in
// flight.
func WithMaxInflight(bytes int64) WriterOption {
	return func(c *writerConfig) { c.maxInflight = bytes }
}

// WithMaxBatch bounds an append block (default 1 MiB; at most 15 MiB) while
// other blocks of the segment are in flight; an event larger than the bound
// travels alone.
func WithMaxBatch(bytes int) WriterOption { return func(c *writerConfig) { c.maxBatch = bytes } }

// WithBackoff sets the delays between reconnection attempts: growing
// twofold from min towards max, jittered, never below min nor above max
// (default 10ms..2s).
func WithBackoff(min, max time.Duration) WriterOption {
	return func(c *writerConfig) { c.backoffMin, c.backoffMax = min, max }
}

// WithStateFunc calls f on every connection state change of a segment.
// f is called from the segment's goroutine: it must return quickly and
// must not call the Writer.
func WithStateFunc(f func(StateChange)) WriterOption { return func(c *writerConfig) { c.state = f } }

// State is the connection state of one of a writer's segments.
type State int

// States, in the order a segment usually goes through them.
const (
	// StateConnecting: looking up the node, dialling, SetupAppend.
	StateConnecting State = iota
	// StateConnected: SetupAppend done; events flow.
	StateConnected
	// StateDisconnected: the connection or the node failed (Err says
	// how); the writer retries after a backoff.
	StateDisconnected
	// StateSealed: the segment was sealed by a scale; its unacknowledged
	// events move to its successors.
	StateSealed
	// StateFailed: the segment cannot be written any more (Err, e.g. it was
	// deleted); its events fail with Err.
	StateFailed
)

func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	case StateDisconnected:
		return "disconnected"
	case StateSealed:
		return "sealed"
	case StateFailed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// StateChange is one change of a segment's connection state.
type StateChange struct {
	Segment  string // the segment's qualified name
	State    State
	Endpoint string // the node, when known
	Err      error  // why, for StateDisconnected and StateFailed
}

// newUUID returns a random (version 4) UUID in canonical text.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
