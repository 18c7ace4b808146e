// Package clustertest holds what tests of the cluster package and its
// backends share: the conformance suite every cluster.Store must pass
// (RunStoreTests, and RunRecordTests for the checksummed record envelope,
// given a Damager that reaches the stored bytes) and a real ZooKeeper
// server started for a test (StartZooKeeper, NewZooKeeper).
package clustertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster"
)

// eventTimeout bounds the wait for a watch event; only a failing test
// waits that long.
const eventTimeout = 10 * time.Second

// RunStoreTests runs the conformance suite against a backend. open must
// return a new, empty store for each call and close it when t ends (the
// suite may close it earlier; a second Close must be harmless).
func RunStoreTests(t *testing.T, open func(t *testing.T) cluster.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s cluster.Store)
	}{
		{"CreateGet", testCreateGet},
		{"PutVersions", testPutVersions},
		{"CompareAndSet", testCompareAndSet},
		{"RecreatedKeyGetsNewVersion", testRecreated},
		{"ImplicitParents", testImplicitParents},
		{"List", testList},
		{"ListRoot", testListRoot},
		{"Delete", testDelete},
		{"InvalidKeys", testInvalidKeys},
		{"WatchEvents", testWatchEvents},
		{"WatchCoalescesToCurrentState", testWatchCoalesces},
		{"WatchKeyCreatedLater", testWatchCreatedLater},
		{"WatchClosedWhenContextDone", testWatchCtxDone},
		{"WatchManyWatchers", testWatchMany},
		{"ConcurrentCompareAndSet", testConcurrentCAS},
		{"LargeValues", testLargeValues},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustGet(t *testing.T, s cluster.Store, key string) cluster.KV {
	t.Helper()
	kv, err := s.Get(testCtx(t), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return kv
}

func mustPut(t *testing.T, s cluster.Store, key, value string) cluster.Version {
	t.Helper()
	v, err := s.Put(testCtx(t), key, []byte(value))
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return v
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

func wantKV(t *testing.T, kv cluster.KV, key, value string, v cluster.Version) {
	t.Helper()
	if kv.Key != key || string(kv.Value) != value || kv.Version != v {
		t.Fatalf("got {%q %q v%d}, want {%q %q v%d}", kv.Key, kv.Value, kv.Version, key, value, v)
	}
}

func testCreateGet(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	_, err := s.Get(ctx, "k")
	wantErr(t, "Get of a missing key", err, cluster.ErrNotFound)

	v, err := s.Create(ctx, "k", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	wantKV(t, mustGet(t, s, "k"), "k", "one", v)

	_, err = s.Create(ctx, "k", []byte("two"))
	wantErr(t, "Create of an existing key", err, cluster.ErrExists)
	wantKV(t, mustGet(t, s, "k"), "k", "one", v)

	// An empty value is a value.
	ve, err := s.Create(ctx, "empty", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantKV(t, mustGet(t, s, "empty"), "empty", "", ve)
}

func testPutVersions(t *testing.T, s cluster.Store) {
	seen := map[cluster.Version]bool{}
	for i := range 5 {
		val := fmt.Sprint("value ", i)
		v := mustPut(t, s, "p", val)
		if seen[v] {
			t.Fatalf("Put %d returned version %d again", i, v)
		}
		seen[v] = true
		wantKV(t, mustGet(t, s, "p"), "p", val, v)
	}
	// Writing the same bytes again is a write too.
	kv := mustGet(t, s, "p")
	if v := mustPut(t, s, "p", string(kv.Value)); v == kv.Version {
		t.Fatalf("Put of the same value kept version %d", v)
	}
}

func testCompareAndSet(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	_, err := s.CompareAndSet(ctx, "c", []byte("x"), 1)
	wantErr(t, "CompareAndSet of a missing key", err, cluster.ErrNotFound)

	v1 := mustPut(t, s, "c", "one")
	v2, err := s.CompareAndSet(ctx, "c", []byte("two"), v1)
	if err != nil {
		t.Fatal(err)
	}
	if v2 == v1 {
		t.Fatalf("CompareAndSet kept version %d", v1)
	}
	wantKV(t, mustGet(t, s, "c"), "c", "two", v2)

	_, err = s.CompareAndSet(ctx, "c", []byte("stale"), v1)
	wantErr(t, "CompareAndSet with an old version", err, cluster.ErrVersionMismatch)
	wantKV(t, mustGet(t, s, "c"), "c", "two", v2)

	_, err = s.CompareAndSet(ctx, "c", []byte("any"), cluster.AnyVersion)
	wantErr(t, "CompareAndSet with AnyVersion", err, cluster.ErrVersionMismatch)

	v3 := mustPut(t, s, "c", "three")
	_, err = s.CompareAndSet(ctx, "c", []byte("stale"), v2)
	wantErr(t, "CompareAndSet after a Put", err, cluster.ErrVersionMismatch)
	wantKV(t, mustGet(t, s, "c"), "c", "three", v3)
}

func testRecreated(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	old, err := s.Create(ctx, "r", []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "r", old); err != nil {
		t.Fatal(err)
	}
	_, err = s.CompareAndSet(ctx, "r", []byte("x"), old)
	wantErr(t, "CompareAndSet of a deleted key", err, cluster.ErrNotFound)

	v, err := s.Create(ctx, "r", []byte("second"))
	if err != nil {
		t.Fatal(err)
	}
	if v == old {
		t.Fatalf("re-created key got its old version %d", v)
	}
	_, err = s.CompareAndSet(ctx, "r", []byte("stale"), old)
	wantErr(t, "CompareAndSet with the pre-delete version", err, cluster.ErrVersionMismatch)
	err = s.Delete(ctx, "r", old)
	wantErr(t, "Delete with the pre-delete version", err, cluster.ErrVersionMismatch)
	wantKV(t, mustGet(t, s, "r"), "r", "second", v)

	// Same with Put as the re-creating write, several times over.
	for i := range 3 {
		if err := s.Delete(ctx, "r", cluster.AnyVersion); err != nil {
			t.Fatal(err)
		}
		nv := mustPut(t, s, "r", fmt.Sprint(i))
		if nv == v || nv == old {
			t.Fatalf("re-created key reused version %d", nv)
		}
		_, err = s.CompareAndSet(ctx, "r", []byte("stale"), v)
		wantErr(t, "CompareAndSet with a version from before the re-creation", err, cluster.ErrVersionMismatch)
		v = nv
	}
}

func testImplicitParents(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	v := mustPut(t, s, "a/b/c", "leaf")
	wantKV(t, mustGet(t, s, "a/b/c"), "a/b/c", "leaf", v)
	for _, p := range []string{"a", "a/b"} {
		kv := mustGet(t, s, p)
		if len(kv.Value) != 0 {
			t.Fatalf("implicit parent %q has value %q", p, kv.Value)
		}
	}
	_, err := s.Create(ctx, "a/b", []byte("x"))
	wantErr(t, "Create of an implicit parent", err, cluster.ErrExists)

	// Writing a parent keeps its children; writing a child keeps a
	// parent's value and version.
	pv := mustPut(t, s, "a", "parent")
	if _, err := s.Create(ctx, "a/b/d", []byte("leaf2")); err != nil {
		t.Fatal(err)
	}
	wantKV(t, mustGet(t, s, "a"), "a", "parent", pv)
	wantKV(t, mustGet(t, s, "a/b/c"), "a/b/c", "leaf", v)

	// Create and CompareAndSet create parents the same way.
	if _, err := s.Create(ctx, "x/y/z", []byte("z")); err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, "x/y")
}

func testList(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	_, err := s.List(ctx, "nope")
	wantErr(t, "List of a missing key", err, cluster.ErrNotFound)

	want := map[string]string{
		"d/x": "vx", "d/b": "vb", "d/b-c": "vbc", "d/a.b": "vab", "d/y/z": "vz", "d/b/deep/er": "deep",
	}
	for k, v := range want {
		mustPut(t, s, k, v)
	}
	mustPut(t, s, "d", "dir")
	mustPut(t, s, "d-sibling/q", "not a child")
	mustPut(t, s, "e", "not a child")

	kvs, err := s.List(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"d/a.b", "d/b", "d/b-c", "d/x", "d/y"}
	values := []string{"vab", "vb", "vbc", "vx", ""}
	if len(kvs) != len(names) {
		t.Fatalf("List(d) = %v, want keys %v", keysOf(kvs), names)
	}
	for i, kv := range kvs {
		wantKV(t, kv, names[i], values[i], mustGet(t, s, names[i]).Version)
	}

	leaf, err := s.List(ctx, "d/x")
	if err != nil || len(leaf) != 0 {
		t.Fatalf("List of a leaf = %v, %v; want empty, nil", keysOf(leaf), err)
	}
	deep, err := s.List(ctx, "d/b/deep")
	if err != nil || len(deep) != 1 {
		t.Fatalf("List(d/b/deep) = %v, %v", keysOf(deep), err)
	}
	wantKV(t, deep[0], "d/b/deep/er", "deep", mustGet(t, s, "d/b/deep/er").Version)
}

func keysOf(kvs []cluster.KV) []string {
	var ks []string
	for _, kv := range kvs {
		ks = append(ks, kv.Key)
	}
	return ks
}

func testListRoot(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	kvs, err := s.List(ctx, "")
	if err != nil || len(kvs) != 0 {
		t.Fatalf("List of an empty store's root = %v, %v", keysOf(kvs), err)
	}
	mustPut(t, s, "zeta", "z")
	mustPut(t, s, "alpha/beta", "b")
	mustPut(t, s, "mid", "m")
	kvs, err = s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keysOf(kvs)); got != "[alpha mid zeta]" {
		t.Fatalf("List(\"\") = %s", got)
	}
	wantKV(t, kvs[2], "zeta", "z", mustGet(t, s, "zeta").Version)
}

func testDelete(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	wantErr(t, "Delete of a missing key", s.Delete(ctx, "gone", cluster.AnyVersion), cluster.ErrNotFound)
	wantErr(t, "conditional Delete of a missing key", s.Delete(ctx, "gone", 7), cluster.ErrNotFound)

	cv := mustPut(t, s, "p/c", "child")
	pv := mustGet(t, s, "p").Version
	wantErr(t, "Delete of a key with children", s.Delete(ctx, "p", cluster.AnyVersion), cluster.ErrHasChildren)
	wantErr(t, "conditional Delete of a key with children", s.Delete(ctx, "p", pv), cluster.ErrHasChildren)
	mustGet(t, s, "p/c")

	v2 := mustPut(t, s, "p/c", "child2")
	wantErr(t, "Delete with an old version", s.Delete(ctx, "p/c", cv), cluster.ErrVersionMismatch)
	mustGet(t, s, "p/c")
	if err := s.Delete(ctx, "p/c", v2); err != nil {
		t.Fatalf("Delete with the current version: %v", err)
	}
	_, err := s.Get(ctx, "p/c")
	wantErr(t, "Get after Delete", err, cluster.ErrNotFound)

	// The parent stays, and can go now that it has no child.
	if err := s.Delete(ctx, "p", pv); err != nil {
		t.Fatalf("Delete of the emptied parent: %v", err)
	}
	mustPut(t, s, "u", "x")
	if err := s.Delete(ctx, "u", cluster.AnyVersion); err != nil {
		t.Fatalf("unconditional Delete: %v", err)
	}
	if kvs, err := s.List(ctx, ""); err != nil || len(kvs) != 0 {
		t.Fatalf("List after deleting everything = %v, %v", keysOf(kvs), err)
	}
}

// InvalidKeys are keys every Store refuses with ErrInvalidKey.
var InvalidKeys = []string{"", "/", "/a", "a/", "a//b", ".", "..", "a/./b", "a/..", "../a", "a\x00b", "a\nb", "a\xffb"}

func testInvalidKeys(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	for _, k := range InvalidKeys {
		_, err := s.Get(ctx, k)
		wantErr(t, fmt.Sprintf("Get(%q)", k), err, cluster.ErrInvalidKey)
		_, err = s.Create(ctx, k, nil)
		wantErr(t, fmt.Sprintf("Create(%q)", k), err, cluster.ErrInvalidKey)
		_, err = s.Put(ctx, k, nil)
		wantErr(t, fmt.Sprintf("Put(%q)", k), err, cluster.ErrInvalidKey)
		_, err = s.CompareAndSet(ctx, k, nil, 1)
		wantErr(t, fmt.Sprintf("CompareAndSet(%q)", k), err, cluster.ErrInvalidKey)
		err = s.Delete(ctx, k, cluster.AnyVersion)
		wantErr(t, fmt.Sprintf("Delete(%q)", k), err, cluster.ErrInvalidKey)
		_, err = s.Watch(ctx, k)
		wantErr(t, fmt.Sprintf("Watch(%q)", k), err, cluster.ErrInvalidKey)
		if k != "" {
			_, err = s.List(ctx, k)
			wantErr(t, fmt.Sprintf("List(%q)", k), err, cluster.ErrInvalidKey)
		}
	}
	if kvs, err := s.List(ctx, ""); err != nil || len(kvs) != 0 {
		t.Fatalf("invalid keys left %v, %v", keysOf(kvs), err)
	}
}

// nextEvent returns the next event on ch, failing the test if none comes
// in eventTimeout or ch is closed.
func nextEvent(t *testing.T, ch <-chan cluster.Event) cluster.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed early")
		}
		return ev
	case <-time.After(eventTimeout):
		t.Fatal("no watch event")
	}
	panic("unreachable")
}

