package crash

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol"
)

// sluiceBin is the binary under test, built once by TestMain.
var sluiceBin string

func TestMain(m *testing.M) {
	proctest.Main(m, "crash", &sluiceBin)
}

// nodeProc is a running `sluice node`.
type nodeProc struct {
	*proctest.Proc
	addr string
}

// startNode starts a node on dataDir with small log files (256 KiB) and a
// checkpoint every 64 KiB of log; extra flags follow those.
func startNode(t *testing.T, dataDir string, extra ...string) *nodeProc {
	t.Helper()
	args := []string{"--log-level", "warn", "node", "--data", dataDir,
		"--listen", "127.0.0.1:0", "--containers", "3", "--wal-file-size", "262144", "--checkpoint-bytes", "65536"}
	p := proctest.Start(t, sluiceBin, "node", nil, append(args, extra...)...)
	return &nodeProc{Proc: p, addr: p.Line(t, "node listening on ", 60*time.Second)}
}

func (p *nodeProc) kill(*testing.T) { p.Kill() }

// stop ends the node with SIGTERM and requires a clean exit.
func (p *nodeProc) stop(t *testing.T) { p.Stop(t, 60*time.Second) }

// block is one append block as a writer sent it; it is resent as it is.
type block struct {
	first, last int64 // event numbers
	data        []byte
}

// writer is one writer's state, kept across node restarts like a client's.
type writer struct {
	resent  int // blocks resent after a restart, over the whole test
	applied int // of those, blocks the node already had (acknowledged as resends)
	id      string
	segment string
	next    int64   // number of the next new event
	acked   int64   // highest event number acknowledged
	unacked []block // sent, not yet acknowledged, in order
}

// payload is event n of writer id: its bytes say who wrote it, so the
// check can attribute every event read back.
func payload(id string, n int64) []byte {
	pad := int(n*7919) % 300
	return []byte(fmt.Sprintf("%s:%08d:%s", id, n, strings.Repeat("p", pad)))
}

func (w *writer) newBlock(rng *rand.Rand) block {
	k := 1 + rng.Intn(8)
	b := block{first: w.next, last: w.next + int64(k) - 1}
	for n := b.first; n <= b.last; n++ {
		b.data = protocol.AppendEvent(b.data, payload(w.id, n))
	}
	w.next += int64(k)
	return b
}

// run connects, sets up, resends what the node does not have and appends
// new blocks until the connection breaks (the node was killed) or stop.
// acks counts every acknowledgement, for the kill trigger.
func (w *writer) run(addr string, rng *rand.Rand, acks *atomic.Int64, stop <-chan struct{}) error {
	ctx := context.Background()
	conn, err := segclient.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	last, err := conn.SetupAppend(ctx, w.id, w.segment)
	if err != nil {
		return err
	}
	if w.acked >= 0 && last < w.acked {
		return fmt.Errorf("writer %s: node holds up to event %d, but %d was acknowledged: acknowledged data lost", w.id, last, w.acked)
	}
	// Every unacknowledged block is resent as it was, even those the node
	// says it has (applied before the crash, never acknowledged): the node
	// must acknowledge those without storing them twice.
	for _, b := range w.unacked {
		if b.last <= last {
			w.applied++
		}
	}
	w.resent += len(w.unacked)
	if last >= w.next {
		return fmt.Errorf("writer %s: node holds event %d, never sent (next is %d)", w.id, last, w.next)
	}
	type inflight struct {
		b block
		f *segclient.AppendFuture
	}
	const window = 8
	queue := make([]inflight, 0, window)
	send := func(b block) error {
		f, err := conn.AppendAsync(ctx, w.id, b.last, int32(b.last-b.first+1), b.data, protocol.NoExpectedOffset)
		if err != nil {
			return err
		}
		queue = append(queue, inflight{b, f})
		return nil
	}
	ackOldest := func() error {
		in := queue[0]
		a, err := in.f.Wait(ctx)
		if err != nil {
			return err
		}
		if a.EventNumber != in.b.last {
			return fmt.Errorf("writer %s: ack for event %d, expected %d", w.id, a.EventNumber, in.b.last)
		}
		queue = queue[1:]
		w.acked = in.b.last
		w.unacked = w.unacked[1:]
		acks.Add(1)
		return nil
	}
	resend := append([]block(nil), w.unacked...)
	for {
		stopping := false
		if len(resend) == 0 { // a stopping writer still resends what it owes
			select {
			case <-stop:
				stopping = true
			default:
			}
		}
		if stopping {
			for len(queue) > 0 {
				if err := ackOldest(); err != nil {
					return err
				}
			}
			return nil
		}
		if len(queue) == window {
			if err := ackOldest(); err != nil {
				return err
			}
			continue
		}
		var b block
		if len(resend) > 0 {
			b, resend = resend[0], resend[1:]
		} else {
			b = w.newBlock(rng)
			w.unacked = append(w.unacked, b)
		}
		if err := send(b); err != nil {
			return err
		}
	}
}

