package bench

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/latency"
)

func TestReportDerivedNumbers(t *testing.T) {
	// 1..100 ms: the nearest-rank p-th percentile is p ms.
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	r := &Report{}
	r.fill(4000, 1000, 2*time.Second, latency.Sort(d))
	if r.Events != 4000 || r.Bytes != 4_000_000 || r.Seconds != 2 || r.EventsPerS != 2000 || r.MBPerS != 2 {
		t.Errorf("totals: %+v; want 4000 events, 4e6 bytes, 2 s, 2000 events/s, 2 MB/s", r)
	}
	if want := (LatencyMS{P50: 50, P95: 95, P99: 99, P999: 100, Max: 100}); r.Latency != want {
		t.Errorf("latency %+v, want %+v", r.Latency, want)
	}

	// No time, no rates (rather than +Inf, which JSON cannot hold).
	z := &Report{}
	z.fill(10, 1, 0, nil)
	if z.EventsPerS != 0 || z.MBPerS != 0 || z.Latency != (LatencyMS{}) {
		t.Errorf("zero elapsed: %+v", z)
	}

	// Two probes of 50 MB in 0.5 s each: 100 MB/s; syncs 1..200 ms: p99
	// 198 ms. The run's 2 MB/s and p99 99 ms against them.
	var disk diskLimits
	disk.dir = "/d"
	var syncs []time.Duration
	for i := 1; i <= 200; i++ {
		syncs = append(syncs, time.Duration(i)*time.Millisecond)
	}
	disk.add(50e6, 500*time.Millisecond, syncs[100:])
	disk.add(50e6, 500*time.Millisecond, syncs[:100])
	disk.addTo(r)
	if r.DiskDir != "/d" || *r.DiskMBPerS != 100 || *r.DiskP99MS != 198 || *r.DiskRatio != 0.02 || *r.P99DiskRate != 0.5 {
		t.Errorf("disk: dir %s, %v MB/s, p99 %v ms, ratio %v, p99 ratio %v; want /d, 100, 198, 0.02, 0.5",
			r.DiskDir, *r.DiskMBPerS, *r.DiskP99MS, *r.DiskRatio, *r.P99DiskRate)
	}
	// p50: syncs 1..200 ms give 100 ms; the run's 50 ms is half of it.
	if *r.DiskP50MS != 100 || *r.P50DiskRate != 0.5 {
		t.Errorf("disk p50 %v ms, p50 ratio %v; want 100, 0.5", *r.DiskP50MS, *r.P50DiskRate)
	}
}

// TestReportJSONKeys pins the keys of `sluice bench -o json`, which
// scripts read.
func TestReportJSONKeys(t *testing.T) {
	one := 1.0
	r := Report{Readers: 1, WriteLatency: &LatencyMS{}, DiskDir: "/d", DiskMBPerS: &one, DiskP99MS: &one, DiskRatio: &one, P99DiskRate: &one}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"bytes", "diskDir", "diskMbPerSec", "diskP99Ms", "diskRatio", "eventSize", "events", "eventsPerSec",
		"latencyMs", "mbPerSec", "mode", "p99DiskRatio", "rate", "readers", "seconds", "segments", "stream", "writeLatencyMs", "writers"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	lat := m["latencyMs"].(map[string]any)
	for _, k := range []string{"p50", "p95", "p99", "p999", "max"} {
		if _, ok := lat[k]; !ok || len(lat) != 5 {
			t.Errorf("latencyMs %v, want p50 p95 p99 p999 max", lat)
		}
	}
}
