package controller

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// splitLocator sends the segments of streams named in hung to addr hung,
// the rest to the real node.
type splitLocator struct {
	node, hung string
	streams    []string
}

func (l splitLocator) NodeFor(_ context.Context, segment string) (string, error) {
	for _, s := range l.streams {
		if strings.HasPrefix(segment, s+"/") {
			return l.hung, nil
		}
	}
	return l.node, nil
}

// hungNode accepts connections and never answers, as a node process that
// is stopped (SIGSTOP) or wedged: the kernel still accepts and takes bytes.
func hungNode(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// TestReview2HungNodeBlocksAutoScalingOfOtherStreams: one node that
// accepts connections but never answers holds the segments of stream
// sc/a. The leader's loop calls AutoScaleStep with its leadership context,
// which has no deadline; GetSegmentRates (and the dial's Hello) wait for
// ever, so the step never returns and stream sc/b, hot on a healthy node,
// is never split again by this leader: no request of the auto-scaler is
// bounded in time.
func TestReview2HungNodeBlocksAutoScalingOfOtherStreams(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	setup := e.service(nil)
	must(t, setup.CreateScope(ctx, "sc"))
	for _, name := range []string{"a", "b"} {
		_, err := setup.CreateStream(ctx, byRate("sc", name, 1, 1))
		must(t, err)
	}
	makeHot(t, e, "sc/b/0.#epoch.0")
	e.clock.advance(11 * time.Minute)

	segs := NewNodeSegments(splitLocator{node: e.addr, hung: hungNode(t), streams: []string{"sc/a"}})
	s := New(e.store, segs, Options{Clock: e.clock.now, Logger: quietLog(), TxnSweepInterval: -1,
		AutoScale: AutoScaleOptions{Interval: -1}})
	t.Cleanup(func() {
		s.Close()
		segs.Close()
	})
	loopCtx, stop := context.WithCancel(context.Background()) // as the leader's: no deadline
	defer stop()
	done := make(chan error, 1)
	go func() { done <- s.AutoScaleStep(loopCtx) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		stop()
		<-done
		t.Fatalf("AutoScaleStep still waits for the hung node after 10 s; stream sc/b has %d epochs", len(record(t, e.store, "sc", "b").Epochs))
	}
	if n := len(record(t, e.store, "sc", "b").Epochs); n != 2 {
		t.Fatalf("sc/b, hot on a healthy node: %d epochs, want 2 (split)", n)
	}
}
