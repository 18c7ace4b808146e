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
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// probeOf returns a segment name of container i.
func probeOf(i int) string {
	for n := int64(0); ; n++ {
		if s := protocol.SegmentName("probe", "p", n, 0); protocol.ContainerOf(s, containers) == i {
			return s
		}
	}
}

func startTieredNode(t *testing.T, zk, id, dir, tier2 string) (*proctest.Proc, string) {
	t.Helper()
	p := start(t, "node "+id, nil, "--log-level", "info", "node",
		"--data", dir, "--listen", "127.0.0.1:0", "--containers", fmt.Sprint(containers),
		"--zk", zk, "--zk-root", root, "--zk-session-timeout", sessionTimeout.String(), "--id", id,
		"--wal-preallocate=false", "--tier2", tier2)
	return p, p.Line(t, "node listening on ", waitTimeout)
}

// nodesSettled reports whether no container is moving and the number of
// containers each node holds satisfies want.
func nodesSettled(ctx context.Context, api *ctlclient.Client, want func(count map[string]int) bool) (bool, string) {
	nodes, err := api.Nodes(ctx)
	if err != nil {
		return false, err.Error()
	}
	got := map[string]int{}
	var desc []string
	for _, n := range nodes {
		if len(n.Moving) > 0 {
			return false, fmt.Sprintf("%s moving %v", n.ID, n.Moving)
		}
		got[n.ID] = len(n.Containers)
		desc = append(desc, fmt.Sprintf("%s:%v", n.ID, n.Containers))
	}
	return want(got), strings.Join(desc, " ")
}

