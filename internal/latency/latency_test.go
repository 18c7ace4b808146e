package latency

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

func TestSortedPercentile(t *testing.T) {
	// 1ms..100ms: the nearest-rank p-th percentile is p ms.
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	s := Sort(d)
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{-5, 1 * time.Millisecond},
		{0, 1 * time.Millisecond},
		{1, 1 * time.Millisecond},
		{50, 50 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{99.9, 100 * time.Millisecond},
		{100, 100 * time.Millisecond},
		{250, 100 * time.Millisecond},
		{math.NaN(), 1 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := s.Percentile(tt.p); got != tt.want {
			t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got, want := s.Mean(), 50500*time.Microsecond; got != want {
		t.Errorf("Mean = %v, want %v", got, want)
	}
}

func TestSortedEmpty(t *testing.T) {
	var s Sorted
	if s.Percentile(50) != 0 || s.Min() != 0 || s.Max() != 0 || s.Mean() != 0 {
		t.Fatalf("empty Sorted must report zeros: %v", s)
	}
	if s.String() == "" {
		t.Fatal("empty String")
	}
}

func TestRecorderConcurrent(t *testing.T) {
	var r Recorder // the zero value is usable
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r.Record(time.Duration(g*each + i + 1))
			}
		})
	}
	wg.Wait()
	if got := r.Len(); got != goroutines*each {
		t.Fatalf("Len = %d, want %d", got, goroutines*each)
	}
	s := r.Snapshot()
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			t.Fatalf("snapshot not sorted at %d: %v > %v", i, s[i-1], s[i])
		}
	}
	if s.Min() != 1 || s.Max() != goroutines*each {
		t.Fatalf("min/max = %v/%v", s.Min(), s.Max())
	}
	if r.Percentile(50) != s.Percentile(50) {
		t.Fatal("Recorder.Percentile disagrees with its snapshot")
	}
	r.Record(0)
	if s.Min() != 1 {
		t.Fatal("a later Record changed an earlier snapshot")
	}
	r.Reset()
	if r.Len() != 0 || r.Percentile(99) != 0 {
		t.Fatal("Reset kept samples")
	}
}

func TestMicros(t *testing.T) {
	if got := Micros(1500 * time.Nanosecond); got != 1.5 {
		t.Fatalf("Micros = %v, want 1.5", got)
	}
}

func BenchmarkRecorderRecord(b *testing.B) {
	r := NewRecorder(b.N)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Record(time.Microsecond)
		}
	})
}

func TestRunPacedRecordsEveryOperationInOrder(t *testing.T) {
	rec := NewRecorder(10)
	var order []int
	err := RunPaced(10, 0, rec, func(i int) (func() error, error) {
		return func() error { order = append(order, i); return nil }, nil
	})
	if err != nil || rec.Len() != 10 {
		t.Fatalf("err %v, %d recorded", err, rec.Len())
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("waits out of order: %v", order)
		}
	}
}

func TestRunPacedStopsAtTheFirstSubmitError(t *testing.T) {
	rec := NewRecorder(10)
	boom := errors.New("boom")
	err := RunPaced(10, 0, rec, func(i int) (func() error, error) {
		if i == 3 {
			return nil, boom
		}
		return func() error { return nil }, nil
	})
	if !errors.Is(err, boom) || rec.Len() != 3 {
		t.Fatalf("err %v, %d recorded", err, rec.Len())
	}
}
