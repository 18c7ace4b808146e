package rates

import (
	"errors"
	"math"
	"testing"
	"time"
	"unsafe"
)

var testCfg = Config{Windows: [NumWindows]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, Tick: 100 * time.Millisecond}

const sec = int64(time.Second)

// feed appends perSec*tick events of size bytes every tick from start
// for d (events counted at a tick are those of the tick before it); it
// returns the time of the last Add.
func feed(m *Meter, start int64, d time.Duration, perSec float64, size int64) int64 {
	tick := int64(testCfg.Tick)
	n := int64(perSec * testCfg.Tick.Seconds())
	m.Add(&testCfg, start, 0, 0)
	t := start
	for t+tick <= start+int64(d) {
		t += tick
		m.Add(&testCfg, t, n, n*size)
	}
	return t
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want)) }

func TestMeterTable(t *testing.T) {
	start := int64(1_000) * sec
	for _, tc := range []struct {
		name   string
		run    func(m *Meter) int64 // returns the time to look at
		events [NumWindows]float64  // expected, relative tolerance 5%
		age    time.Duration
	}{
		{"empty", func(m *Meter) int64 { return start }, [NumWindows]float64{}, 0},
		{"steady for 10 windows reaches the rate in every window", func(m *Meter) int64 {
			return feed(m, start, 80*time.Second, 100, 10)
		}, [NumWindows]float64{100, 100, 100, 100}, 80 * time.Second},
		{"one window of a steady rate: 1-1/e of it in the shortest", func(m *Meter) int64 {
			return feed(m, start, 8*time.Second, 100, 10)
		}, [NumWindows]float64{100 * (1 - math.Exp(-8)), 100 * (1 - math.Exp(-4)), 100 * (1 - math.Exp(-2)), 100 * (1 - math.Exp(-1))}, 8 * time.Second},
		{"a stop decays without appends", func(m *Meter) int64 {
			end := feed(m, start, 80*time.Second, 100, 10)
			return end + 2*sec
		}, [NumWindows]float64{100 * math.Exp(-2), 100 * math.Exp(-1), 100 * math.Exp(-0.5), 100 * math.Exp(-0.25)}, 82 * time.Second},
		{"a clock going back changes nothing", func(m *Meter) int64 {
			end := feed(m, start, 80*time.Second, 100, 10)
			m.Add(&testCfg, end-10*sec, 1_000_000, 1)
			return end
		}, [NumWindows]float64{-1, -1, -1, -1}, 80 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Meter
			now := tc.run(&m)
			r := m.Snapshot(&testCfg, now)
			if r.Age.Round(testCfg.Tick) != tc.age.Round(testCfg.Tick) && !(tc.age == 0 && r.Age == 0) {
				t.Errorf("age %v, want %v", r.Age, tc.age)
			}
			for i, want := range tc.events {
				if want < 0 {
					// Only that the rates stay finite and not negative.
					if r.Events[i] < 0 || math.IsInf(r.Events[i], 0) || math.IsNaN(r.Events[i]) {
						t.Errorf("window %d: %v events/s", i, r.Events[i])
					}
					continue
				}
				if !near(r.Events[i], want, 0.05) {
					t.Errorf("window %d: %.3f events/s, want %.3f", i, r.Events[i], want)
				}
				if !near(r.Bytes[i], want*10, 0.05) {
					t.Errorf("window %d: %.3f bytes/s, want %.3f", i, r.Bytes[i], want*10)
				}
			}
		})
	}
}

// A snapshot changes nothing: two at the same time agree, and appends
// between ticks are folded only at a tick.
func TestSnapshotIsPure(t *testing.T) {
	var m Meter
	end := feed(&m, 10*sec, 5*time.Second, 50, 1)
	before := m
	a, b := m.Snapshot(&testCfg, end+sec), m.Snapshot(&testCfg, end+sec)
	if a != b || m != before {
		t.Fatalf("snapshot changed the meter or disagreed: %+v %+v", a, b)
	}
	m.Add(&testCfg, end+1, 5, 5) // within the tick: counted, not folded
	if m.ev != before.ev || m.events != before.events+5 {
		t.Fatalf("an add within the tick folded: %+v", m)
	}
}

func TestMeterSize(t *testing.T) {
	if s := unsafe.Sizeof(Meter{}); s != 64 {
		t.Fatalf("Meter is %d bytes; the docs say 64", s)
	}
}

func TestAddAllocatesNothing(t *testing.T) {
	var m Meter
	now := int64(sec)
	if n := testing.AllocsPerRun(1000, func() { now += int64(time.Millisecond); m.Add(&testCfg, now, 1, 100) }); n != 0 {
		t.Fatalf("Add allocates %v times", n)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg Config
		ok  bool
	}{
		{DefaultConfig(), true},
		{testCfg, true},
		{Config{Windows: [NumWindows]time.Duration{time.Second, 0, 3, 4}, Tick: 1}, false},
		{Config{Windows: [NumWindows]time.Duration{2 * time.Second, time.Second, 3 * time.Second, 4 * time.Second}, Tick: 1}, false},
		{Config{Windows: testCfg.Windows, Tick: 0}, false},
		{Config{Windows: testCfg.Windows, Tick: 2 * time.Second}, false},
	} {
		err := tc.cfg.Validate()
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", tc.cfg, err)
		}
	}
	if d := DefaultConfig(); d.Tick != 5*time.Second || d.Windows[3] != 20*time.Minute {
		t.Errorf("default %+v", d)
	}
}

func BenchmarkAdd(b *testing.B) {
	var m Meter
	now := int64(sec)
	for i := 0; i < b.N; i++ {
		now += 1000
		m.Add(&testCfg, now, 1, 100)
	}
}

// Start makes a Meter without appends age at zero rates; it changes
// nothing once the Meter has counted.
func TestStart(t *testing.T) {
	var m Meter
	m.Start(10 * sec)
	r := m.Snapshot(&testCfg, 20*sec)
	if r.Age != 10*time.Second || r.Events != ([NumWindows]float64{}) {
		t.Fatalf("started, no appends: %+v", r)
	}
	var n Meter
	end := feed(&n, 10*sec, 5*time.Second, 50, 1)
	before := n
	n.Start(end + sec)
	if n != before {
		t.Fatalf("Start changed a measuring Meter")
	}
}
