package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
)

// load is a writer and a reader that keep going while a test changes the
// cluster under them: the writer writes one event at a time over 16 keys,
// each event "<key>:<n>", and waits for its ack; the reader follows the
// stream and checks each key's events arrive once and in order.
type load struct {
	t      *testing.T
	w      *client.Writer
	r      *client.Reader
	stop   chan struct{}
	wdone  chan struct{}
	rdone  chan struct{}
	rstop  context.CancelFunc
	mu     sync.Mutex
	acked  map[string]int // key -> events acknowledged
	total  int
	wait   time.Duration // the longest wait for one ack
	werr   error
	got    map[string]int // key -> events read
	read   int
	rerr   error
	closed bool
}

// startLoad starts writing to and reading scope/stream through cl.
func startLoad(t *testing.T, ctx context.Context, cl *client.Client, scope, stream string) *load {
	t.Helper()
	w, err := cl.NewWriter(ctx, scope, stream)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cl.NewReader(ctx, scope, stream)
	if err != nil {
		t.Fatal(err)
	}
	l := &load{t: t, w: w, r: r, stop: make(chan struct{}), wdone: make(chan struct{}), rdone: make(chan struct{}),
		acked: map[string]int{}, got: map[string]int{}}
	rctx, rstop := context.WithCancel(ctx)
	l.rstop = rstop
	go l.write(ctx)
	go l.follow(rctx)
	t.Cleanup(l.close)
	return l
}

func (l *load) write(ctx context.Context) {
	defer close(l.wdone)
	seq := map[string]int{}
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		key := fmt.Sprintf("k%d", i%16)
		t0 := time.Now()
		ack, err := l.w.Write(ctx, key, []byte(fmt.Sprintf("%s:%d", key, seq[key])))
		if err == nil {
			err = ack.Wait(ctx)
		}
		l.mu.Lock()
		if err != nil {
			l.werr = err
			l.mu.Unlock()
			return
		}
		l.acked[key] = seq[key] + 1
		l.total++
		l.wait = max(l.wait, time.Since(t0))
		l.mu.Unlock()
		seq[key]++
	}
}

func (l *load) follow(ctx context.Context) {
	defer close(l.rdone)
	for {
		ev, err := l.r.ReadNext(ctx)
		if err != nil {
			if ctx.Err() == nil {
				l.mu.Lock()
				l.rerr = err
				l.mu.Unlock()
			}
			return
		}
		key, num, _ := strings.Cut(string(ev.Data), ":")
		i, _ := strconv.Atoi(num)
		l.mu.Lock()
		if i != l.got[key] && l.rerr == nil {
			l.rerr = fmt.Errorf("key %s: event %d after %d events (duplicate or out of order)", key, i, l.got[key])
		}
		l.got[key]++
		l.read++
		l.mu.Unlock()
	}
}

// progress waits until the writer got 50 more acks than now, failing the
// test if the writer or the reader failed.
func (l *load) progress(what string) {
	l.t.Helper()
	l.mu.Lock()
	from := l.total
	l.mu.Unlock()
	waitFor(l.t, "the writer to go on "+what, waitTimeout, func() (bool, string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.werr != nil || l.rerr != nil {
			l.t.Fatalf("%s: writer: %v; reader: %v", what, l.werr, l.rerr)
		}
		return l.total > from+50, fmt.Sprintf("%d acked", l.total)
	})
}

// finish stops the writer, waits until the reader has read every
// acknowledged event, and checks that each key's events were read once and
// in order, and no more than were acknowledged. It returns the number of
// events and the longest wait for one ack.
func (l *load) finish(ctx context.Context) (int, time.Duration) {
	l.t.Helper()
	close(l.stop)
	<-l.wdone
	if err := l.w.Close(ctx); err != nil {
		l.t.Fatal(err)
	}
	l.mu.Lock()
	total, werr := l.total, l.werr
	l.mu.Unlock()
	if werr != nil {
		l.t.Fatalf("writer: %v", werr)
	}
	waitFor(l.t, "the reader to read every acknowledged event", waitTimeout, func() (bool, string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.rerr != nil {
			l.t.Fatalf("reader: %v", l.rerr)
		}
		return l.read >= total, fmt.Sprintf("%d of %d read", l.read, total)
	})
	// Nothing beyond the acknowledged events may come: give the reader a
	// second to show one (there is no event to wait for).
	extra := time.NewTimer(time.Second)
	defer extra.Stop()
	select {
	case <-l.rdone:
	case <-extra.C:
	}
	l.close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rerr != nil {
		l.t.Fatalf("reader: %v", l.rerr)
	}
	if l.read != total {
		l.t.Fatalf("read %d events, %d acknowledged", l.read, total)
	}
	for k, n := range l.acked {
		if l.got[k] != n {
			l.t.Fatalf("key %s: read %d events, %d acknowledged", k, l.got[k], n)
		}
	}
	return total, l.wait
}

func (l *load) close() {
	if l.closed {
		return
	}
	l.closed = true
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.rstop()
	<-l.rdone
	<-l.wdone
	l.r.Close()
}
