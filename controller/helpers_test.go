package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/controller/internal/nodetest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

const testTimeout = 20 * time.Second

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func quietLog() *logrus.Logger { return nodetest.QuietLogger() }

// startNode runs a real node on a temporary directory, served on
// 127.0.0.1; cleanup stops both.
func startNode(t *testing.T) string {
	t.Helper()
	return nodetest.Start(t)
}

func openStore(t *testing.T) cluster.Store {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// clock is a controllable clock.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	return c
}
func (c *clock) now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// env is a store, a node and the Services made on them.
type env struct {
	t     *testing.T
	store cluster.Store
	addr  string
	clock *clock
}

func newEnv(t *testing.T) *env {
	return &env{t: t, store: openStore(t), addr: startNode(t), clock: newClock()}
}

// service returns a new Service on the env's store and node (as a
// controller process would be), with hook as its StepHook and no sweeper.
func (e *env) service(hook func(workflow, step string) error) *Service {
	segs := NewNodeSegments(StaticLocator(e.addr))
	s := New(e.store, segs, Options{Clock: e.clock.now, Logger: quietLog(), StepHook: hook, TxnSweepInterval: -1})
	e.t.Cleanup(func() {
		s.Close()
		segs.Close()
	})
	return s
}

func (e *env) conn() *segclient.Conn {
	c, err := segclient.Dial(ctxT(e.t), e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// dump returns every key of the store with its value.
func dump(t *testing.T, st cluster.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(key string)
	walk = func(key string) {
		kvs, err := st.List(context.Background(), key)
		if err != nil {
			t.Fatalf("List(%q): %v", key, err)
		}
		for _, kv := range kvs {
			out[kv.Key] = string(kv.Value)
			walk(kv.Key)
		}
	}
	walk("")
	return out
}

func fixed(scope, stream string, n int32) api.StreamConfig {
	return api.StreamConfig{ScopeName: scope, StreamName: stream, ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: n}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

// segState is what the node says of a segment: "missing", "open" or
// "sealed".
func segState(t *testing.T, c *segclient.Conn, seg string) string {
	t.Helper()
	info, err := c.GetSegmentInfo(ctxT(t), seg)
	if errors.Is(err, protocol.ErrNoSuchSegment) {
		return "missing"
	}
	if err != nil {
		t.Fatal(err)
	}
	if info.Sealed {
		return "sealed"
	}
	return "open"
}

var writerSeq atomic.Int64

// write appends events to a segment as a fresh writer.
func write(t *testing.T, c *segclient.Conn, seg string, events ...string) {
	t.Helper()
	ctx := ctxT(t)
	w := fmt.Sprintf("writer-%d", writerSeq.Add(1))
	if _, err := c.SetupAppend(ctx, w, seg); err != nil {
		t.Fatal(err)
	}
	var block []byte
	for _, ev := range events {
		block = protocol.AppendEvent(block, []byte(ev))
	}
	if _, err := c.Append(ctx, w, int64(len(events)), int32(len(events)), block, protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
}

// read returns the events of a segment from its start.
func read(t *testing.T, c *segclient.Conn, seg string) []string {
	t.Helper()
	info, err := c.GetSegmentInfo(ctxT(t), seg)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for off := info.StartOffset; off < info.Length; {
		r, err := c.ReadSegment(ctxT(t), seg, off, 1<<20, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range r.Data {
			data = append(data, d...)
			off += int64(len(d))
		}
	}
	out := []string{}
	for len(data) > 0 {
		ev, rest, err := protocol.NextEvent(data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(ev))
		data = rest
	}
	return out
}

func record(t *testing.T, st cluster.Store, scope, stream string) *streamRec {
	t.Helper()
	kv, err := st.Get(context.Background(), streamKey(scope, stream))
	if err != nil {
		t.Fatal(err)
	}
	var r streamRec
	must(t, json.Unmarshal(kv.Value, &r))
	return &r
}

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// crashAt returns a StepHook that fails once at workflow/step.
func crashAt(workflow, step string) func(string, string) error {
	var once sync.Once
	return func(w, s string) error {
		fail := false
		if w == workflow && s == step {
			once.Do(func() { fail = true })
		}
		if fail {
			return errors.New("injected crash")
		}
		return nil
	}
}