// awaitEvent reads events until one satisfies ok, which events may be
// coalesced into.
func awaitEvent(t *testing.T, ch <-chan cluster.Event, what string, ok func(cluster.Event) bool) cluster.Event {
	t.Helper()
	deadline := time.After(eventTimeout)
	for {
		select {
		case ev, open := <-ch:
			if !open {
				t.Fatalf("watch channel closed while waiting for %s", what)
			}
			if ok(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no watch event for %s", what)
		}
	}
}

func isPut(key string, v cluster.Version, value string) func(cluster.Event) bool {
	return func(ev cluster.Event) bool {
		return ev.Key == key && !ev.Deleted && ev.Version == v && string(ev.Value) == value
	}
}

func isDelete(key string) func(cluster.Event) bool {
	return func(ev cluster.Event) bool { return ev.Key == key && ev.Deleted }
}

func testWatchEvents(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	mustPut(t, s, "w", "one")
	ch, err := s.Watch(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	// Writes of other keys, even children, do not wake this watcher; the
	// test cannot prove a negative without waiting, so it checks that the
	// next event is the one for w.
	mustPut(t, s, "w/child", "c")
	mustPut(t, s, "wx", "c")

	v2 := mustPut(t, s, "w", "two")
	ev := nextEvent(t, ch)
	if !isPut("w", v2, "two")(ev) {
		t.Fatalf("event after Put = %+v, want w=two v%d", ev, v2)
	}
	v3, err := s.CompareAndSet(ctx, "w", []byte("three"), v2)
	if err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, ch)
	if !isPut("w", v3, "three")(ev) {
		t.Fatalf("event after CompareAndSet = %+v, want w=three v%d", ev, v3)
	}
	if err := s.Delete(ctx, "w/child", cluster.AnyVersion); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "w", v3); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, ch)
	if !isDelete("w")(ev) {
		t.Fatalf("event after Delete = %+v, want w deleted", ev)
	}
	v4, err := s.Create(ctx, "w", []byte("again"))
	if err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, ch)
	if !isPut("w", v4, "again")(ev) {
		t.Fatalf("event after re-Create = %+v, want w=again v%d", ev, v4)
	}
}

