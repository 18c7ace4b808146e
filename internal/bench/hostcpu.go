package bench

import (
	"context"
	"time"

	"github.com/sluice-streams/sluice/internal/cpustat"
)

// hostCPUInterval is how often a Write or E2E run samples the machine's
// CPU time (internal/cpustat): a small file read, enough samples for each
// second's row.
const hostCPUInterval = 100 * time.Millisecond

// HostCPU is how the machine's CPUs spent the timed run, in percent of
// all their time (internal/cpustat): StealPct is what the host of a
// virtual machine took, which a latency run pays for without the guest's
// load showing it.
type HostCPU struct {
	BusyPct   float64 `json:"busyPct"`
	IOWaitPct float64 `json:"iowaitPct"`
	IdlePct   float64 `json:"idlePct"`
	StealPct  float64 `json:"stealPct"`
}

func hostCPU(s cpustat.Shares) *HostCPU {
	return &HostCPU{BusyPct: 100 * s.Busy, IOWaitPct: 100 * s.IOWait, IdlePct: 100 * s.Idle, StealPct: 100 * s.Steal}
}

// cpuSample is one sample of the CPU counters, at (from the load's base,
// then from the timed run's start).
type cpuSample struct {
	at time.Duration
	t  cpustat.Times
}

// cpuSampler samples the CPU counters every interval until stopped.
type cpuSampler struct {
	base    time.Time
	cancel  context.CancelFunc
	done    chan struct{}
	samples []cpuSample // written by the sampling goroutine until done
}

// startCPUSampler starts sampling; nil where the counters cannot be read
// (not Linux): the report then has no host CPU figures.
func startCPUSampler(base time.Time, interval time.Duration) *cpuSampler {
	first, err := cpustat.Read()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &cpuSampler{base: base, cancel: cancel, done: make(chan struct{}),
		samples: []cpuSample{{at: time.Since(base), t: first}}}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *cpuSampler) sample() {
	if t, err := cpustat.Read(); err == nil {
		s.samples = append(s.samples, cpuSample{at: time.Since(s.base), t: t})
	}
}

// stop ends the sampling, takes a last sample and returns them all (times
// since base); nil for a nil sampler.
func (s *cpuSampler) stop() []cpuSample {
	if s == nil {
		return nil
	}
	s.cancel()
	<-s.done
	s.sample()
	return s.samples
}

// hostCPUOf is the shares from the first sample to the last, or nil
// with fewer than two or no clock tick between them.
func hostCPUOf(samples []cpuSample) *HostCPU {
	if len(samples) < 2 || samples[0].t.Total() == samples[len(samples)-1].t.Total() {
		return nil
	}
	return hostCPU(cpustat.Between(samples[0].t, samples[len(samples)-1].t))
}

// rowIndex maps each row's second to its index in rows.
func rowIndex(rows []SecondRow) map[int]int {
	byRow := make(map[int]int, len(rows))
	for i, r := range rows {
		byRow[r.Second] = i
	}
	return byRow
}

// foldCPU sets each row's busy and steal percentages from the samples
// within its second (times from the rows' second 0, in order): from the
// first sample at or after the second's start to the last before its end.
// A second with fewer than two samples in it, or no clock tick between
// them, gets none.
func foldCPU(rows []SecondRow, samples []cpuSample) {
	byRow := rowIndex(rows)
	for j := 0; j < len(samples); {
		if samples[j].at < 0 { // before the rows' second 0
			j++
			continue
		}
		sec := int(samples[j].at / time.Second)
		k := j // the last sample of the same second
		for k+1 < len(samples) && int(samples[k+1].at/time.Second) == sec {
			k++
		}
		first, last := samples[j], samples[k]
		j = k + 1
		i, ok := byRow[sec]
		if !ok || first.t.Total() == last.t.Total() {
			continue
		}
		sh := cpustat.Between(first.t, last.t)
		busy, steal := 100*sh.Busy, 100*sh.Steal
		rows[i].BusyPct, rows[i].StealPct = &busy, &steal
	}
}
