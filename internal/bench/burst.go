package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
)

// The burst of Config.AfterBurst: BurstWriters writers on a stream of as
// many segments, unpaced, with BurstEventSize events (large, so the
// client's cost per byte does not hold the burst back).
const (
	BurstWriters         = 8
	BurstEventSize int64 = 64 << 10
)

// DefaultTierPoll is how often a Write or E2E run asks the controller for
// the node's tier-2 state (Config.TierPoll).
const DefaultTierPoll = 100 * time.Millisecond

// BurstReport is the burst that came before the timed run
// (Config.AfterBurst): what it wrote, how fast, and how long sealing and
// deleting its stream took (the timed run starts right after).
type BurstReport struct {
	Stream   string  `json:"stream"`
	Writers  int     `json:"writers"`
	Events   int64   `json:"events"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	MBPerS   float64 `json:"mbPerSec"`
	DeleteMS float64 `json:"deleteMs"` // seal + delete of its stream
}

// burst writes b.AfterBurst bytes through BurstWriters writers to a new
// stream of BurstWriters segments as fast as they go, then seals and
// deletes that stream: the node is left with the burst's bytes to tier
// and to delete. Nothing when AfterBurst is 0.
func (b *bench) burst(ctx context.Context) (*BurstReport, error) {
	if b.AfterBurst <= 0 {
		return nil, nil
	}
	c := b.Config
	c.Stream, c.Streams, c.Clients, c.Keep = "", 1, 0, false
	c.Segments, c.Writers, c.EventSize, c.Rate = BurstWriters, BurstWriters, BurstEventSize, 0
	c.Duration, c.Count = 0, (b.AfterBurst+BurstEventSize-1)/BurstEventSize
	s, err := prepare(ctx, b.ctl, c)
	if err != nil {
		return nil, fmt.Errorf("--after-burst: %w", err)
	}
	deleted := false
	defer func() {
		if !deleted {
			cleanup(b.ctl, c, s)
		}
	}()
	bb := &bench{Config: c, stream: s, streams: []stream{s}, ctl: b.ctl, prog: b.prog}
	l := newLoad(int(c.Count))
	b.prog.label = "burst: "
	b.prog.start(&l.events, &l.bytes, l.ackHist)
	n, elapsed, err := bb.runWriters(ctx, l, false)
	b.prog.stop()
	b.prog.label = ""
	if err != nil {
		return nil, fmt.Errorf("--after-burst %s: %w", s, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("--after-burst: %w", err)
	}
	r := &BurstReport{Stream: s.String(), Writers: c.Writers, Events: n, Bytes: n * c.EventSize, Seconds: elapsed.Seconds()}
	if r.Seconds > 0 {
		r.MBPerS = float64(r.Bytes) / r.Seconds / 1e6
	}
	t := time.Now()
	deleted = true
	if err := cleanup(b.ctl, c, s); err != nil {
		return nil, fmt.Errorf("--after-burst: %w", err)
	}
	r.DeleteMS = millis(time.Since(t))
	return r, nil
}

// tierPoller asks the controller for every node's tier-2 state every
// interval, from start until stop, and keeps the backlog over all
// containers: the sum of their untiered bytes and the largest lag.
type tierPoller struct {
	ctl      *ctlclient.Client
	base     time.Time // samples' times are since base
	interval time.Duration

	mu      sync.Mutex
	samples []tierSample
	tiers   bool // some node reported a container with tier 2

	cancel context.CancelFunc
	done   chan struct{}
}

// startTierPoller starts polling; nil if interval is 0. Its owner calls
// stop.
func startTierPoller(ctx context.Context, ctl *ctlclient.Client, base time.Time, interval time.Duration) *tierPoller {
	if interval <= 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &tierPoller{ctl: ctl, base: base, interval: interval, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			p.poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *tierPoller) poll(ctx context.Context) {
	l, err := p.ctl.NodeTiers(ctx)
	at := time.Since(p.base)
	if err != nil {
		return // a poll that fails is no sample; the lag shows in the next
	}
	s := tierSample{at: at}
	n := 0
	for _, node := range l.Nodes {
		for _, c := range node.Containers {
			n++
			s.untiered += c.UntieredBytes
			s.lag = max(s.lag, time.Duration(c.LagMillis)*time.Millisecond)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n > 0 {
		p.tiers = true
		p.samples = append(p.samples, s)
	}
}

// stop ends the polling and returns the samples (times since base), or
// nil if no node has tier 2. Stopping a nil poller returns nil.
func (p *tierPoller) stop() []tierSample {
	if p == nil {
		return nil
	}
	p.cancel()
	<-p.done
	p.mu.Lock()
	polled := len(p.samples) > 0
	p.mu.Unlock()
	if !polled {
		// A run shorter than a poll (or polls cut short): one more, so
		// the run has the backlog at its end at least.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p.poll(ctx)
		cancel()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tiers {
		return nil
	}
	return p.samples
}