func testWatchCoalesces(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	mustPut(t, s, "co", "start")
	ch, err := s.Watch(ctx, "co")
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reads while 50 writes land; the watcher must end on the last.
	var last cluster.Version
	for i := range 50 {
		last = mustPut(t, s, "co", strconv.Itoa(i))
	}
	awaitEvent(t, ch, "the last Put", isPut("co", last, "49"))

	// Then a delete as the last step.
	for i := range 10 {
		mustPut(t, s, "co", strconv.Itoa(i))
	}
	if err := s.Delete(ctx, "co", cluster.AnyVersion); err != nil {
		t.Fatal(err)
	}
	awaitEvent(t, ch, "the final Delete", isDelete("co"))
}

func testWatchCreatedLater(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	ch, err := s.Watch(ctx, "later/key")
	if err != nil {
		t.Fatalf("Watch of a key that does not exist yet: %v", err)
	}
	v, err := s.Create(ctx, "later/key", []byte("born"))
	if err != nil {
		t.Fatal(err)
	}
	awaitEvent(t, ch, "the Create", isPut("later/key", v, "born"))
}

func testWatchCtxDone(t *testing.T, s cluster.Store) {
	ctx, cancel := context.WithCancel(testCtx(t))
	ch, err := s.Watch(ctx, "cd")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.After(eventTimeout)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				// Writes after the close must not panic (send on a
				// closed channel).
				mustPut(t, s, "cd", "after")
				return
			}
		case <-deadline:
			t.Fatal("watch channel not closed after its context was canceled")
		}
	}
}

