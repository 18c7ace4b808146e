package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sluice-streams/sluice/protocol"
)

// Mode is what a run measures.
type Mode string

// The modes.
const (
	// Write times writers alone: latency from Write to the durable
	// acknowledgement.
	Write Mode = "write"
	// Read fills the stream (untimed), then times the readers of a new
	// reader group reading exactly those events: latency of each ReadNext.
	Read Mode = "read"
	// E2E runs writers and readers at once: latency from the Write call to
	// ReadNext returning the event, through a timestamp in the event.
	E2E Mode = "e2e"
	// Scale measures the auto-scaler's reaction: a new BY_RATE stream of
	// one segment written below Target for Warmup, then at Rate (above
	// Target) until the first new epoch serves writes (scale.go).
	Scale Mode = "scale"
)

// Defaults and fixed sizes.
const (
	// DefaultDuration is how long the writers write when Config gives
	// neither Duration nor Count (Write and E2E).
	DefaultDuration = 10 * time.Second
	// DefaultCount is Read's fill when Config gives neither.
	DefaultCount = 100000
	// Scope is the scope of the streams Run creates.
	Scope = "bench"
	// StampSize is the E2E timestamp at the start of every event: the
	// nanoseconds from the run's start (monotonic clock), big-endian.
	StampSize = 8
	// DefaultWarmup is Scale's time below the target before the rise:
	// longer than `sluice standalone`'s auto-scale cooldown (10 s), which
	// counts from the stream's creation.
	DefaultWarmup = 15 * time.Second
	// ScaleSettle is how long after the first acknowledgement from a new
	// segment the writes still count as "during the scale" (ScaleAt,
	// Scale): the other sealed segments' writers move in that time.
	ScaleSettle = time.Second
	// DefaultDiskProbeBytes and DefaultDiskProbeSyncs size each disk probe
	// (~0.1-0.5 s each on the machine of docs/BENCHMARKS.md).
	DefaultDiskProbeBytes int64 = 128 << 20
	DefaultDiskProbeSyncs       = 1000
	// DefaultDiskProbeGroup is how long each probe of an ideal log at the
	// run's load lasts (with --rate; diskprobe.GroupCommit).
	DefaultDiskProbeGroup = 2 * time.Second
)

