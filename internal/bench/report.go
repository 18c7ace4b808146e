package bench

import (
	"time"

	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/node/diskprobe"
)

// Report is the result of a run; its JSON form is `sluice bench -o json`'s
// output.
type Report struct {
	Mode       Mode    `json:"mode"`
	Stream     string  `json:"stream"`
	Segments   int     `json:"segments"`          // over all streams
	Streams    int     `json:"streams,omitempty"` // with Config.Streams > 1
	Writers    int     `json:"writers"`
	Readers    int     `json:"readers,omitempty"`
	EventSize  int     `json:"eventSize"`
	Rate       float64 `json:"rate"` // events/s asked for, 0: unlimited
	Events     int64   `json:"events"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
	EventsPerS float64 `json:"eventsPerSec"`
	MBPerS     float64 `json:"mbPerSec"` // 10^6 bytes/s, as diskprobe reports
	// Latency is write -> durable acknowledgement (Write), one ReadNext
	// (Read), or the Write call -> ReadNext returning the event (E2E).
	Latency LatencyMS `json:"latencyMs"`
	// WriteLatency is E2E's write -> durable acknowledgement.
	WriteLatency *LatencyMS `json:"writeLatencyMs,omitempty"`

	// With Config.DiskDir: the disk's limits, probed before and after the
	// run, and the run's numbers against them.
	DiskDir     string   `json:"diskDir,omitempty"`
	DiskMBPerS  *float64 `json:"diskMbPerSec,omitempty"` // fsync'd 1 MiB writes, both probes together
	DiskP99MS   *float64 `json:"diskP99Ms,omitempty"`    // 4 KiB write+fsync, both probes together
	DiskRatio   *float64 `json:"diskRatio,omitempty"`    // mbPerSec / diskMbPerSec
	P99DiskRate *float64 `json:"p99DiskRatio,omitempty"` // latency p99 / diskP99Ms
	DiskP50MS   *float64 `json:"diskP50Ms,omitempty"`    // 4 KiB write+fsync, both probes together
	P50DiskRate *float64 `json:"p50DiskRatio,omitempty"` // latency p50 / diskP50Ms
	// With --rate: an ideal log's latency on the same disk at the run's
	// load (diskprobe.GroupCommit at the run's rate and event size, both
	// probes' events together), and the run's latency p99 against it.
	DiskGroupP50MS *float64 `json:"diskGroupP50Ms,omitempty"`
	DiskGroupP99MS *float64 `json:"diskGroupP99Ms,omitempty"`
	P99GroupRate   *float64 `json:"p99GroupRatio,omitempty"` // latency p99 / diskGroupP99Ms
	// DiskCanary (Config.DiskCanary) is the latency of the canary's
	// 4 KiB write+fdatasync every CanaryInterval during the timed run;
	// each per-second row has its slowest (diskMaxMs).
	DiskCanary *LatencyMS `json:"diskCanaryMs,omitempty"`
	// DiskCanaryGrid: where the canary's stalls ended on the wall clock.
	DiskCanaryGrid *CanaryGrid `json:"diskCanaryGrid,omitempty"`
	// DiskProbes is each probe on its own (before, after the run): after
	// a burst the second one shares the disk with the node's catch-up.
	DiskProbes []DiskProbe `json:"diskProbes,omitempty"`

	// Write and E2E: the latency of each second of the timed run (by
	// the events' Write calls) and of its first WindowSplit against the
	// rest; with Config.AfterBurst, the burst before it; with
	// Config.TierPoll and a node with tier 2, the tier-2 backlog during
	// it.
	PerSecond []SecondRow  `json:"perSecond,omitempty"`
	Windows   *Windows     `json:"windows,omitempty"`
	Burst     *BurstReport `json:"burst,omitempty"`
	TierLag   *TierLag     `json:"tierLag,omitempty"`
	// PacingLate is, with a rate, how late the writers' Write calls were
	// against their schedule (the writer's timer and the scheduler: the
	// benchmark's own share). A late Write is timed from when it was
	// made, so lateness is not in Latency; a writer catches up at once,
	// so it does not lower the rate either.
	PacingLate *LatencyMS `json:"pacingLateMs,omitempty"`
	// AckWake is how long after the Writer settled each Ack
	// (client.Ack.Settled) the benchmark's goroutine waiting for it saw
	// it: the wake-up an application waiting on Ack.Done also pays. The
	// acknowledgement latencies end at the settling, so it is not in
	// them.
	AckWake *LatencyMS `json:"ackWakeMs,omitempty"`

	// HostCPU is the machine's CPUs during a Write or E2E run's timed
	// part (with its per-second rows' busyPct and stealPct).
	HostCPU *HostCPU `json:"hostCpu,omitempty"`

	// Scale is the write latency during a scale against the same run's
	// other writes (Config.ScaleAt, and Scale runs); Reaction the
	// auto-scaler's reaction (Scale runs); Server the server's memory
	// after the run (Config.ServerPID, ServerPprof).
	Scale    *ScaleReport    `json:"scale,omitempty"`
	Reaction *ReactionReport `json:"reaction,omitempty"`
	Server   *ServerMemory   `json:"server,omitempty"`
	// Cold is a cold read's tier-2 files and disk limit (Config.Cold).
	Cold *ColdReport `json:"cold,omitempty"`
}

// LatencyMS holds percentiles in milliseconds (nearest rank, exact:
// internal/latency).
type LatencyMS struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func latencyMillis(s latency.Sorted) LatencyMS {
	return LatencyMS{P50: millis(s.Percentile(50)), P95: millis(s.Percentile(95)), P99: millis(s.Percentile(99)),
		P999: millis(s.Percentile(99.9)), Max: millis(s.Max())}
}

// fill sets the totals and the latency percentiles.
func (r *Report) fill(events, eventSize int64, elapsed time.Duration, lat latency.Sorted) {
	r.Events, r.Bytes = events, events*eventSize
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.EventsPerS = float64(r.Events) / r.Seconds
		r.MBPerS = float64(r.Bytes) / r.Seconds / 1e6
	}
	r.Latency = latencyMillis(lat)
}

// DiskProbe is one probe of the disk (Config.DiskDir).
type DiskProbe struct {
	MBPerS float64 `json:"mbPerSec"`
	P50MS  float64 `json:"p50Ms"`
	P99MS  float64 `json:"p99Ms"`
	// With --rate, the ideal log at the run's load (diskprobe.GroupCommit).
	GroupP50MS float64 `json:"groupP50Ms,omitempty"`
	GroupP99MS float64 `json:"groupP99Ms,omitempty"`
	GroupMaxMS float64 `json:"groupMaxMs,omitempty"`
}

// diskLimits accumulates diskprobe measurements taken around a run.
type diskLimits struct {
	dir    string
	bytes  int64
	time   time.Duration
	syncs  latency.Sorted
	group  latency.Sorted // the ideal log's event latencies, if probed
	probes []DiskProbe
}

// groupLoad is the load an ideal log is probed at: events of size bytes,
// rate a second, for a while (diskprobe.GroupCommit). Zero: not probed.
type groupLoad struct {
	size int
	rate float64
	dur  time.Duration
}

// probe measures fsync'd sequential bandwidth (total bytes in
// diskprobe.DefaultBlockSize writes), write+fsync latency (syncs of
// diskprobe.DefaultSyncSize) and, if load.rate is set, an ideal log's
// latency at that load, in dir once more.
func (d *diskLimits) probe(dir string, total int64, syncs int, load groupLoad) error {
	d.dir = dir
	res, err := diskprobe.SequentialSync(dir, diskprobe.DefaultBlockSize, total)
	if err != nil {
		return err
	}
	d.add(res.Bytes, res.Elapsed, nil)
	lat, err := diskprobe.SyncLatency(dir, diskprobe.DefaultSyncSize, syncs)
	if err != nil {
		return err
	}
	d.add(0, 0, lat.Durations)
	p := DiskProbe{P50MS: millis(lat.Durations.Percentile(50)), P99MS: millis(lat.Durations.Percentile(99))}
	if res.Elapsed > 0 {
		p.MBPerS = float64(res.Bytes) / res.Elapsed.Seconds() / 1e6
	}
	if load.rate > 0 {
		g, err := diskprobe.GroupCommit(dir, load.size, load.rate, load.dur)
		if err != nil {
			return err
		}
		d.group = latency.Sort(append(d.group, g.Latencies...))
		p.GroupP50MS, p.GroupP99MS, p.GroupMaxMS = millis(g.Latencies.Percentile(50)), millis(g.Latencies.Percentile(99)), millis(g.Latencies.Max())
	}
	d.probes = append(d.probes, p)
	return nil
}

// add counts one probe's bytes, time and sync latencies.
func (d *diskLimits) add(bytes int64, elapsed time.Duration, syncs []time.Duration) {
	d.bytes += bytes
	d.time += elapsed
	if len(syncs) > 0 {
		d.syncs = latency.Sort(append(d.syncs, syncs...))
	}
}

// addTo sets r's disk figures: the probes' bandwidth and p99, and r's
// against them.
func (d *diskLimits) addTo(r *Report) {
	mbs := float64(d.bytes) / d.time.Seconds() / 1e6
	p50, p99 := millis(d.syncs.Percentile(50)), millis(d.syncs.Percentile(99))
	ratio, p50Ratio, p99Ratio := r.MBPerS/mbs, r.Latency.P50/p50, r.Latency.P99/p99
	r.DiskDir, r.DiskMBPerS, r.DiskP99MS, r.DiskRatio, r.P99DiskRate = d.dir, &mbs, &p99, &ratio, &p99Ratio
	r.DiskP50MS, r.P50DiskRate, r.DiskProbes = &p50, &p50Ratio, d.probes
	if len(d.group) > 0 {
		gp50, gp99 := millis(d.group.Percentile(50)), millis(d.group.Percentile(99))
		gRatio := r.Latency.P99 / gp99
		r.DiskGroupP50MS, r.DiskGroupP99MS, r.P99GroupRate = &gp50, &gp99, &gRatio
	}
}

// CanaryGrid is diskprobe.StallGrid of the canary's syncs: of its Stalls
// (syncs over CanaryStallMS), OnGrid ended within WidthMS of PhaseMS past
// a multiple of PeriodMS. A Share near 1 says the stalls were a host's
// throttle releasing held requests at its refills; spread at random it is
// about 2*WidthMS/PeriodMS.
type CanaryGrid struct {
	PeriodMS float64 `json:"periodMs"`
	WidthMS  float64 `json:"widthMs"`
	Stalls   int     `json:"stalls"`
	OnGrid   int     `json:"onGrid"`
	PhaseMS  float64 `json:"phaseMs"`
	Share    float64 `json:"share"`
}