func testWatchMany(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	var chans []<-chan cluster.Event
	for range 4 {
		ch, err := s.Watch(ctx, "many")
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	v := mustPut(t, s, "many", "x")
	for _, ch := range chans {
		awaitEvent(t, ch, "the Put", isPut("many", v, "x"))
	}
}

func testConcurrentCAS(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	if _, err := s.Create(ctx, "counter", []byte("0")); err != nil {
		t.Fatal(err)
	}
	const workers, attempts = 8, 25
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		successes int
		failure   error
	)
	for range workers {
		wg.Go(func() {
			for range attempts {
				kv, err := s.Get(ctx, "counter")
				if err == nil {
					var n int
					n, err = strconv.Atoi(string(kv.Value))
					if err == nil {
						_, err = s.CompareAndSet(ctx, "counter", []byte(strconv.Itoa(n+1)), kv.Version)
					}
				}
				mu.Lock()
				switch {
				case err == nil:
					successes++
				case errors.Is(err, cluster.ErrVersionMismatch):
				default:
					failure = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failure != nil {
		t.Fatal(failure)
	}
	got, _ := strconv.Atoi(string(mustGet(t, s, "counter").Value))
	if got != successes || successes == 0 {
		t.Fatalf("counter = %d after %d successful increments", got, successes)
	}
	t.Logf("%d of %d increments won", successes, workers*attempts)
}

func testLargeValues(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	big := make([]byte, 512<<10)
	rand.Read(big)
	v, err := s.Create(ctx, "big/one", big)
	if err != nil {
		t.Fatal(err)
	}
	kv := mustGet(t, s, "big/one")
	if !bytes.Equal(kv.Value, big) || kv.Version != v {
		t.Fatal("512 KiB value read back different")
	}
	big2 := bytes.Repeat([]byte{0xa5}, 512<<10)
	v2, err := s.CompareAndSet(ctx, "big/one", big2, v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "big/two", big); err != nil {
		t.Fatal(err)
	}
	kvs, err := s.List(ctx, "big")
	if err != nil || len(kvs) != 2 {
		t.Fatalf("List(big) = %v, %v", keysOf(kvs), err)
	}
	if !bytes.Equal(kvs[0].Value, big2) || kvs[0].Version != v2 || !bytes.Equal(kvs[1].Value, big) {
		t.Fatal("List returned other values than were written")
	}
	// A returned value is the caller's: changing it changes nothing stored.
	kvs[1].Value[0] ^= 0xff
	if !bytes.Equal(mustGet(t, s, "big/two").Value, big) {
		t.Fatal("changing a returned value changed the stored one")
	}
}

func testClosed(t *testing.T, s cluster.Store) {
	ctx := testCtx(t)
	mustPut(t, s, "k", "v")
	ch, err := s.Watch(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// An event may still be buffered; the channel must then close.
	deadline := time.After(eventTimeout)
	for closed := false; !closed; {
		select {
		case _, ok := <-ch:
			closed = !ok
		case <-deadline:
			t.Fatal("watch channel open after Close")
		}
	}
	_, err = s.Get(ctx, "k")
	wantErr(t, "Get after Close", err, cluster.ErrClosed)
	_, err = s.Create(ctx, "n", nil)
	wantErr(t, "Create after Close", err, cluster.ErrClosed)
	_, err = s.Put(ctx, "k", nil)
	wantErr(t, "Put after Close", err, cluster.ErrClosed)
	_, err = s.CompareAndSet(ctx, "k", nil, 1)
	wantErr(t, "CompareAndSet after Close", err, cluster.ErrClosed)
	wantErr(t, "Delete after Close", s.Delete(ctx, "k", cluster.AnyVersion), cluster.ErrClosed)
	_, err = s.List(ctx, "")
	wantErr(t, "List after Close", err, cluster.ErrClosed)
	_, err = s.Watch(ctx, "k")
	wantErr(t, "Watch after Close", err, cluster.ErrClosed)
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
