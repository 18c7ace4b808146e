package main

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/node/diskprobe"
)

// benchReport is the result of a bench run: the --output json object, and
// the rows of the table.
type benchReport struct {
	Mode       string  `json:"mode"`
	Stream     string  `json:"stream"`
	Segments   int     `json:"segments"`
	Writers    int     `json:"writers"`
	Readers    int     `json:"readers,omitempty"`
	EventSize  int     `json:"eventSize"`
	Rate       float64 `json:"rate"` // events/s asked for, 0: unlimited
	Events     int64   `json:"events"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
	EventsPerS float64 `json:"eventsPerSec"`
	MBPerS     float64 `json:"mbPerSec"` // 10^6 bytes/s, as diskprobe reports
	// Latency is write -> durable acknowledgement (write), one ReadNext
	// (read), or the Write call -> ReadNext returning the event (e2e).
	Latency latencyMS `json:"latencyMs"`
	// WriteLatency is e2e's write -> durable acknowledgement.
	WriteLatency *latencyMS `json:"writeLatencyMs,omitempty"`

	// With --measure-disk: the disk's limits, probed before and after the
	// run, and the run's numbers against them.
	DiskDir     string   `json:"diskDir,omitempty"`
	DiskMBPerS  *float64 `json:"diskMbPerSec,omitempty"` // fsync'd 1 MiB writes, both probes together
	DiskP99MS   *float64 `json:"diskP99Ms,omitempty"`    // 4 KiB write+fsync, both probes together
	DiskRatio   *float64 `json:"diskRatio,omitempty"`    // mbPerSec / diskMbPerSec
	P99DiskRate *float64 `json:"p99DiskRatio,omitempty"` // latency p99 / diskP99Ms
}

// latencyMS holds percentiles in milliseconds.
type latencyMS struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func latencyMillis(s latency.Sorted) latencyMS {
	return latencyMS{P50: millis(s.Percentile(50)), P95: millis(s.Percentile(95)), P99: millis(s.Percentile(99)),
		P999: millis(s.Percentile(99.9)), Max: millis(s.Max())}
}

// fill sets the totals and the latency percentiles.
func (r *benchReport) fill(events, eventSize int64, elapsed time.Duration, lat latency.Sorted) {
	r.Events, r.Bytes = events, events*eventSize
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.EventsPerS = float64(r.Events) / r.Seconds
		r.MBPerS = float64(r.Bytes) / r.Seconds / 1e6
	}
	r.Latency = latencyMillis(lat)
}

func (r *benchReport) output() output {
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	lat := func(l latencyMS) string {
		return fmt.Sprintf("p50 %s  p95 %s  p99 %s  p99.9 %s  max %s", f(l.P50, 3), f(l.P95, 3), f(l.P99, 3), f(l.P999, 3), f(l.Max, 3))
	}
	rate := "unlimited"
	if r.Rate > 0 {
		rate = f(r.Rate, 0) + " events/s"
	}
	o := output{Columns: []string{"METRIC", "VALUE"}, JSON: r}
	add := func(k, v string) { o.Rows = append(o.Rows, []string{k, v}) }
	add("mode", r.Mode)
	add("stream", r.Stream)
	add("segments", strconv.Itoa(r.Segments))
	add("writers", strconv.Itoa(r.Writers))
	if r.Readers > 0 {
		add("readers", strconv.Itoa(r.Readers))
	}
	add("event size", strconv.Itoa(r.EventSize)+" B")
	add("rate", rate)
	add("events", strconv.FormatInt(r.Events, 10))
	add("bytes", strconv.FormatInt(r.Bytes, 10))
	add("seconds", f(r.Seconds, 3))
	add("events/s", f(r.EventsPerS, 0))
	add("MB/s", f(r.MBPerS, 1))
	add("latency ms", lat(r.Latency))
	if r.WriteLatency != nil {
		add("write->ack ms", lat(*r.WriteLatency))
	}
	if r.DiskMBPerS != nil {
		add("disk dir", r.DiskDir)
		add("disk MB/s", f(*r.DiskMBPerS, 1))
		add("disk p99 ms", f(*r.DiskP99MS, 3))
		add("MB/s / disk MB/s", f(*r.DiskRatio, 3))
		add("p99 / disk p99", f(*r.P99DiskRate, 2))
	}
	return o
}

// diskLimits accumulates diskprobe measurements taken around a run.
type diskLimits struct {
	dir   string
	bytes int64
	time  time.Duration
	syncs latency.Sorted
}

// Probe sizes: ~0.1-0.5 s each on the machine of docs/BENCHMARKS.md.
// Variables so the command's tests probe less (they check the report's
// shape, not the disk).
var (
	diskProbeBytes int64 = 128 << 20
	diskProbeSyncs       = 1000
)

// probe measures fsync'd sequential bandwidth and write+fsync latency in dir
// once more.
func (d *diskLimits) probe(dir string) error {
	d.dir = dir
	res, err := diskprobe.SequentialSync(dir, diskprobe.DefaultBlockSize, diskProbeBytes)
	if err != nil {
		return err
	}
	d.bytes += res.Bytes
	d.time += res.Elapsed
	lat, err := diskprobe.SyncLatency(dir, diskprobe.DefaultSyncSize, diskProbeSyncs)
	if err != nil {
		return err
	}
	d.syncs = latency.Sort(append(d.syncs, lat.Durations...))
	return nil
}

func (d *diskLimits) addTo(r *benchReport) {
	mbs := float64(d.bytes) / d.time.Seconds() / 1e6
	p99 := millis(d.syncs.Percentile(99))
	ratio, p99Ratio := r.MBPerS/mbs, r.Latency.P99/p99
	r.DiskDir, r.DiskMBPerS, r.DiskP99MS, r.DiskRatio, r.P99DiskRate = d.dir, &mbs, &p99, &ratio, &p99Ratio
}

// histogram counts durations in logarithmic buckets (16 per power of two,
// so within ~6%), cheaply enough for every event, for the progress line's
// "p99 so far"; the report uses the exact latency.Recorder.
type histogram struct {
	counts [64 * 16]atomic.Int64
}

func histBucket(d time.Duration) int {
	v := uint64(max(d, 1))
	e := bits.Len64(v) - 1 // 2^e <= v < 2^(e+1)
	var m uint64
	if e >= 4 {
		m = (v >> (e - 4)) & 15
	} else {
		m = (v << (4 - e)) & 15
	}
	return e*16 + int(m)
}

func (h *histogram) record(d time.Duration) { h.counts[histBucket(d)].Add(1) }

// percentile returns the upper bound of the bucket holding the p-th
// percentile (0 with no samples).
func (h *histogram) percentile(p float64) time.Duration {
	var total int64
	for i := range h.counts {
		total += h.counts[i].Load()
	}
	if total == 0 {
		return 0
	}
	rank := int64(math.Ceil(p / 100 * float64(total)))
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			e, m := i/16, uint64(i%16)
			return time.Duration((uint64(1) << e) + (m+1)*(uint64(1)<<e)/16)
		}
	}
	return 0
}

// progress prints a line on stderr about once a second: events/s and MB/s
// over the last second and the p99 so far. On a terminal the line is
// rewritten in place (\r); otherwise each one is a line of its own.
type progress struct {
	w     io.Writer
	tty   bool
	label string

	mu   sync.Mutex
	quit chan struct{}
	done chan struct{}
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// start shows the progress of the counters until stop.
func (p *progress) start(events, bytes *atomic.Int64, h *histogram) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quit, p.done = make(chan struct{}), make(chan struct{})
	quit, done, label := p.quit, p.done, p.label
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		begin := time.Now()
		lastT, lastE, lastB := begin, int64(0), int64(0)
		printed := false
		for {
			select {
			case <-quit:
				if printed && p.tty {
					fmt.Fprintln(p.w)
				}
				return
			case now := <-t.C:
				e, b := events.Load(), bytes.Load()
				s := now.Sub(lastT).Seconds()
				line := fmt.Sprintf("%s%5.0fs  %9.0f events/s  %8.1f MB/s  p99 %.3f ms  (%d events)",
					label, now.Sub(begin).Seconds(), float64(e-lastE)/s, float64(b-lastB)/s/1e6, millis(h.percentile(99)), e)
				lastT, lastE, lastB = now, e, b
				if p.tty {
					fmt.Fprintf(p.w, "\r%s\033[K", line)
				} else {
					fmt.Fprintln(p.w, line)
				}
				printed = true
			}
		}
	}()
}

// stop ends the line started last; stopping twice is not an error.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quit == nil {
		return
	}
	close(p.quit)
	<-p.done
	p.quit = nil
}
