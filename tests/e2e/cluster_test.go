package e2e

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// sluiceBin is the binary under test, built once by TestMain.
var sluiceBin string

func TestMain(m *testing.M) {
	proctest.Main(m, "e2e", &sluiceBin)
}

const (
	containers = 4
	root       = "/sluice"
	// sessionTimeout is every child's ZooKeeper session timeout: how long
	// a killed leader keeps its leadership, a killed node its registration.
	sessionTimeout = 2 * time.Second
	// takeoverSlack is what a takeover may take beyond sessionTimeout: the
	// server's expiry check runs every tick (100 ms in clustertest) and the
	// next candidate learns of it through a watch.
	takeoverSlack = 3 * time.Second
	// waitTimeout bounds every other wait.
	waitTimeout = 30 * time.Second
)

// start runs the binary under test (see proctest.Start).
func start(t *testing.T, name string, env []string, args ...string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, sluiceBin, name, env, args...)
}

// waitFor polls cond until it holds (see proctest.WaitFor).
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	return proctest.WaitFor(t, what, timeout, cond)
}

func startNode(t *testing.T, zk, id, dir string) (*proctest.Proc, string) {
	t.Helper()
	p := start(t, "node "+id, nil, "--log-level", "info", "node",
		"--data", dir, "--listen", "127.0.0.1:0", "--containers", fmt.Sprint(containers),
		"--zk", zk, "--zk-root", root, "--zk-session-timeout", sessionTimeout.String(), "--id", id,
		"--wal-preallocate=false")
	return p, p.Line(t, "node listening on ", waitTimeout)
}

func startController(t *testing.T, zk, id string, env ...string) (*proctest.Proc, *ctlclient.Client) {
	t.Helper()
	p := start(t, "controller "+id, env, "--log-level", "info", "controller",
		"--listen", "127.0.0.1:0", "--containers", fmt.Sprint(containers),
		"--zk", zk, "--zk-root", root, "--zk-session-timeout", sessionTimeout.String(), "--id", id)
	return p, ctlclient.NewClient("http://" + p.Line(t, "controller listening on ", waitTimeout))
}

// conns keeps one connection per node address, redialled when it broke.
type conns struct {
	mu sync.Mutex
	m  map[string]*segclient.Conn
}

func (c *conns) get(ctx context.Context, addr string) (*segclient.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cn := c.m[addr]; cn != nil && cn.Err() == nil {
		return cn, nil
	}
	cn, err := segclient.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	c.m[addr] = cn
	return cn, nil
}

func (c *conns) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cn := range c.m {
		cn.Close()
	}
}

// cluster is the test's view of the processes.
type cluster struct {
	t     *testing.T
	ctx   context.Context
	zk    *zkstore.Store    // the test's own session, to watch the election
	api   *ctlclient.Client // the controller the test talks to
	conns *conns
}

// served reports whether segment's node, as the uri route names it, serves
// the segment's container now (the segment need not exist).
func (c *cluster) served(seg string) (api.SegmentURI, bool, string) {
	uri, err := c.api.SegmentURI(c.ctx, seg)
	if err != nil {
		return uri, false, "uri: " + err.Error()
	}
	cn, err := c.conns.get(c.ctx, uri.Endpoint)
	if err != nil {
		return uri, false, "dial: " + err.Error()
	}
	if _, err := cn.GetSegmentInfo(c.ctx, seg); err != nil && !errors.Is(err, protocol.ErrNoSuchSegment) {
		return uri, false, fmt.Sprintf("node %s: %v", uri.Endpoint, err)
	}
	return uri, true, ""
}

func (c *cluster) leader() string {
	id, err := c.zk.Leader(c.ctx, layout.ElectionKey)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return id
}

func (c *cluster) assignment() layout.Map {
	c.t.Helper()
	kv, err := c.zk.Get(c.ctx, layout.AssignmentKey)
	if err != nil {
		c.t.Fatalf("read %s: %v", layout.AssignmentKey, err)
	}
	m, err := layout.Parse(kv.Value, containers)
	if err != nil {
		c.t.Fatal(err)
	}
	return m
}

