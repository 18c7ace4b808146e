package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// A summary reads the output of scripts/bench-tail.sh: for each run, a
// "# run: NAME" line, "# load: ..." lines (/proc/loadavg before and
// after it) and the run's report, one JSON line (`sluice bench -o
// json`). Summarize gives, per run name and measure, the min, median and
// max over the rounds, with the target for the measure.

// SummaryRow is one measure of one run over the rounds.
type SummaryRow struct {
	Run     string  `json:"run"`
	Measure string  `json:"measure"`
	Target  string  `json:"target,omitempty"` // "<= 3", or "" for context
	Met     *bool   `json:"met,omitempty"`    // the max within the target
	N       int     `json:"n"`
	Min     float64 `json:"min"`
	Median  float64 `json:"median"`
	Max     float64 `json:"max"`
}

// QuietCanaryMS is the slowest canary sync a second may hold and still
// count as one where the disk was quiet (bench summarize).
const QuietCanaryMS = 1

// measure is one figure a report gives, with its bound (0: none).
type measure struct {
	name  string
	bound float64
	v     float64
}

// measures lists what a report shows against the targets.
// cacheBytes is the node's --cache-size (0: no RSS target).
func measures(r *Report, cacheBytes int64) []measure {
	var ms []measure
	add := func(name string, bound, v float64) { ms = append(ms, measure{name, bound, v}) }
	ack := r.Latency
	if r.Mode == E2E && r.WriteLatency != nil {
		ack = *r.WriteLatency
		add("e2e p50 ms", 1, r.Latency.P50)
		add("e2e p99 ms", 3, r.Latency.P99)
	}
	if r.DiskP50MS != nil && *r.DiskP50MS > 0 && *r.DiskP99MS > 0 {
		add("ack p50 / disk p50", TargetP50DiskRatio, ack.P50 / *r.DiskP50MS)
		add("ack p99 / disk p99", TargetP99DiskRatio, ack.P99 / *r.DiskP99MS)
		add("disk p50 ms", 0, *r.DiskP50MS)
		add("disk p99 ms", 0, *r.DiskP99MS)
	}
	if r.DiskGroupP99MS != nil && *r.DiskGroupP99MS > 0 {
		// The disk alone at the run's load: no log on it does better.
		add("ideal log p99 ms", 0, *r.DiskGroupP99MS)
		add("ack p99 / ideal log p99", 0, ack.P99 / *r.DiskGroupP99MS)
	}
	if r.DiskCanary != nil {
		// The disk in the run's own seconds: where its canary stayed
		// quick, a slow second is the system's, not the disk's.
		add("disk canary p99 ms", 0, r.DiskCanary.P99)
		quiet, worst := 0, 0.0
		for _, x := range r.PerSecond {
			if x.Events > 0 && x.DiskMaxMS != nil && *x.DiskMaxMS < QuietCanaryMS {
				quiet++
				worst = max(worst, x.P99)
			}
		}
		if g := r.DiskCanaryGrid; g != nil {
			add("disk canary stalls on a 100 ms grid, share", 0, g.Share)
		}
		add("seconds with the disk canary under 1 ms", 0, float64(quiet))
		if quiet > 0 {
			add("those seconds: worst p99 ms", 0, worst)
		}
	}
	if h := r.HostCPU; h != nil {
		add("host cpu stolen %", 0, h.StealPct)
	}
	// The worst second: a stall (the disk's, or the host's) shows as one
	// second whose slowest event is far above the others'.
	var worstMax, worstSteal float64
	stole := false
	for _, x := range r.PerSecond {
		if x.Events > 0 {
			worstMax = max(worstMax, x.Max)
		}
		if x.StealPct != nil {
			worstSteal, stole = max(worstSteal, *x.StealPct), true
		}
	}
	if len(r.PerSecond) > 0 {
		add("worst second: max ms", 0, worstMax)
	}
	if stole {
		add("worst second: host cpu stolen %", 0, worstSteal)
	}
	if w := r.Windows; w != nil {
		for _, win := range []struct {
			name string
			w    Window
		}{{"first 2 s", w.First}, {"from 2 s", w.After}} {
			if win.w.Events == 0 {
				continue
			}
			if r.Mode == E2E {
				add(win.name+": e2e p50 ms", 1, win.w.Latency.P50)
				add(win.name+": e2e p99 ms", 3, win.w.Latency.P99)
			} else if r.DiskP50MS != nil && *r.DiskP50MS > 0 && *r.DiskP99MS > 0 {
				add(win.name+": ack p50 / disk p50", TargetP50DiskRatio, win.w.Latency.P50 / *r.DiskP50MS)
				add(win.name+": ack p99 / disk p99", TargetP99DiskRatio, win.w.Latency.P99 / *r.DiskP99MS)
			}
		}
	}
	if b := r.Burst; b != nil {
		add("burst MB/s", 0, b.MBPerS)
	}
	if t := r.TierLag; t != nil && t.BoundMS > 0 {
		add("tier-2 lag / --tier-max-lag", 1, t.LagBoundRatio)
	}
	if m := r.Server; m != nil && m.PeakRSSBytes > 0 {
		bound := 0.0
		if cacheBytes > 0 {
			bound = float64(cacheBytes+128<<20) / (1 << 20)
		}
		add("server peak RSS MiB", bound, float64(m.PeakRSSBytes)/(1<<20))
	}
	if w := r.AckWake; w != nil {
		add("ack wake-up p50 ms (the benchmark's)", 0, w.P50)
		add("ack wake-up p99 ms (the benchmark's)", 0, w.P99)
	}
	add("MB/s", 0, r.MBPerS)
	return ms
}

// Summarize reads a bench-tail output from in. Rows come in the order
// their run and measure first appear.
func Summarize(in io.Reader, cacheBytes int64) ([]SummaryRow, error) {
	type key struct{ run, measure string }
	var order []key
	vals := map[key][]float64{}
	bounds := map[key]float64{}
	put := func(k key, bound, v float64) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = append(vals[k], v)
		bounds[k] = bound
	}
	run := ""
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "":
		case strings.HasPrefix(text, "# run: "):
			run = strings.TrimPrefix(text, "# run: ")
		case strings.HasPrefix(text, "# load: ") || strings.HasPrefix(text, "# load after: "):
			// "# load: 0.52 0.80 0.91 2/94 4258": the 1-minute average.
			when, rest, _ := strings.Cut(strings.TrimPrefix(text, "# "), ": ")
			if f := strings.Fields(rest); len(f) > 0 {
				if v, err := strconv.ParseFloat(f[0], 64); err == nil {
					put(key{run, strings.Replace(when, "load", "load (1 min)", 1)}, 0, v)
				}
			}
		case strings.HasPrefix(text, "#"):
		default:
			var r Report
			if err := json.Unmarshal([]byte(text), &r); err != nil {
				return nil, fmt.Errorf("line %d: not a report: %w", line, err)
			}
			for _, m := range measures(&r, cacheBytes) {
				put(key{run, m.name}, m.bound, m.v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]SummaryRow, 0, len(order))
	for _, k := range order {
		v := slices.Clone(vals[k])
		slices.Sort(v)
		row := SummaryRow{Run: k.run, Measure: k.measure, N: len(v), Min: v[0], Max: v[len(v)-1], Median: median(v)}
		if b := bounds[k]; b > 0 {
			met := row.Max <= b
			row.Target, row.Met = "<= "+strconv.FormatFloat(b, 'f', -1, 64), &met
		}
		out = append(out, row)
	}
	return out, nil
}

// median of sorted v (the mean of the middle two for an even count).
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
