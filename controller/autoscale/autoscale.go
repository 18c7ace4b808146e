package autoscale

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Policy is a stream's auto-scaling policy, in the unit its rates are
// measured in (events/s or KB/s).
type Policy struct {
	TargetRate  float64
	Unit        string // "events/s" or "KB/s", for reasons
	ScaleFactor int    // parts of a split, at least 2
	MinSegments int    // never merge below
	MaxSegments int    // never split above
}

// Segment is one active segment of the current epoch.
type Segment struct {
	Number    int64
	Low, High float64
	// Known is false when the nodes did not report the segment.
	Known bool
	// Age is how long its node has measured it.
	Age time.Duration
	// Rates are its averages in the policy's unit, one per window.
	Rates []float64
}

// Stream is what Decide needs of one stream.
type Stream struct {
	Policy   Policy
	Segments []Segment // the current epoch's, ordered by key
	// Windows are the averaging windows, shortest first (len(Rates) of
	// every known segment).
	Windows []time.Duration
	// LastScale is when the current epoch began.
	LastScale time.Time
	// Busy, if not empty, says why no scale can start now.
	Busy string
	// OpenTxns is the number of unfinished transactions.
	OpenTxns int
}

// Config holds the controller-wide rules.
type Config struct {
	// Cooldown is the least time between two scales of a stream.
	Cooldown time.Duration
	// ColdFraction of the target is the cold threshold (0.5 if 0).
	ColdFraction float64
}

// Action is what a Decision does.
type Action int

const (
	None Action = iota
	Split
	Merge
)

func (a Action) String() string {
	switch a {
	case Split:
		return "split"
	case Merge:
		return "merge"
	}
	return "none"
}

// Range is a key range [Low, High).
type Range struct{ Low, High float64 }

// Decision is Decide's answer. With Action None, Reason says why nothing
// is to be done (empty if nothing is hot or cold).
type Decision struct {
	Action    Action
	Seal      []int64 // segments to seal, by key
	NewRanges []Range // their successors, by key, covering exactly the sealed ranges
	Reason    string  // why, with the measured rates against the target
	// Blocked, if set, is why the decision cannot be carried out now
	// (unfinished transactions); the driver records it as the stream's
	// pending scale and carries it out once they have ended.
	Blocked string
}

// Decide returns the stream's next scale, or an Action None.
func Decide(cfg Config, s Stream, now time.Time) Decision {
	if s.Busy != "" {
		return Decision{Reason: s.Busy}
	}
	if since := now.Sub(s.LastScale); since < cfg.Cooldown {
		return Decision{Reason: fmt.Sprintf("cooldown: last scale %v ago, cooldown %v", since.Round(time.Millisecond), cfg.Cooldown)}
	}
	d := decide(cfg, s)
	if d.Action != None && s.OpenTxns > 0 {
		d.Blocked = fmt.Sprintf("%d unfinished transactions", s.OpenTxns)
	}
	return d
}