// readSegment reads a segment from offset 0 to its durable tail.
func readSegment(ctx context.Context, t *testing.T, conn *segclient.Conn, seg string) []byte {
	t.Helper()
	var data []byte
	for off := int64(0); ; {
		r, err := conn.ReadSegment(ctx, seg, off, 1<<20, 0)
		if err != nil {
			t.Fatalf("read %s@%d: %v", seg, off, err)
		}
		for _, d := range r.Data {
			data = append(data, d...)
			off += int64(len(d))
		}
		if r.AtTail {
			return data
		}
	}
}

// verify reads every segment and checks each writer's events: numbers
// 0..n-1 exactly once and in order (none lost, none duplicated, none
// reordered), every acknowledged one present, bytes intact.
func verify(t *testing.T, addr string, segments []string, writers []*writer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := segclient.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	seen := map[string]int64{}
	for _, seg := range segments {
		data := readSegment(ctx, t, conn, seg)
		for len(data) > 0 {
			e, rest, err := protocol.NextEvent(data)
			if err != nil {
				t.Fatalf("segment %s: torn event in durable data: %v", seg, err)
			}
			data = rest
			var id string
			var n int64
			parts := strings.SplitN(string(e), ":", 3)
			if len(parts) != 3 {
				t.Fatalf("segment %s: event %q is not one of ours", seg, e)
			}
			id = parts[0]
			fmt.Sscanf(parts[1], "%d", &n)
			if string(e) != string(payload(id, n)) {
				t.Fatalf("segment %s: event %s:%d has wrong bytes", seg, id, n)
			}
			if want := seen[id]; n != want {
				t.Fatalf("segment %s: writer %s: event %d where %d was expected (lost, duplicated or reordered)", seg, id, n, want)
			}
			seen[id] = n + 1
		}
	}
	for _, w := range writers {
		if seen[w.id] <= w.acked {
			t.Fatalf("writer %s: events up to %d acknowledged, only %d present", w.id, w.acked, seen[w.id])
		}
	}
}

// soakCycles is n, or soak under SLUICE_SOAK.
func soakCycles(n, soak int) int {
	if os.Getenv("SLUICE_SOAK") != "" {
		return soak
	}
	return n
}

// crashRun is what differs between the crash tests.
type crashRun struct {
	scope    string   // of the three segments, stream "s"
	cycles   int      // kill -9 cycles
	dataDir  string   // the node's --data
	nodeArgs []string // flags after startNode's own
	// check, if set, runs after every restart once verify has passed;
	// cycle is cfg.cycles after the final clean restart.
	check func(t *testing.T, cycle int, p *nodeProc, segments []string)
	// killed, if set, runs after each kill -9, before the restart.
	killed func(t *testing.T, cycle int)
}

func TestCrashKill9UnderLoad(t *testing.T) {
	runCrash(t, crashRun{scope: "crash", cycles: soakCycles(20, 300), dataDir: t.TempDir()})
}