func (c *cluster) info(seg string) (*protocol.SegmentInfo, error) {
	uri, err := c.api.SegmentURI(c.ctx, seg)
	if err != nil {
		return nil, err
	}
	cn, err := c.conns.get(c.ctx, uri.Endpoint)
	if err != nil {
		return nil, err
	}
	return cn.GetSegmentInfo(c.ctx, seg)
}

// writer appends events to one segment through the node the uri route
// names, block by block, and keeps the events acknowledged.
type writer struct {
	id, segment string
	next        int64 // number of the next event
	acked       []string
}

func (w *writer) write(t *testing.T, c *cluster, blocks, perBlock int) {
	t.Helper()
	uri, err := c.api.SegmentURI(c.ctx, w.segment)
	if err != nil {
		t.Fatalf("writer %s: locate %s: %v", w.id, w.segment, err)
	}
	cn, err := segclient.Dial(c.ctx, uri.Endpoint)
	if err != nil {
		t.Fatalf("writer %s: dial %s: %v", w.id, uri.Endpoint, err)
	}
	defer cn.Close()
	last, err := cn.SetupAppend(c.ctx, w.id, w.segment)
	if err != nil {
		t.Fatalf("writer %s: setup on %s (%s): %v", w.id, w.segment, uri.Endpoint, err)
	}
	if want := w.next - 1; w.next > 0 && last != want || w.next == 0 && last != protocol.NoEventNumber {
		t.Fatalf("writer %s: node holds up to event %d, %d were acknowledged", w.id, last, w.next)
	}
	for range blocks {
		var data []byte
		var events []string
		for range perBlock {
			e := fmt.Sprintf("%s:%d", w.id, w.next)
			data = protocol.AppendEvent(data, []byte(e))
			events = append(events, e)
			w.next++
		}
		if _, err := cn.Append(c.ctx, w.id, w.next-1, int32(perBlock), data, protocol.NoExpectedOffset); err != nil {
			t.Fatalf("writer %s: append to %s on %s: %v", w.id, w.segment, uri.Endpoint, err)
		}
		w.acked = append(w.acked, events...)
	}
}