func decide(cfg Config, s Stream) Decision {
	p := s.Policy
	frac := cfg.ColdFraction
	if frac <= 0 {
		frac = 0.5
	}
	n := len(s.Segments)
	if n == 0 || len(s.Windows) == 0 || p.TargetRate <= 0 {
		return Decision{}
	}
	// Hot: the hottest segment above the target.
	// A segment at the minimum width is chosen only if no wider one is
	// hot (then to say why it is not split).
	hot := -1
	mw := minWidth(p) * (1 + 1e-9)
	for i, sg := range s.Segments {
		if !sg.Known || len(sg.Rates) == 0 || !(sg.Rates[0] > p.TargetRate) {
			continue
		}
		if hot < 0 {
			hot = i
			continue
		}
		h := s.Segments[hot]
		if wide, hwide := sg.High-sg.Low > mw, h.High-h.Low > mw; wide != hwide {
			if wide {
				hot = i
			}
			continue
		}
		if sg.Rates[0] > h.Rates[0] {
			hot = i
		}
	}
	// Below the minimum (raised by UpdateStream): split the widest
	// segment (the lowest key of equals), whatever the rates.
	if n < p.MinSegments && n < p.MaxSegments {
		w := 0
		for i, sg := range s.Segments {
			if sg.High-sg.Low > s.Segments[w].High-s.Segments[w].Low {
				w = i
			}
		}
		sg := s.Segments[w]
		parts := max(min(p.ScaleFactor, p.MinSegments-n+1, p.MaxSegments-n+1), 2)
		d := Decision{Action: Split, Seal: []int64{sg.Number}, NewRanges: splitRange(sg.Low, sg.High, parts)}
		if narrow(d.NewRanges) {
			return Decision{Reason: fmt.Sprintf("below the minimum of %d segments (%d), but the widest one, [%v, %v), is too narrow to split", p.MinSegments, n, sg.Low, sg.High)}
		}
		d.Reason = fmt.Sprintf("%d segments, below the policy's minimum of %d: the widest, segment %d, split into %d", n, p.MinSegments, sg.Number, parts)
		return d
	}
	var notSplit Decision // why a hot segment is not split
	if hot >= 0 {
		sg := s.Segments[hot]
		parts := min(p.ScaleFactor, p.MaxSegments-n+1)
		why := fmt.Sprintf("segment %d hot: %s %s over %v, target %s", sg.Number, num(sg.Rates[0]), p.Unit, s.Windows[0], num(p.TargetRate))
		d := Decision{Action: Split, Seal: []int64{sg.Number}, NewRanges: splitRange(sg.Low, sg.High, max(parts, 1))}
		if narrow(d.NewRanges) {
			notSplit.Reason = why + fmt.Sprintf("; not split: its key range [%v, %v) is too narrow for %d parts", sg.Low, sg.High, parts)
		}
		if parts < 2 {
			notSplit.Reason = why + fmt.Sprintf("; not split: the stream has %d segments, the maximum is %d", n, p.MaxSegments)
		}
		if notSplit.Reason == "" && sg.High-sg.Low <= mw {
			// One routing key above the target cannot be spread: halving
			// its segment again and again (and merging cold neighbours
			// to make room at the maximum) would only scale for nothing.
			notSplit.Reason = why + fmt.Sprintf("; not split: its key range [%v, %v) is at the minimum width %v (1/maxSegments); one hot routing key cannot be spread", sg.Low, sg.High, minWidth(p))
		}
		if notSplit.Reason == "" {
			d.Reason = why + fmt.Sprintf("; split into %d", parts)
			return d
		}
	}
	// Cold neighbours (also when a hot segment cannot be split for the
	// maximum: a merge makes room for it; a hot segment at the minimum
	// width gets no room made, the pairs merge only because they are
	// cold).
	if n <= p.MinSegments {
		return notSplit
	}
	longest := s.Windows[len(s.Windows)-1]
	cold := make([]bool, n)
	for i, sg := range s.Segments {
		cold[i] = isCold(sg, p.TargetRate*frac, longest)
	}
	best := -1
	for i := 0; i+1 < n; i++ {
		if !cold[i] || !cold[i+1] {
			continue
		}
		if best < 0 || s.Segments[i].Rates[0]+s.Segments[i+1].Rates[0] < s.Segments[best].Rates[0]+s.Segments[best+1].Rates[0] {
			best = i
		}
	}
	if best < 0 {
		return notSplit
	}
	a, b := s.Segments[best], s.Segments[best+1]
	return Decision{Action: Merge, Seal: []int64{a.Number, b.Number}, NewRanges: []Range{{a.Low, b.High}},
		Reason: fmt.Sprintf("segments %d and %d cold: at most %s and %s %s over every window up to %v, below %s (%s of the target %s); merged",
			a.Number, b.Number, num(maxOf(a.Rates)), num(maxOf(b.Rates)), p.Unit, longest, num(p.TargetRate*frac), num(frac), num(p.TargetRate))}
}

// minWidth is the narrowest key range a hot segment may have and still be
// split: 1/MaxSegments, the width of each segment of a stream spread
// evenly over the maximum. A segment that narrow and still hot carries
// too few routing keys for a split to spread its load.
func minWidth(p Policy) float64 {
	if p.MaxSegments < 1 {
		return 0
	}
	return 1 / float64(p.MaxSegments)
}

// narrow reports whether a range of rs is empty (floating point has run
// out of digits to cut).
func narrow(rs []Range) bool {
	for _, r := range rs {
		if !(r.Low < r.High) {
			return true
		}
	}
	return false
}

func isCold(sg Segment, threshold float64, longest time.Duration) bool {
	if !sg.Known || len(sg.Rates) == 0 || sg.Age < longest {
		return false
	}
	for _, r := range sg.Rates {
		if !(r < threshold) {
			return false
		}
	}
	return true
}

func maxOf(rs []float64) float64 {
	m := math.Inf(-1)
	for _, r := range rs {
		m = max(m, r)
	}
	return m
}

// splitRange cuts [low, high) into parts ranges of equal width; the ends
// are exactly low and high.
func splitRange(low, high float64, parts int) []Range {
	out := make([]Range, parts)
	at := low
	for i := range out {
		next := low + (high-low)*float64(i+1)/float64(parts)
		if i == parts-1 {
			next = high
		}
		out[i] = Range{at, next}
		at = next
	}
	return out
}

// num formats a rate briefly: up to one decimal, no trailing zeros.
func num(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}