// runCrash runs cfg.cycles cycles of writers appending until a kill -9,
// a restart and a verify, then a final round that ends with a clean stop
// and restart.
func runCrash(t *testing.T, cfg crashRun) {
	t.Helper()
	cycles := cfg.cycles
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	dir := cfg.dataDir
	segments := []string{
		protocol.SegmentName(cfg.scope, "s", 0, 0),
		protocol.SegmentName(cfg.scope, "s", 1, 0),
		protocol.SegmentName(cfg.scope, "s", 2, 0),
	}
	var writers []*writer
	for i := 0; i < 6; i++ {
		writers = append(writers, &writer{id: fmt.Sprintf("w%d", i), segment: segments[i%len(segments)], acked: -1})
	}
	restart := func(cycle int) *nodeProc {
		t.Helper()
		p := startNode(t, dir, cfg.nodeArgs...)
		verify(t, p.addr, segments, writers)
		if cfg.check != nil {
			cfg.check(t, cycle, p, segments)
		}
		return p
	}

	p := startNode(t, dir, cfg.nodeArgs...)
	ctx := context.Background()
	conn, err := segclient.Dial(ctx, p.addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segments {
		if err := conn.CreateSegment(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()

	totalAcks := int64(0)
	for cycle := 0; cycle < cycles; cycle++ {
		var acks atomic.Int64
		killAt := int64(rng.Intn(400))
		stop := make(chan struct{})
		errs := make(chan error, len(writers))
		for i, w := range writers {
			go func(w *writer, seed int64) {
				errs <- w.run(p.addr, rand.New(rand.NewSource(seed)), &acks, stop)
			}(w, seed+int64(cycle*100+i))
		}
		// Kill once enough acks arrived (or at once for killAt 0).
		for acks.Load() < killAt {
			select {
			case err := <-errs:
				t.Fatalf("cycle %d: writer stopped before the kill: %v", cycle, err)
			default:
				time.Sleep(time.Millisecond) // polling the trigger, not synchronising
			}
		}
		p.kill(t)
		close(stop)
		for range writers {
			if err := <-errs; err != nil && !errors.Is(err, segclient.ErrConnectionClosed) && !isConnErr(err) {
				t.Fatalf("cycle %d: writer: %v", cycle, err)
			}
		}
		totalAcks += acks.Load()
		if cfg.killed != nil {
			cfg.killed(t, cycle)
		}
		p = restart(cycle)
	}
	// A last round of writers reconnects, resends, and the node stops
	// cleanly; everything is there after a clean restart too.
	stop := make(chan struct{})
	var acks atomic.Int64
	errs := make(chan error, len(writers))
	for i, w := range writers {
		go func(w *writer, seed int64) { errs <- w.run(p.addr, rand.New(rand.NewSource(seed)), &acks, stop) }(w, seed+int64(i))
	}
	proctest.WaitFor(t, "50 acks in the final round", time.Minute, func() (bool, string) {
		select {
		case err := <-errs:
			t.Fatalf("final round: writer stopped early: %v", err)
		default:
		}
		return acks.Load() >= 50, fmt.Sprintf("%d acks", acks.Load())
	})
	close(stop)
	for range writers {
		if err := <-errs; err != nil {
			t.Fatalf("final round: %v", err)
		}
	}
	p.stop(t)
	p = restart(cycles)
	for _, w := range writers {
		if len(w.unacked) != 0 {
			t.Fatalf("writer %s: %d blocks still unacknowledged after a clean round", w.id, len(w.unacked))
		}
	}
	p.stop(t)
	resent, applied := 0, 0
	for _, w := range writers {
		resent += w.resent
		applied += w.applied
	}
	t.Logf("%d kill -9 cycles, %d acknowledged blocks, %d unacknowledged blocks resent after restarts, %d blocks found applied though unacknowledged",
		cycles, totalAcks+acks.Load(), resent, applied)
	if resent == 0 {
		t.Fatal("no kill caught an append in flight: the test did not exercise resends")
	}
}

// isConnErr: a dial or setup refused because the node is gone.
func isConnErr(err error) bool {
	var se syscall.Errno
	return errors.As(err, &se) || strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "EOF") ||
		strings.Contains(err.Error(), "connection reset")
}
