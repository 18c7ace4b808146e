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

// foldCPU sets each row's busy and steal percentages from the samples
// within its second (times from the rows' second 0): from the first
// sample at or after the second's start to the last before its end. A
// second with fewer than two samples in it gets none.
func foldCPU(rows []SecondRow, samples []cpuSample) {
	for i := range rows {
		from, to := time.Duration(rows[i].Second)*time.Second, time.Duration(rows[i].Second+1)*time.Second
		var first, last *cpuSample
		for j := range samples {
			if at := samples[j].at; at >= from && at < to {
				if first == nil {
					first = &samples[j]
				}
				last = &samples[j]
			}
		}
		if first == nil || first == last || first.t.Total() == last.t.Total() {
			continue
		}
		sh := cpustat.Between(first.t, last.t)
		busy, steal := 100*sh.Busy, 100*sh.Steal
		rows[i].BusyPct, rows[i].StealPct = &busy, &steal
	}
}