// Config is one run. Its fields are the flags of `sluice bench`, and
// Validate's errors name them as those flags (--writers, --event-size).
// Counts have no defaults: Writers, Readers and Segments are at least 1.
type Config struct {
	// Controller is the controller's URL.
	Controller string
	Mode       Mode
	// Stream is an existing stream, "SCOPE/STREAM", which Run never
	// deletes; "" makes a new stream Scope/bench-<random> of Segments
	// segments, sealed and deleted at the end unless Keep.
	Stream   string
	Segments int
	Keep     bool
	// Writers write, each through its own client.Client; Readers read,
	// in one reader group (Read, E2E).
	Writers int
	Readers int
	// EventSize is the bytes per event (E2E: at least StampSize).
	EventSize int64
	// Rate is the events/s over all writers; 0 is as fast as the writers'
	// windows allow.
	Rate float64
	// FinePacing waits for each event's time on a latency.Pacer (a
	// timerfd) instead of a runtime timer, whose waits under a
	// millisecond last about one, so that the events leave one by one
	// rather than in bursts of Rate/1000 or so. It costs the machine CPU:
	// on the 2-CPU machine of docs/BENCHMARKS.md about 0.3 CPU at 10,000
	// events/s, beside the node.
	FinePacing bool
	// SlowLog, if set, gets a line for every event of the timed run
	// (write, e2e; not a burst before it) slower than SlowOver: when it was
	// sent and what it took (see slowLog).
	SlowLog  io.Writer
	SlowOver time.Duration
	// Duration or Count ends the writers; with neither, Write and E2E
	// write for DefaultDuration and Read fills DefaultCount events.
	Duration time.Duration
	Count    int64
	// DiskDir, if set, is a directory on the node's disk where the disk's
	// limits are probed before and after the run (Report.DiskMBPerS and
	// the ratios); DiskProbeBytes and DiskProbeSyncs size each probe
	// and, with Rate, DiskProbeGroup is how long each probe of an ideal
	// log at the run's load lasts (0: the defaults).
	DiskDir        string
	DiskProbeBytes int64
	DiskProbeSyncs int
	DiskProbeGroup time.Duration
	// DiskCanary (with DiskDir; write, e2e): while the run is timed, a
	// canary in DiskDir times a 4 KiB write+fdatasync every
	// CanaryInterval, so each second's events can be set against what
	// the disk did in that second (Report.DiskCanary, SecondRow.DiskMaxMS).
	DiskCanary bool
	// Progress, if set, gets a progress line about once a second.
	Progress io.Writer

	// Streams is how many streams of Segments segments a run creates (0:
	// 1); writer i writes to stream i mod Streams. Not with Stream.
	Streams int
	// Clients is how many client.Clients the writers share, round robin
	// (0: one per writer). Each client has one connection per node, and
	// a node refuses more than its --max-conns-per-peer (64) from one
	// address.
	Clients int
	// ScaleAt, if set, splits every active segment of the (first) stream
	// in two that long into a Write run, and the report sets the
	// acknowledgement latency of the writes during the scale against the
	// others' (Report.Scale).
	ScaleAt time.Duration
	// Target and Warmup are Scale's: the stream's target rate (events/s
	// per segment) and the time written at a quarter of it before Rate
	// (0: DefaultWarmup).
	Target float64
	Warmup time.Duration
	// ServerPID and ServerPprof, if set, name the server (node or
	// standalone) process on this machine and its --pprof-addr URL: its
	// memory is read after the run (Report.Server): RSS and its peak from
	// /proc/PID/status, the Go heap from /debug/pprof/heap.
	ServerPID   int
	ServerPprof string

	// AfterBurst, if set, has a Write or E2E run first write that many
	// bytes as fast as BurstWriters writers go to a stream of its own,
	// then seal and delete that stream, and at once start the timed run
	// (burst.go): the node has the burst's bytes to tier and to delete
	// while the run is timed. Report.Burst says what the burst did.
	AfterBurst int64
	// TierPoll, if set, is how often a Write or E2E run asks the
	// controller for the nodes' tier-2 backlog while it is timed
	// (Report.TierLag, and the per-second rows); TierMaxLag is the nodes'
	// --tier-max-lag, the bound the largest lag is set against (0: none).
	TierPoll   time.Duration
	TierMaxLag time.Duration
	// Cold makes a Read run catch up from tier 2 with cold caches
	// (cold.go): after the fill it waits until the stream is all in tier
	// 2, drops the page cache of every file under TierDir ("" : the
	// controller's tier 2, if a local directory) and sets the read against
	// a reference file read the same way (Report.Cold).
	Cold    bool
	TierDir string
}

// ErrInvalidConfig is matched (errors.Is) by Validate's errors.
var ErrInvalidConfig = errors.New("bench: invalid config")

// invalid is an error of Validate: its message as given, matching
// ErrInvalidConfig.
type invalid struct{ msg string }

func (e *invalid) Error() string        { return e.msg }
func (e *invalid) Is(target error) bool { return target == ErrInvalidConfig }

func invalidf(format string, args ...any) error {
	return &invalid{msg: fmt.Sprintf(format, args...)}
}

