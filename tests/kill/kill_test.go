package kill

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/porttest"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// sluiceBin is the binary under test, built once by TestMain.
var sluiceBin string

func TestMain(m *testing.M) {
	proctest.Main(m, "kill", &sluiceBin)
}

// standalone is `sluice standalone` on a data directory and a fixed node
// address, restarted by kill and start.
type standalone struct {
	t        *testing.T
	dir      string
	nodeAddr string
	proc     *proctest.Proc
	ctlURL   string
	// fresh: the node address was never served yet (another may be picked).
	fresh bool
}

// start runs the standalone and waits until it serves. If the node's port
// is taken (by someone else before the first start, or held a moment after
// a kill), it tries again: a new port before the first start, the same one
// after, so that the node keeps its address.
func (s *standalone) start() {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if s.nodeAddr == "" {
			s.nodeAddr = porttest.Addr(s.t)
			s.fresh = true
		}
		p := proctest.Start(s.t, sluiceBin, "standalone", nil, "--log-level", "warn", "standalone",
			"--data", s.dir, "--controller-addr", "127.0.0.1:0", "--node-addr", s.nodeAddr, "--no-hdfs-head", "--no-nfs-head", "--no-s3-head")
		if ok := s.wait(p); ok {
			s.proc = p
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("standalone did not start on node address %s: %v\n%s", s.nodeAddr, p.Err(), p.Logs())
		}
		if s.fresh {
			s.nodeAddr = "" // taken before we used it: pick another
		}
	}
}

// wait returns true once p prints its controller's address, false if it
// exits first (a port taken).
func (s *standalone) wait(p *proctest.Proc) bool {
	s.t.Helper()
	var ok bool
	proctest.WaitFor(s.t, "standalone to serve", 30*time.Second, func() (bool, string) {
		select {
		case <-p.Done():
			return true, ""
		default:
		}
		logs := p.Logs()
		if _, rest, found := strings.Cut(logs, "controller listening on "); found {
			if line, _, full := strings.Cut(rest, "\n"); full {
				s.ctlURL = "http://" + line
				ok = true
				return true, ""
			}
		}
		return false, "not serving yet"
	})
	return ok
}

// kill ends the standalone with SIGKILL. Its node address stays reserved
// for the next start.
func (s *standalone) kill() {
	s.proc.Kill()
	s.fresh = false
}

// movingController is a client.Controller that forwards to the controller
// running now: the standalone's controller port changes at each restart.
type movingController struct {
	cur atomic.Pointer[ctlclient.Client]
}

func (m *movingController) set(url string) { m.cur.Store(ctlclient.NewClient(url)) }

func (m *movingController) GetStream(ctx context.Context, scope, stream string) (api.StreamInfo, error) {
	return m.cur.Load().GetStream(ctx, scope, stream)
}

func (m *movingController) CurrentSegments(ctx context.Context, scope, stream string) ([]api.SegmentRange, error) {
	return m.cur.Load().CurrentSegments(ctx, scope, stream)
}

func (m *movingController) Successors(ctx context.Context, segment string) ([]api.Successor, error) {
	return m.cur.Load().Successors(ctx, segment)
}

func (m *movingController) SegmentURI(ctx context.Context, segment string) (api.SegmentURI, error) {
	return m.cur.Load().SegmentURI(ctx, segment)
}

const (
	keys     = 8
	perKey   = 1500
	kills    = 3
	segments = 4
)