// TestClusterHandOver: two nodes with a shared tier 2 (a directory, as an
// NFS mount would be) serve a stream while a writer and a reader keep
// going; a third node joins and containers are handed over to it; then
// the first node is drained. Every acknowledged event is read exactly
// once and in order per key, and the writer's longest wait for an ack
// (the pause a hand-over causes) is reported.
func TestClusterHandOver(t *testing.T) {
	zkAddr := clustertest.StartZooKeeper(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tier2 := t.TempDir()
	for _, id := range []string{"n1", "n2"} {
		startTieredNode(t, zkAddr, id, t.TempDir(), tier2)
	}
	_, ctl := startController(t, zkAddr, "c1")
	waitFor(t, "both nodes to hold containers", waitTimeout, func() (bool, string) {
		return nodesSettled(ctx, ctl, func(n map[string]int) bool { return n["n1"] == 2 && n["n2"] == 2 })
	})
	cs := &conns{m: map[string]*segclient.Conn{}}
	defer cs.close()
	c := &cluster{t: t, ctx: ctx, api: ctl, conns: cs}
	for i := range containers {
		seg := probeOf(i)
		waitFor(t, fmt.Sprintf("container %d served", i), waitTimeout, func() (bool, string) {
			_, ok, why := c.served(seg)
			return ok, why
		})
	}
	if err := ctl.CreateScope(ctx, "ho"); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: "ho", StreamName: "st",
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: 8}}); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(ctx, ctl.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	w, err := cl.NewWriter(ctx, "ho", "st")
	if err != nil {
		t.Fatal(err)
	}

	// The writer: keys k0..k15, each with its own sequence; one event at a
	// time per round so an ack's wait shows the pause.
	var (
		mu       sync.Mutex
		acked    = map[string]int{} // key -> events acknowledged (0..n-1)
		maxWait  time.Duration
		stop     = make(chan struct{})
		writerWG sync.WaitGroup
		writeErr error
	)
	writerWG.Add(1)
	go func() {
		defer writerWG.Done()
		seq := map[string]int{}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			key := fmt.Sprintf("k%d", i%16)
			t0 := time.Now()
			ack, err := w.Write(ctx, key, []byte(fmt.Sprintf("%s:%d", key, seq[key])))
			if err == nil {
				err = ack.Wait(ctx)
			}
			if err != nil {
				mu.Lock()
				writeErr = err
				mu.Unlock()
				return
			}
			mu.Lock()
			acked[key] = seq[key] + 1
			maxWait = max(maxWait, time.Since(t0))
			mu.Unlock()
			seq[key]++
		}
	}()
	progress := func(what string) {
		t.Helper()
		mu.Lock()
		n := 0
		for _, c := range acked {
			n += c
		}
		mu.Unlock()
		waitFor(t, "the writer to go on "+what, waitTimeout, func() (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			m := 0
			for _, c := range acked {
				m += c
			}
			if writeErr != nil {
				t.Fatalf("writer failed: %v", writeErr)
			}
			return m > n+50, fmt.Sprintf("%d acked", m)
		})
	}
	// The reader follows the stream during the moves: each key's events
	// exactly once, in order.
	r, err := cl.NewReader(ctx, "ho", "st")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var (
		rmu     sync.Mutex
		got     = map[string]int{}
		readN   int
		readErr error
	)
	readCtx, stopReading := context.WithCancel(ctx)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for {
			ev, err := r.ReadNext(readCtx)
			if err != nil {
				if readCtx.Err() == nil {
					rmu.Lock()
					readErr = err
					rmu.Unlock()
				}
				return
			}
			key, num, _ := strings.Cut(string(ev.Data), ":")
			i, _ := strconv.Atoi(num)
			rmu.Lock()
			if i != got[key] && readErr == nil {
				readErr = fmt.Errorf("key %s: event %d after %d events (duplicate or out of order)", key, i, got[key])
			}
			got[key]++
			readN++
			rmu.Unlock()
		}
	}()
	progress("before any move")

	startTieredNode(t, zkAddr, "n3", t.TempDir(), tier2)
	took := waitFor(t, "containers handed over to n3", waitTimeout, func() (bool, string) {
		return nodesSettled(ctx, ctl, func(n map[string]int) bool {
			return n["n3"] >= 1 && n["n1"] >= 1 && n["n2"] >= 1 && n["n1"]+n["n2"]+n["n3"] == containers
		})
	})
	t.Logf("rebalance onto n3 took %v", took)
	progress("after the rebalance")

	if err := ctl.SetDrain(ctx, "n1", true); err != nil {
		t.Fatal(err)
	}
	took = waitFor(t, "n1 drained", waitTimeout, func() (bool, string) {
		return nodesSettled(ctx, ctl, func(n map[string]int) bool { return n["n1"] == 0 && n["n2"] == 2 && n["n3"] == 2 })
	})
	t.Logf("draining n1 took %v", took)
	progress("after the drain")

	close(stop)
	writerWG.Wait()
	if writeErr != nil {
		t.Fatalf("writer failed: %v", writeErr)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	total := 0
	for _, c := range acked {
		total += c
	}
	t.Logf("%d events acknowledged; the longest wait for one ack was %v", total, maxWait)
	mu.Unlock()

	waitFor(t, "the reader to read every acknowledged event", waitTimeout, func() (bool, string) {
		rmu.Lock()
		defer rmu.Unlock()
		if readErr != nil {
			t.Fatalf("reader: %v", readErr)
		}
		return readN >= total, fmt.Sprintf("%d of %d read", readN, total)
	})
	// Nothing beyond the acknowledged events comes (the writer is closed).
	extra := time.NewTimer(time.Second)
	defer extra.Stop()
	select {
	case <-readDone:
	case <-extra.C:
	}
	stopReading()
	<-readDone
	rmu.Lock()
	defer rmu.Unlock()
	if readErr != nil {
		t.Fatalf("reader: %v", readErr)
	}
	if readN != total {
		t.Fatalf("read %d events, %d acknowledged", readN, total)
	}
	for k, n := range acked {
		if got[k] != n {
			t.Fatalf("key %s: read %d events, %d acknowledged", k, got[k], n)
		}
	}
}
