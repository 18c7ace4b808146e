package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestNewBackoffDoublesToTheLimit(t *testing.T) {
	for _, tc := range []struct {
		initial, limit time.Duration
		want           []time.Duration
	}{
		{5 * time.Millisecond, 40 * time.Millisecond, []time.Duration{5, 10, 20, 40, 40, 40}},
		{50 * time.Millisecond, 120 * time.Millisecond, []time.Duration{50, 100, 120, 120}},
		{time.Second, time.Second, []time.Duration{1000, 1000, 1000}},
		{time.Second, time.Millisecond, []time.Duration{1000, 1000}}, // limit below initial
	} {
		b := NewBackoff(tc.initial, tc.limit)
		for round := 0; round < 2; round++ { // Reset starts again
			for i, w := range tc.want {
				if got := b.NextBackOff(); got != w*time.Millisecond {
					t.Fatalf("NewBackoff(%v, %v) round %d wait %d = %v, want %v", tc.initial, tc.limit, round, i, got, w*time.Millisecond)
				}
			}
			b.Reset()
		}
	}
}

func TestNewJitteredStaysWithinBoundsAndGrows(t *testing.T) {
	for _, tc := range []struct{ lo, hi time.Duration }{
		{10 * time.Millisecond, 2 * time.Second}, // the writer's default
		{20 * time.Millisecond, 2 * time.Second}, // the reader's
		{time.Millisecond, 50 * time.Millisecond},
		{time.Millisecond, 2 * time.Millisecond},
		{100, 103}, // nanoseconds: too close for jitter
	} {
		b := NewJittered(tc.lo, tc.hi)
		var last []time.Duration
		for i := 0; i < 200; i++ {
			d := b.NextBackOff()
			if d < tc.lo || d > tc.hi {
				t.Fatalf("NewJittered(%v, %v) wait %d = %v, outside the bounds", tc.lo, tc.hi, i, d)
			}
			if i >= 100 {
				last = append(last, d)
			}
		}
		// By then the interval is capped: no wait is below a third of hi.
		for _, d := range last {
			if d < tc.hi/3 {
				t.Fatalf("NewJittered(%v, %v): wait %v after 100 retries, want >= %v", tc.lo, tc.hi, d, tc.hi/3)
			}
		}
	}
}

func TestNewJitteredFirstWaitIsNearLo(t *testing.T) {
	lo, hi := 10*time.Millisecond, 2*time.Second
	for i := 0; i < 100; i++ {
		if d := NewJittered(lo, hi).NextBackOff(); d > 2*lo+1 {
			t.Fatalf("first wait %v, want at most twice lo (%v)", d, 2*lo)
		}
	}
}

func TestNewJitteredJitters(t *testing.T) {
	b := NewJittered(10*time.Millisecond, 2*time.Second)
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		seen[b.NextBackOff()] = true
	}
	if len(seen) < 10 {
		t.Fatalf("50 waits took only %d distinct values: no jitter", len(seen))
	}
}

func TestNewJitteredEqualBoundsIsConstant(t *testing.T) {
	b := NewJittered(time.Millisecond, time.Millisecond)
	for i := 0; i < 10; i++ {
		if d := b.NextBackOff(); d != time.Millisecond {
			t.Fatalf("wait %d = %v, want 1ms", i, d)
		}
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on an ended context = %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep(1ms) = %v, want nil", err)
	}
}

func TestEveryRunsUntilItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	boom := errors.New("boom")
	steps, failures := 0, 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func(context.Context) error {
			steps++
			if steps == 3 {
				cancel() // the error of a step cut short is no failure
			}
			return boom
		}, func(err error) {
			if !errors.Is(err, boom) {
				t.Errorf("failed(%v), want %v", err, boom)
			}
			failures++
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
	if steps != 3 || failures != 2 {
		t.Fatalf("steps, failures = %d, %d; want 3, 2", steps, failures)
	}
}
