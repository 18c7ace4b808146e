package retry

import (
	"context"
	"math"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// maxJitter is NewJittered's widest randomization: a wait is drawn from
// [interval·(1-maxJitter), interval·(1+maxJitter)].
const maxJitter = 1.0 / 3

// NewBackoff returns a backoff whose waits are initial, then double each
// time up to limit, without jitter. A limit below initial is taken as
// initial.
func NewBackoff(initial, limit time.Duration) *backoff.ExponentialBackOff {
	b := &backoff.ExponentialBackOff{
		InitialInterval: initial,
		Multiplier:      2,
		MaxInterval:     max(limit, initial),
	}
	b.Reset()
	return b
}

// NewJittered returns a backoff whose waits grow twofold from lo towards
// hi, each drawn at random within a third of its interval, and never
// shorter than lo nor longer than hi. When lo and hi are too close for
// that much jitter it narrows; when they are equal (or hi is below lo)
// every wait is lo.
func NewJittered(lo, hi time.Duration) *backoff.ExponentialBackOff {
	if hi <= lo || lo <= 0 {
		return NewBackoff(lo, hi)
	}
	// The library draws a wait from [c·(1-r), c·(1+r)+1ns] for an interval
	// c that doubles from InitialInterval up to MaxInterval. Choosing
	// InitialInterval just above lo/(1-r) and MaxInterval just below
	// (hi-1ns)/(1+r) keeps every wait within [lo, hi]; r at most half of
	// (hi-lo)/(hi+lo) leaves room for InitialInterval <= MaxInterval.
	r := min(maxJitter, float64(hi-lo)/float64(hi+lo)/2)
	initial := time.Duration(math.Ceil(float64(lo)/(1-r))) + 1
	limit := time.Duration(float64(hi-1)/(1+r)) - 1
	if initial > limit { // only for bounds a few nanoseconds apart
		return NewBackoff(lo, hi)
	}
	b := &backoff.ExponentialBackOff{
		InitialInterval:     initial,
		RandomizationFactor: r,
		Multiplier:          2,
		MaxInterval:         limit,
	}
	b.Reset()
	return b
}

// Sleep waits d, or less if ctx ends first: then it returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Every runs step every interval until ctx ends, the first time one
// interval after it is called, and hands each error step returns to failed
// unless ctx has ended meanwhile (the error of a step cut short is no
// failure). A failed step is simply tried again at the next interval.
func Every(ctx context.Context, interval time.Duration, step func(context.Context) error, failed func(error)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := step(ctx); err != nil && ctx.Err() == nil {
			failed(err)
		}
	}
}
