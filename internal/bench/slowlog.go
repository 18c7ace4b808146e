package bench

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"time"
)

// slowLog writes a line for each event of the timed run slower than
// Config.SlowOver (Config.SlowLog): what was measured ("ack": write to
// acknowledgement; "e2e": write to read), when the event was sent, in ms
// after the writers started and as the wall clock in Unix ms (to set
// beside a trace of the server or of the block layer over the same
// seconds), and its latency in ms:
//
//	ack 1234.567 1764672000123.456 5.432
//
// A run's p99 says that some events were slow; these lines say when, so
// that a stall can be found in the other traces of the same moment.
type slowLog struct {
	mu   sync.Mutex
	w    *bufio.Writer
	over time.Duration
	err  error // the first write error, reported by flush
}

func newSlowLog(w io.Writer, over time.Duration) *slowLog {
	return &slowLog{w: bufio.NewWriter(w), over: over}
}

// record notes an event of l sent at sent (time.Since(l.base)) that took d,
// if d is over the threshold. A nil slowLog records nothing.
func (s *slowLog) record(kind string, l *load, sent, d time.Duration) {
	if s == nil || d <= s.over {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	wall := float64(l.base.Add(sent).UnixNano()) / 1e6
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := fmt.Fprintf(s.w, "%s %.3f %.3f %.3f\n", kind, ms(sent-time.Duration(l.start.Load())), wall, ms(d)); err != nil && s.err == nil {
		s.err = err
	}
}

// flush writes out what is buffered and reports the first write error.
func (s *slowLog) flush() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.w.Flush(); err != nil && s.err == nil {
		s.err = err
	}
	if s.err != nil {
		return fmt.Errorf("bench: --slow-log: %w", s.err)
	}
	return nil
}