// TestKillStandaloneWhileWriting: a writer writes perKey numbered events
// under each of keys keys; after each third of the first acknowledgements
// the standalone is killed -9 and started again (same data, same node
// address, a new controller port). The writer retries throughout; after
// Flush every event is in the stream exactly once, in order per key, and so
// is every event acknowledged before each kill.
func TestKillStandaloneWhileWriting(t *testing.T) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := &standalone{t: t, dir: t.TempDir()}
	s.start()
	ctl := &movingController{}
	ctl.set(s.ctlURL)
	admin := ctl.cur.Load()
	if err := admin.CreateScope(ctx, "kt"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateStream(ctx, api.StreamConfig{ScopeName: "kt", StreamName: "events",
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: segments}}); err != nil {
		t.Fatal(err)
	}

	cl, err := client.New(ctx, "", client.WithController(ctl))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var disconnects atomic.Int64
	// A small window keeps Write blocking on acknowledgements, so the
	// kills land while the writer is still writing, not after it queued
	// everything.
	w, err := cl.NewWriter(ctx, "kt", "events", client.WithBackoff(5*time.Millisecond, 200*time.Millisecond),
		client.WithMaxInflight(4<<10),
		client.WithStateFunc(func(c client.StateChange) {
			if c.State == client.StateDisconnected {
				disconnects.Add(1)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}

	// The writer: events round robin over the keys, each "key:n". acked
	// counts acknowledgements as they come (in any order).
	var acked atomic.Int64
	var mu sync.Mutex
	ackedEvents := map[string]bool{} // acknowledged before the end
	total := keys * perKey
	// The last 1/(kills+2) of the events is written only after the last
	// kill: however fast the writer, it cannot finish before the kills.
	gate := total - total/(kills+2)
	released := make(chan struct{})
	writeErr := make(chan error, 1)
	go func() {
		var wg sync.WaitGroup
		defer func() { wg.Wait(); close(writeErr) }()
		for n := 0; n < perKey; n++ {
			for k := 0; k < keys; k++ {
				if n*keys+k == gate {
					select {
					case <-released:
					case <-ctx.Done():
						writeErr <- fmt.Errorf("waiting for the kills: %w", ctx.Err())
						return
					}
				}
				key := fmt.Sprintf("key-%d", k)
				ev := fmt.Sprintf("%s:%d", key, n)
				ack, err := w.Write(ctx, key, []byte(ev))
				if err != nil {
					writeErr <- fmt.Errorf("write %s: %w", ev, err)
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := ack.Wait(ctx); err != nil {
						select {
						case writeErr <- fmt.Errorf("ack of %s: %w", ev, err):
						default:
						}
						return
					}
					mu.Lock()
					ackedEvents[ev] = true
					mu.Unlock()
					acked.Add(1)
				}()
			}
		}
	}()

	// Kill i comes once i/(kills+2) of the events are acknowledged and the
	// writer has made progress since the last restart (at most up to the
	// gate), so every kill hits a writer that is connected and writing, or
	// has just reached the gate.
	var sinceRestart int64
	for round := 1; round <= kills; round++ {
		want := min(max(int64(total*round/(kills+2)), sinceRestart+int64(total/50)), int64(gate))
		proctest.WaitFor(t, fmt.Sprintf("%d acknowledgements before kill %d", want, round), 20*time.Second, func() (bool, string) {
			return acked.Load() >= want, fmt.Sprintf("%d acknowledged", acked.Load())
		})
		mu.Lock()
		before := len(ackedEvents)
		mu.Unlock()
		if before >= total {
			t.Fatalf("kill %d: every event is acknowledged already: the writer is too fast for the test", round)
		}
		s.kill()
		sinceRestart = acked.Load()
		s.start()
		ctl.set(s.ctlURL)
		t.Logf("kill %d after %d acknowledgements; restarted, controller now %s", round, before, s.ctlURL)
	}
	close(released)
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if len(ackedEvents) != total {
		t.Fatalf("%d of %d events acknowledged after Flush", len(ackedEvents), total)
	}
	if disconnects.Load() == 0 {
		t.Fatal("the writer never saw a disconnection: the kills did not bite")
	}

	// Read everything back from the head until the tail, with a Client of
	// the controller that runs now (a plain URL: the reader needs more of
	// the controller's API than movingController forwards).
	rcl, err := client.New(ctx, s.ctlURL)
	if err != nil {
		t.Fatal(err)
	}
	defer rcl.Close()
	r, err := rcl.NewReader(ctx, "kt", "events", client.FromHead())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := map[string]int{}
	next := map[string]int{} // per key: the number expected next
	for read := 0; read < total; read++ {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		ev, err := r.ReadNext(rctx)
		rcancel()
		if err != nil {
			t.Fatalf("after %d events: %v", read, err)
		}
		s := string(ev.Data)
		key, num, ok := strings.Cut(s, ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			t.Fatalf("event %q is not key:n", s)
		}
		seen[s]++
		if seen[s] > 1 {
			t.Fatalf("event %s read twice", s)
		}
		if n != next[key] {
			t.Fatalf("key %s: event %d after %d: out of order or missing", key, n, next[key]-1)
		}
		next[key] = n + 1
	}
	// Nothing more: the tail is reached within a short wait.
	rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	ev, err := r.ReadNext(rctx)
	rcancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after every event: got %q, %v; want nothing more", ev.Data, err)
	}
	for ev := range ackedEvents {
		if seen[ev] != 1 {
			t.Fatalf("acknowledged event %s read %d times", ev, seen[ev])
		}
	}
	t.Logf("%d events under %d keys, %d kills, %d disconnections seen by the writer, in %v",
		total, keys, kills, disconnects.Load(), time.Since(began).Round(time.Millisecond))
}