// Validate checks c; Run calls it first.
func (c Config) Validate() error {
	switch {
	case c.Mode != Write && c.Mode != Read && c.Mode != E2E && c.Mode != Scale:
		return invalidf("bench: mode %q: want %s, %s, %s or %s", c.Mode, Write, Read, E2E, Scale)
	case c.Writers < 1:
		return invalidf("--writers %d: want at least 1", c.Writers)
	case c.Readers < 1:
		return invalidf("--readers %d: want at least 1", c.Readers)
	case c.Segments < 1:
		return invalidf("--segments %d: want at least 1", c.Segments)
	case c.Stream != "" && c.Keep:
		return invalidf("--keep applies to the stream bench creates; an existing --stream is never deleted")
	case c.EventSize < 1 || c.EventSize > protocol.MaxEventSize:
		return invalidf("--event-size %d: want 1 to %d bytes (8 MiB)", c.EventSize, protocol.MaxEventSize)
	case c.Mode == E2E && c.EventSize < StampSize:
		return invalidf("--event-size %d: e2e events carry an %d-byte timestamp; want at least %d", c.EventSize, StampSize, StampSize)
	case c.Rate < 0:
		return invalidf("--rate %v: want 0 (unlimited) or more events/s", c.Rate)
	case c.FinePacing && c.Rate == 0:
		return invalidf("--fine-pacing paces a --rate; there is none")
	case c.SlowOver < 0:
		return invalidf("--slow-over %v: want 0 or more", c.SlowOver)
	case c.SlowLog != nil && c.Mode != Write && c.Mode != E2E:
		return invalidf("--slow-log: with bench write or e2e")
	case c.Duration < 0:
		return invalidf("--duration %v: want more than 0", c.Duration)
	case c.Count < 0:
		return invalidf("--count %d: want at least 1", c.Count)
	case c.Duration > 0 && c.Count > 0:
		return invalidf("--duration and --count exclude each other")
	case c.AfterBurst < 0 || (c.AfterBurst > 0 && c.Mode != Write && c.Mode != E2E):
		return invalidf("--after-burst %d: want a size in bytes, with bench write or e2e", c.AfterBurst)
	case c.DiskCanary && (c.DiskDir == "" || c.Mode != Write && c.Mode != E2E):
		return invalidf("--disk-canary: with --measure-disk, and bench write or e2e")
	case c.TierPoll < 0 || c.TierMaxLag < 0:
		return invalidf("--tier-poll %v, --tier-max-lag %v: want 0 (off, none) or more", c.TierPoll, c.TierMaxLag)
	case c.DiskProbeBytes < 0 || c.DiskProbeSyncs < 0 || c.DiskProbeGroup < 0:
		return invalidf("bench: disk probe of %d bytes, %d syncs and an ideal log for %v: want 0 (the default) or more", c.DiskProbeBytes, c.DiskProbeSyncs, c.DiskProbeGroup)
	}
	if err := c.validateMore(); err != nil {
		return err
	}
	if err := c.validateCold(); err != nil {
		return err
	}
	if c.DiskDir != "" {
		if fi, err := os.Stat(c.DiskDir); err != nil || !fi.IsDir() {
			return invalidf("--disk-dir %s: not a directory", c.DiskDir)
		}
	}
	return nil
}

// withDefaults fills in what c leaves to the defaults.
func (c Config) withDefaults() Config {
	if c.Mode == Scale && c.Warmup == 0 {
		c.Warmup = DefaultWarmup
	}
	if c.Duration == 0 && c.Count == 0 && c.Mode != Scale {
		if c.Mode == Read {
			c.Count = DefaultCount
		} else {
			c.Duration = DefaultDuration
		}
	}
	if c.DiskProbeBytes == 0 {
		c.DiskProbeBytes = DefaultDiskProbeBytes
	}
	if c.DiskProbeSyncs == 0 {
		c.DiskProbeSyncs = DefaultDiskProbeSyncs
	}
	if c.DiskProbeGroup == 0 {
		c.DiskProbeGroup = DefaultDiskProbeGroup
	}
	return c
}

// expected is how many events a run should record, to size recorders (at
// most a million: beyond, they grow).
func (c Config) expected() int {
	switch {
	case c.Count > 0:
		return int(min(c.Count, 1<<20))
	case c.Rate > 0:
		return int(min(c.Rate*c.Duration.Seconds()*1.1, 1<<20))
	}
	return 1 << 20
}

// share is how many of count events writer i of writers writes (0: until
// the duration is over): count split as evenly as it goes, the first
// count%writers writers one more.
func share(count int64, writers, i int) int64 {
	if count <= 0 {
		return 0
	}
	n := count / int64(writers)
	if int64(i) < count%int64(writers) {
		n++
	}
	return n
}

// interval is the time between two events of one writer for rate events/s
// over all writers (0: unpaced).
func interval(rate float64, writers int) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) * float64(writers) / rate)
}