// readAll returns every event of a segment, from the node the uri route
// names.
func (c *cluster) readAll(t *testing.T, seg string) []string {
	t.Helper()
	uri, err := c.api.SegmentURI(c.ctx, seg)
	if err != nil {
		t.Fatalf("locate %s: %v", seg, err)
	}
	cn, err := c.conns.get(c.ctx, uri.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for off := int64(0); ; {
		r, err := cn.ReadSegment(c.ctx, seg, off, 1<<20, 0)
		if err != nil {
			t.Fatalf("read %s@%d on %s: %v", seg, off, uri.Endpoint, err)
		}
		for _, d := range r.Data {
			data = append(data, d...)
			off += int64(len(d))
		}
		if r.AtTail || r.EndOfSegment {
			break
		}
	}
	var out []string
	for len(data) > 0 {
		e, rest, err := protocol.NextEvent(data)
		if err != nil {
			t.Fatalf("segment %s: torn event: %v", seg, err)
		}
		out = append(out, string(e))
		data = rest
	}
	return out
}

// TestClusterFailover is the proof of the package documentation.
func TestClusterFailover(t *testing.T) {
	began := time.Now()
	zkAddr := clustertest.StartZooKeeper(t)
	obs, err := zkstore.Open([]string{zkAddr}, root, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := &conns{m: map[string]*segclient.Conn{}}
	defer cs.close()
	c := &cluster{t: t, ctx: ctx, zk: obs, conns: cs}

	// Two nodes first, so that the leader's first assignment spreads the
	// containers over both.
	nodeDirs := map[string]string{"n1": t.TempDir(), "n2": t.TempDir()}
	nodes := map[string]*proctest.Proc{}
	nodeAddr := map[string]string{}
	for _, id := range []string{"n1", "n2"} {
		nodes[id], nodeAddr[id] = startNode(t, zkAddr, id, nodeDirs[id])
	}
	waitFor(t, "both nodes registered", waitTimeout, func() (bool, string) {
		kvs, err := obs.List(ctx, layout.NodesKey)
		if err != nil {
			return false, err.Error()
		}
		return len(kvs) == 2, fmt.Sprintf("%d registered", len(kvs))
	})

	// Two controllers: c1 first, so it leads; c1 halts every scale before
	// its sealSegments step, c2 does not.
	c1, api1 := startController(t, zkAddr, "c1", controllerHalt("scale:sealSegments"))
	waitFor(t, "c1 to lead", waitTimeout, func() (bool, string) { l := c.leader(); return l == "c1", "leader " + l })
	_, api2 := startController(t, zkAddr, "c2")
	c.api = api2
	if l := c.leader(); l != "c1" {
		t.Fatalf("leader %s after c2 started, want c1", l)
	}

	// Every container assigned, to both nodes, and served.
	probes := map[int]string{}
	for i := int64(0); len(probes) < containers; i++ {
		s := protocol.SegmentName("e2e", "probe", i, 0)
		if _, ok := probes[protocol.ContainerOf(s, containers)]; !ok {
			probes[protocol.ContainerOf(s, containers)] = s
		}
	}
	waitFor(t, "every container served", waitTimeout, func() (bool, string) {
		for ct, s := range probes {
			if _, ok, why := c.served(s); !ok {
				return false, fmt.Sprintf("container %d: %s", ct, why)
			}
		}
		return true, ""
	})
	before := c.assignment()
	if len(before.Of("n1")) != containers/2 || len(before.Of("n2")) != containers/2 {
		t.Fatalf("assignment %+v: want the containers spread evenly over n1 and n2", before)
	}
	for ct, s := range probes {
		uri, _, _ := c.served(s)
		if o := before.Containers[ct]; uri.Container != ct || uri.Endpoint != nodeAddr[o.Node] || uri.Epoch != o.Epoch {
			t.Fatalf("uri of %s = %+v; the assignment gives container %d to %+v at %s", s, uri, ct, o, nodeAddr[o.Node])
		}
	}
	t.Logf("cluster up after %v: assignment %+v", time.Since(began).Round(time.Millisecond), before.Containers)

	// A stream, created through c2's API, and events written to its nodes.
	if err := api2.CreateScope(ctx, "e2e"); err != nil {
		t.Fatal(err)
	}
	if _, err := api2.CreateStream(ctx, api.StreamConfig{ScopeName: "e2e", StreamName: "orders",
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: 2}}); err != nil {
		t.Fatal(err)
	}
	segs, err := api2.CurrentSegments(ctx, "e2e", "orders")
	if err != nil || len(segs) != 2 {
		t.Fatalf("current segments %+v, %v", segs, err)
	}
	s0, s1 := segs[0].Segment, segs[1].Segment
	writers := []*writer{{id: "w0", segment: s0}, {id: "w1", segment: s1}}
	for _, w := range writers {
		w.write(t, c, 10, 5)
	}

	// Scale through the leader, c1: it halts before sealing s0; then it
	// is killed.
	scaleCtx, cancelScale := context.WithCancel(ctx)
	defer cancelScale()
	scaled := make(chan error, 1)
	go func() {
		_, err := api1.Scale(scaleCtx, "e2e", "orders", api.ScaleRequest{
			SealedSegments: []int64{segs[0].Number},
			NewRanges:      []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}},
		})
		scaled <- err
	}()
	c1.Line(t, "controller halted before scale:sealSegments", waitTimeout)
	if info, err := api2.GetStream(ctx, "e2e", "orders"); err != nil || info.Epoch != 0 {
		t.Fatalf("stream before the takeover: %+v, %v; want epoch 0", info, err)
	}
	if info, err := c.info(s0); err != nil || info.Sealed {
		t.Fatalf("%s before the takeover: %+v, %v; want open", s0, info, err)
	}
	c1.Kill()
	if err := <-scaled; err == nil {
		t.Fatal("the scale through the killed controller succeeded")
	}
	takeover := waitFor(t, "c2 to lead after c1 was killed", sessionTimeout+takeoverSlack, func() (bool, string) {
		l := c.leader()
		return l == "c2", "leader " + l
	})
	t.Logf("c2 leads %v after c1 was killed (session timeout %v)", takeover.Round(time.Millisecond), sessionTimeout)
	finished := waitFor(t, "c2 to finish the scale", waitTimeout, func() (bool, string) {
		info, err := api2.GetStream(ctx, "e2e", "orders")
		if err != nil || info.Epoch != 1 {
			return false, fmt.Sprintf("stream %+v, %v", info, err)
		}
		si, err := c.info(s0)
		if err != nil || !si.Sealed {
			return false, fmt.Sprintf("%s: %+v, %v", s0, si, err)
		}
		return true, ""
	})
	t.Logf("scale finished %v after c2 led", finished.Round(time.Millisecond))
	segs, err = api2.CurrentSegments(ctx, "e2e", "orders")
	if err != nil || len(segs) != 3 || segs[2].Segment != s1 {
		t.Fatalf("segments after the scale: %+v, %v; want two new ones and %s", segs, err, s1)
	}
	succ, err := api2.Successors(ctx, s0)
	if err != nil || len(succ) != 2 || succ[0].Segment != segs[0] || succ[1].Segment != segs[1] {
		t.Fatalf("successors of %s: %+v, %v; want %+v", s0, succ, err, segs[:2])
	}
	for _, s := range segs[:2] {
		if si, err := c.info(s.Segment); err != nil || si.Sealed {
			t.Fatalf("new segment %s: %+v, %v", s.Segment, si, err)
		}
	}
	writers = append(writers, &writer{id: "w2", segment: segs[0].Segment}, &writer{id: "w3", segment: segs[1].Segment})
	for _, w := range writers[1:] {
		w.write(t, c, 10, 5)
	}

	// kill -9 the node that owns the first new segment; its containers are
	// unavailable (not moved) until it is back on its data directory.
	uri, err := api2.SegmentURI(ctx, segs[0].Segment)
	if err != nil {
		t.Fatal(err)
	}
	victim := before.Containers[uri.Container].Node
	nodes[victim].Kill()
	gone := waitFor(t, "the killed node's containers to be reported unavailable", sessionTimeout+takeoverSlack, func() (bool, string) {
		u, err := api2.SegmentURI(ctx, segs[0].Segment)
		return errors.Is(err, ctlclient.ErrUnavailable), fmt.Sprintf("%+v, %v", u, err)
	})
	t.Logf("%s's containers unavailable %v after it was killed", victim, gone.Round(time.Millisecond))
	if m := c.assignment(); !reflect.DeepEqual(m, before) {
		t.Fatalf("assignment changed while %s was down: %+v, was %+v", victim, m, before)
	}
	nodes[victim], nodeAddr[victim] = startNode(t, zkAddr, victim, nodeDirs[victim])
	back := waitFor(t, victim+"'s containers to be served again at its new address", waitTimeout, func() (bool, string) {
		for _, ct := range before.Of(victim) {
			u, ok, why := c.served(probes[ct])
			if !ok {
				return false, fmt.Sprintf("container %d: %s", ct, why)
			}
			if u.Endpoint != nodeAddr[victim] {
				return false, fmt.Sprintf("container %d at %s, %s listens on %s", ct, u.Endpoint, victim, nodeAddr[victim])
			}
		}
		return true, ""
	})
	t.Logf("%s served again %v after its restart", victim, back.Round(time.Millisecond))
	if m := c.assignment(); !reflect.DeepEqual(m, before) {
		t.Fatalf("assignment after %s returned: %+v, was %+v", victim, m, before)
	}
	for _, w := range writers[1:] {
		w.write(t, c, 2, 5)
	}

	// Every acknowledged event, exactly once; nothing else.
	count := map[string]int{}
	for _, s := range []string{s0, s1, segs[0].Segment, segs[1].Segment} {
		for _, e := range c.readAll(t, s) {
			count[e]++
		}
	}
	acked := 0
	for _, w := range writers {
		for _, e := range w.acked {
			acked++
			if count[e] != 1 {
				t.Errorf("acknowledged event %s read back %d times", e, count[e])
			}
			delete(count, e)
		}
	}
	if len(count) != 0 {
		var extra []string
		for e := range count {
			extra = append(extra, e)
		}
		sort.Strings(extra)
		t.Errorf("events read back that were never acknowledged: %v", extra)
	}
	t.Logf("%d acknowledged events read back exactly once; whole test %v", acked, time.Since(began).Round(time.Millisecond))
}

// controllerHalt is the environment that halts a controller's workflows
// before step at (cmd/sluice: HaltEnv).
func controllerHalt(at string) string { return "SLUICE_TEST_HALT_AT=" + at }
