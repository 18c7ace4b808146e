package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/controller/rest"
	"github.com/sluice-streams/sluice/controller/rest/resttest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fixed(scope, stream string, n int32) api.StreamConfig {
	return api.StreamConfig{ScopeName: scope, StreamName: stream, ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: n}}
}

// recorder is a transport that notes which route each request went to and
// the status it got, so a test can check that it used every route.
type recorder struct {
	mux *http.ServeMux
	mu  sync.Mutex
	hit map[rest.Route][]int
}

func newRecorder() *recorder {
	rec := &recorder{mux: http.NewServeMux(), hit: map[rest.Route][]int{}}
	for _, rt := range rest.Routes() {
		rec.mux.Handle(rt.Method+" "+rt.Pattern, http.NotFoundHandler())
	}
	return rec
}

func (rec *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	_, pattern := rec.mux.Handler(req)
	method, path, _ := strings.Cut(pattern, " ")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rt := rest.Route{Method: method, Pattern: path}
	rec.hit[rt] = append(rec.hit[rt], resp.StatusCode)
	return resp, nil
}

// TestEveryRoute walks a stream's life through ctlclient.Client, through every
// route, and checks each answer and its status.
func TestEveryRoute(t *testing.T) {
	nodeAddr := resttest.StartNode(t)
	ctl := resttest.StartController(t, nodeAddr, resttest.WithTier2("file:///srv/sluice/tier2"))
	rec := newRecorder()
	c := ctlclient.NewClient(ctl.URL+"/", ctlclient.WithHTTPClient(&http.Client{Transport: rec}))
	ctx := ctxT(t)

	must(t, c.Health(ctx))
	tier2, err := c.Tier2URI(ctx)
	must(t, err)
	equal(t, "tier 2", tier2, "file:///srv/sluice/tier2")

	must(t, c.CreateScope(ctx, "sales"))
	must(t, c.CreateScope(ctx, "hr"))
	scopes, err := c.ListScopes(ctx)
	must(t, err)
	equal(t, "scopes", scopes, []api.ScopeProperty{{ScopeName: "hr"}, {ScopeName: "sales"}})
	p, err := c.GetScope(ctx, "sales")
	must(t, err)
	equal(t, "scope", p, api.ScopeProperty{ScopeName: "sales"})

	cfg := fixed("sales", "orders", 2)
	cfg.Tags = map[string]string{"team": "billing"}
	info, err := c.CreateStream(ctx, cfg)
	must(t, err)
	if info.StreamName != "orders" || info.Sealed || info.Epoch != 0 || info.CreationTime == 0 {
		t.Fatalf("created %+v", info)
	}
	other := fixed("sales", "refunds", 1)
	other.Tags = map[string]string{"team": "support"}
	_, err = c.CreateStream(ctx, other)
	must(t, err)
	for _, tc := range []struct {
		tags map[string]string
		want []string
	}{
		{nil, []string{"orders", "refunds"}},
		{map[string]string{"team": "billing"}, []string{"orders"}},
		{map[string]string{"team": ""}, []string{"orders", "refunds"}},
		{map[string]string{"team": "nobody"}, []string{}},
	} {
		streams, err := c.ListStreams(ctx, "sales", tc.tags)
		must(t, err)
		names := []string{}
		for _, s := range streams {
			names = append(names, s.StreamName)
		}
		equal(t, "streams with tags "+strings.Join(tc.want, ","), names, tc.want)
	}

	got, err := c.GetStream(ctx, "sales", "orders")
	must(t, err)
	equal(t, "stream", got, info)
	// This node has no tier 2: nothing is tiered, and it reports no writers.
	tier, err := c.StreamTier(ctx, "sales", "orders")
	must(t, err)
	equal(t, "stream tier", tier, api.StreamTier{Scope: "sales", Stream: "orders", Segments: []api.SegmentTier{
		{Segment: "sales/orders/0.#epoch.0"}, {Segment: "sales/orders/1.#epoch.0"}}})
	nodes, err := c.NodeTiers(ctx)
	must(t, err)
	equal(t, "node tiers", nodes, api.NodeTierList{Nodes: []api.NodeTier{{Node: "standalone", Addr: nodeAddr, Containers: []api.ContainerTier{}}}})
	// Nodes: the standalone node; draining is recorded (for a cluster's leader).
	nl, err := c.Nodes(ctx)
	must(t, err)
	equal(t, "nodes", nl, []api.NodeStatus{{ID: "standalone", Addr: nodeAddr, Live: true, Containers: []int{0, 1, 2, 3}, Moving: []int{}}})
	// Only a node the cluster knows can be drained: register one as a
	// node does.
	_, err = ctl.Store.Put(ctx, layout.NodesKey+"/node-7", []byte(`{"addr":"127.0.0.1:1"}`))
	must(t, err)
	must(t, c.SetDrain(ctx, "node-7", true))
	nl, err = c.Nodes(ctx)
	must(t, err)
	equal(t, "nodes while draining", nl, []api.NodeStatus{{ID: "node-7", Addr: "127.0.0.1:1", Live: true, Draining: true, Containers: []int{}, Moving: []int{}}})
	must(t, c.SetDrain(ctx, "node-7", false))
	wantErr(t, c.SetDrain(ctx, "node-8", true), ctlclient.ErrNotFound, `node "node-8": not found`)
	wantErr(t, c.SetDrain(ctx, "a/b", true), ctlclient.ErrInvalid, "node id")
	_, err = c.StreamTier(ctx, "sales", "nothing")
	wantErr(t, err, ctlclient.ErrNotFound, "stream sales/nothing: not found")
	cfg.RetentionPolicy = &api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: 7}
	upd, err := c.UpdateStream(ctx, "sales", "orders", cfg)
	must(t, err)
	equal(t, "updated retention", upd.RetentionPolicy, cfg.RetentionPolicy)

	segs, err := c.CurrentSegments(ctx, "sales", "orders")
	must(t, err)
	if len(segs) != 2 || segs[0].KeyLow != 0 || segs[0].KeyHigh != 0.5 || segs[1].KeyHigh != 1 {
		t.Fatalf("current segments %+v", segs)
	}
	s0, s1 := segs[0].Segment, segs[1].Segment
	cut, atSegs, err := c.SegmentsAt(ctx, "sales", "orders", time.Now())
	must(t, err)
	equal(t, "cut at now", cut, api.StreamCut{s0: 0, s1: 0})
	equal(t, "segments at now", atSegs, segs)
	head, err := c.HeadCut(ctx, "sales", "orders")
	must(t, err)
	equal(t, "head", head, api.StreamCut{s0: 0, s1: 0})

	// A transaction committed, one aborted.
	txn, err := c.CreateTxn(ctx, "sales", "orders", time.Minute)
	must(t, err)
	if txn.Status != api.TxnOpen || len(txn.Segments) != 2 || txn.LeaseMillis != 60000 {
		t.Fatalf("txn %+v", txn)
	}
	gotTxn, err := c.GetTxn(ctx, "sales", "orders", txn.ID)
	must(t, err)
	equal(t, "txn", gotTxn, txn)
	pinged, err := c.PingTxn(ctx, "sales", "orders", txn.ID, 2*time.Minute)
	must(t, err)
	if pinged.LeaseMillis != 120000 {
		t.Fatalf("pinged %+v", pinged)
	}
	must(t, c.CommitTxn(ctx, "sales", "orders", txn.ID))
	gotTxn, err = c.GetTxn(ctx, "sales", "orders", txn.ID)
	must(t, err)
	equal(t, "committed status", gotTxn.Status, api.TxnCommitted)
	txn2, err := c.CreateTxn(ctx, "sales", "orders", 0)
	must(t, err)
	must(t, c.AbortTxn(ctx, "sales", "orders", txn2.ID))
	gotTxn, err = c.GetTxn(ctx, "sales", "orders", txn2.ID)
	must(t, err)
	equal(t, "aborted status", gotTxn.Status, api.TxnAborted)

	// Split segment 0.
	newSegs, err := c.Scale(ctx, "sales", "orders", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}})
	must(t, err)
	if len(newSegs) != 2 || newSegs[0].Epoch != 1 || newSegs[0].KeyHigh != 0.25 || newSegs[1].KeyLow != 0.25 {
		t.Fatalf("scaled to %+v", newSegs)
	}
	succ, err := c.Successors(ctx, s0)
	must(t, err)
	if len(succ) != 2 || succ[0].Segment != newSegs[0] || !reflect.DeepEqual(succ[0].Predecessors, []string{s0}) {
		t.Fatalf("successors of %s: %+v", s0, succ)
	}
	succ, err = c.Successors(ctx, s1)
	must(t, err)
	equal(t, "successors of an active segment", succ, []api.Successor{})
	epochs, err := c.Epochs(ctx, "sales", "orders")
	must(t, err)
	if len(epochs) != 2 || !reflect.DeepEqual(epochs[0].Segments, segs) || !reflect.DeepEqual(epochs[1].Segments, []api.SegmentRange{newSegs[0], newSegs[1], segs[1]}) {
		t.Fatalf("epochs after a scale: %+v", epochs)
	}
	sr, err := c.SegmentRange(ctx, newSegs[1].Segment)
	must(t, err)
	equal(t, "segment range", sr, newSegs[1])
	uri, err := c.SegmentURI(ctx, newSegs[1].Segment)
	must(t, err)
	equal(t, "segment uri", uri, api.SegmentURI{Endpoint: nodeAddr, Container: protocol.ContainerOf(newSegs[1].Segment, 4)})
	between, err := c.SegmentsBetween(ctx, "sales", "orders", nil, nil)
	must(t, err)
	if len(between) != 4 {
		t.Fatalf("segments between head and end: %+v", between)
	}
	newCut := api.StreamCut{newSegs[0].Segment: 0, newSegs[1].Segment: 0, s1: 0}
	between, err = c.SegmentsBetween(ctx, "sales", "orders", newCut, nil)
	must(t, err)
	if len(between) != 3 {
		t.Fatalf("segments between %v and end: %+v", newCut, between)
	}

	must(t, c.TruncateStream(ctx, "sales", "orders", newCut))
	head, err = c.HeadCut(ctx, "sales", "orders")
	must(t, err)
	equal(t, "head after truncation", head, newCut)

	// Reader groups: an opaque state written with compare-and-set.
	g, err := c.CreateReaderGroup(ctx, "sales", api.ReaderGroupConfig{GroupName: "billing",
		Streams: []string{"sales/orders"}, StartCut: newCut, State: json.RawMessage(`{"n":1}`)})
	must(t, err)
	_, err = c.CreateReaderGroup(ctx, "sales", api.ReaderGroupConfig{GroupName: "billing",
		Streams: []string{"sales/orders"}, State: json.RawMessage(`{}`)})
	wantErr(t, err, ctlclient.ErrExists, "reader group sales/billing: already exists")
	_, err = c.CreateReaderGroup(ctx, "sales", api.ReaderGroupConfig{GroupName: "bad",
		Streams: []string{"sales/orders"}, State: json.RawMessage(`[1]`)})
	wantErr(t, err, ctlclient.ErrInvalid, "want a JSON object")
	v, err := c.UpdateReaderGroupState(ctx, "sales", "billing", g.Version, json.RawMessage(`{"n":2}`))
	must(t, err)
	_, err = c.UpdateReaderGroupState(ctx, "sales", "billing", g.Version, json.RawMessage(`{"n":3}`))
	wantErr(t, err, ctlclient.ErrConflict, "reader group sales/billing: state version")
	g, err = c.GetReaderGroup(ctx, "sales", "billing")
	must(t, err)
	if g.Version != v || string(g.State) != `{"n":2}` || !reflect.DeepEqual(g.StartCut, newCut) {
		t.Fatalf("reader group after update: %+v (want version %d)", g, v)
	}
	groups, err := c.ListReaderGroups(ctx, "sales")
	must(t, err)
	if len(groups) != 1 || groups[0].GroupName != "billing" {
		t.Fatalf("reader groups: %+v", groups)
	}
	must(t, c.DeleteReaderGroup(ctx, "sales", "billing"))
	_, err = c.GetReaderGroup(ctx, "sales", "billing")
	wantErr(t, err, ctlclient.ErrNotFound, "reader group sales/billing: not found")

	// Event time: a writer's report, the watermark it makes, its removal.
	must(t, c.NoteWriterTime(ctx, "sales", "orders", "w/1", api.WriterTime{Time: 1000, Position: api.StreamCut{s1: 0}}))
	must(t, ctl.Service.WatermarkStep(ctx))
	marks, err := c.Watermarks(ctx, "sales", "orders", 0)
	must(t, err)
	if len(marks) != 1 || marks[0].LowerTime != 1000 || marks[0].UpperTime != 1000 || len(marks[0].Segments) != len(marks[0].Cut) {
		t.Fatalf("watermarks: %+v", marks)
	}
	must(t, c.RemoveWriter(ctx, "sales", "orders", "w/1"))
	err = c.NoteWriterTime(ctx, "sales", "orders", "w/1", api.WriterTime{Time: -1})
	wantErr(t, err, ctlclient.ErrInvalid, "time -1: not in 0..")

	must(t, c.SealStream(ctx, "sales", "orders"))
	got, err = c.GetStream(ctx, "sales", "orders")
	must(t, err)
	if !got.Sealed {
		t.Fatal("not sealed")
	}
	must(t, c.DeleteStream(ctx, "sales", "orders"))
	_, err = c.GetStream(ctx, "sales", "orders")
	wantErr(t, err, ctlclient.ErrNotFound, "stream sales/orders: not found")
	must(t, c.SealStream(ctx, "sales", "refunds"))
	must(t, c.DeleteStream(ctx, "sales", "refunds"))
	must(t, c.DeleteScope(ctx, "sales"))
	scopes, err = c.ListScopes(ctx)
	must(t, err)
	equal(t, "scopes after delete", scopes, []api.ScopeProperty{{ScopeName: "hr"}})

	// Every route was used, and answered with the status of its kind.
	for _, rt := range rest.Routes() {
		statuses := rec.hit[rt]
		if len(statuses) == 0 {
			t.Errorf("route %s %s not tested", rt.Method, rt.Pattern)
			continue
		}
		want := http.StatusOK
		switch {
		case rt.Method == "DELETE" || strings.HasSuffix(rt.Pattern, "/truncate") || strings.HasSuffix(rt.Pattern, "/commit") || strings.HasSuffix(rt.Pattern, "/drain") || strings.HasSuffix(rt.Pattern, "/time"):
			want = http.StatusNoContent
		case rt.Method == "POST" && (rt.Pattern == "/v1/scopes" || strings.HasSuffix(rt.Pattern, "/streams") || strings.HasSuffix(rt.Pattern, "/transactions") || strings.HasSuffix(rt.Pattern, "/readergroups")):
			want = http.StatusCreated
		}
		if statuses[0] != want {
			t.Errorf("route %s %s: status %d, want %d", rt.Method, rt.Pattern, statuses[0], want)
		}
	}
}

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func wantErr(t *testing.T, err, sentinel error, msg string) {
	t.Helper()
	if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("err = %v, want %v saying %q", err, sentinel, msg)
	}
}

// send sends a raw request (a body as application/json) and returns the
// status, the reply's headers and body.
func send(t *testing.T, method, u, body string) (int, http.Header, []byte) {
	t.Helper()
	var hdr map[string]string
	if body != "" {
		hdr = map[string]string{"Content-Type": "application/json"}
	}
	return sendHeaders(t, method, u, body, hdr)
}

// sendHeaders is send with the request headers hdr (and no others).
func sendHeaders(t *testing.T, method, u, body string, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctxT(t), method, u, rd)
	must(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, resp.Header, b
}

// TestBadInput sends every kind of bad request: each gets its 4xx with a
// JSON api.Error saying what is wrong, and the store is unchanged.
func TestBadInput(t *testing.T) {
	ctl := resttest.StartController(t, resttest.StartNode(t))
	c := ctlclient.NewClient(ctl.URL)
	ctx := ctxT(t)
	must(t, c.CreateScope(ctx, "s"))
	_, err := c.CreateStream(ctx, fixed("s", "st", 2))
	must(t, err)
	_, err = c.CreateStream(ctx, fixed("s", "sealed", 1))
	must(t, err)
	must(t, c.SealStream(ctx, "s", "sealed"))
	segs, err := c.CurrentSegments(ctx, "s", "st")
	must(t, err)
	s0, s1 := segs[0].Segment, segs[1].Segment
	txn, err := c.CreateTxn(ctx, "s", "st", time.Minute)
	must(t, err)
	must(t, c.AbortTxn(ctx, "s", "st", txn.ID))

	const st = "/v1/scopes/s/streams/st"
	cutJSON := func(c api.StreamCut) string { b, _ := json.Marshal(c); return string(b) }
	long := strings.Repeat("a", 256)
	tests := []struct {
		name, method, path, body string
		status                   int
		code, msg                string
	}{
		// Names.
		{"scope name with a space", "POST", "/v1/scopes", `{"scopeName":"bad name"}`, 400, "INVALID", `"bad name"`},
		{"reserved scope name", "POST", "/v1/scopes", `{"scopeName":"_system"}`, 400, "INVALID", "reserved"},
		{"scope name too long", "POST", "/v1/scopes", `{"scopeName":"` + long + `"}`, 400, "INVALID", "length 256"},
		{"empty scope name", "POST", "/v1/scopes", `{"scopeName":""}`, 400, "INVALID", "length 0"},
		{"bad scope name in path", "GET", "/v1/scopes/bad%20name", "", 400, "INVALID", `"bad name"`},
		{"bad stream name", "POST", "/v1/scopes/s/streams", `{"streamName":"a:b","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1}}`, 400, "INVALID", `"a:b"`},
		{"reserved stream name", "POST", "/v1/scopes/s/streams", `{"streamName":"_x","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1}}`, 400, "INVALID", "reserved"},
		{"bad stream name in path", "GET", "/v1/scopes/s/streams/%2E%2E", "", 400, "INVALID", "reserved"},
		{"escaped slash in reader group scope", "DELETE", "/v1/scopes/s%2Fstreams/readergroups/g", "", 400, "INVALID", `"s/streams"`},
		{"escaped slash in reader group scope, get", "GET", "/v1/scopes/s%2Fstreams/readergroups/g", "", 400, "INVALID", `"s/streams"`},
		{"body scope differs from path", "POST", "/v1/scopes/s/streams", `{"scopeName":"t","streamName":"x","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1}}`, 400, "INVALID", `scopeName "t" differs`},
		{"update renames", "PUT", st, `{"streamName":"other","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1}}`, 400, "INVALID", "cannot change"},
		{"bad segment name", "GET", "/v1/segments/garbage/successors", "", 400, "INVALID", "garbage"},
		{"bad segment name to locate", "GET", "/v1/segments/garbage/uri", "", 400, "INVALID", "garbage"},
		{"transaction segment", "GET", "/v1/segments/" + url.PathEscape(txn.Segments[0]), "", 400, "INVALID", "transaction segment"},
		{"bad transaction id", "GET", st + "/transactions/not-a-uuid", "", 400, "INVALID", "not-a-uuid"},

		// Unknown things.
		{"unknown scope", "GET", "/v1/scopes/nope", "", 404, "NOT_FOUND", "scope nope: not found"},
		{"delete unknown scope", "DELETE", "/v1/scopes/nope", "", 404, "NOT_FOUND", "scope nope: not found"},
		{"stream in unknown scope", "POST", "/v1/scopes/nope/streams", `{"streamName":"x","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1}}`, 404, "NOT_FOUND", "scope nope: not found"},
		{"list streams of unknown scope", "GET", "/v1/scopes/nope/streams", "", 404, "NOT_FOUND", "scope nope"},
		{"unknown stream", "GET", "/v1/scopes/s/streams/nope", "", 404, "NOT_FOUND", "stream s/nope: not found"},
		{"seal unknown stream", "PUT", "/v1/scopes/s/streams/nope/state", `{"streamState":"SEALED"}`, 404, "NOT_FOUND", "stream s/nope"},
		{"delete unknown stream", "DELETE", "/v1/scopes/s/streams/nope", "", 404, "NOT_FOUND", "stream s/nope"},
		{"scale unknown stream", "POST", "/v1/scopes/s/streams/nope/scale", `{"sealedSegments":[0],"newRanges":[{"low":0,"high":1}]}`, 404, "NOT_FOUND", "stream s/nope"},
		{"segments of unknown stream", "GET", "/v1/scopes/s/streams/nope/segments", "", 404, "NOT_FOUND", "stream s/nope"},
		{"head of unknown stream", "GET", "/v1/scopes/s/streams/nope/head", "", 404, "NOT_FOUND", "stream s/nope"},
		{"scaling-events of unknown stream", "GET", "/v1/scopes/s/streams/nope/scaling-events", "", 404, "NOT_FOUND", "stream s/nope"},
		{"scaling-events, unknown scope", "GET", "/v1/scopes/nope/streams/x/scaling-events", "", 404, "NOT_FOUND", "nope"},
		{"transaction on unknown stream", "POST", "/v1/scopes/s/streams/nope/transactions", "", 404, "NOT_FOUND", "stream s/nope"},
		{"unknown segment", "GET", "/v1/segments/" + url.PathEscape("s/st/9.#epoch.0") + "/successors", "", 404, "NOT_FOUND", "s/st/9.#epoch.0"},
		{"unknown transaction", "GET", st + "/transactions/0b7f5a2c-1c9e-4a8b-9c1d-2e3f4a5b6c7d", "", 404, "NOT_FOUND", "0b7f5a2c"},
		{"unknown route", "GET", "/v1/nothing", "", 404, "NOT_FOUND", `no route for GET "/v1/nothing"`},
		{"metrics not served yet", "GET", "/metrics", "", 404, "NOT_FOUND", "/metrics"},

		// Existing things and the state.
		{"scope exists", "POST", "/v1/scopes", `{"scopeName":"s"}`, 409, "EXISTS", "scope s: already exists"},
		{"stream exists", "POST", "/v1/scopes/s/streams", `{"streamName":"st","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1}}`, 409, "EXISTS", "stream s/st: already exists"},
		{"delete scope with streams", "DELETE", "/v1/scopes/s", "", 409, "CONFLICT", "has 2 streams"},
		{"delete unsealed stream", "DELETE", st, "", 409, "CONFLICT", "not sealed"},
		{"scale sealed stream", "POST", "/v1/scopes/s/streams/sealed/scale", `{"sealedSegments":[0],"newRanges":[{"low":0,"high":0.5},{"low":0.5,"high":1}]}`, 409, "CONFLICT", "sealed"},
		{"update sealed stream", "PUT", "/v1/scopes/s/streams/sealed", `{"scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1}}`, 409, "CONFLICT", "sealed"},
		{"transaction on sealed stream", "POST", "/v1/scopes/s/streams/sealed/transactions", `{}`, 409, "CONFLICT", "sealed"},
		{"commit aborted transaction", "POST", st + "/transactions/" + txn.ID + "/commit", "", 409, "CONFLICT", "ABORT"},
		{"ping aborted transaction", "POST", st + "/transactions/" + txn.ID + "/ping", `{"leaseMillis":1000}`, 409, "CONFLICT", ""},

		// Scales whose ranges do not cover exactly the sealed ranges.
		{"scale leaves a gap", "POST", st + "/scale", `{"sealedSegments":[0],"newRanges":[{"low":0,"high":0.3}]}`, 400, "INVALID", "gap"},
		{"scale overlaps", "POST", st + "/scale", `{"sealedSegments":[0],"newRanges":[{"low":0,"high":0.3},{"low":0.2,"high":0.5}]}`, 400, "INVALID", "overlap"},
		{"scale beyond the sealed ranges", "POST", st + "/scale", `{"sealedSegments":[0],"newRanges":[{"low":0,"high":0.6}]}`, 400, "INVALID", ""},
		{"scale of an unknown segment", "POST", st + "/scale", `{"sealedSegments":[7],"newRanges":[{"low":0,"high":1}]}`, 400, "INVALID", "7"},
		{"scale with no ranges", "POST", st + "/scale", `{"sealedSegments":[0],"newRanges":[]}`, 400, "INVALID", "newRanges: 0 items"},
		{"scale of nothing", "POST", st + "/scale", `{"sealedSegments":[],"newRanges":[{"low":0,"high":0.5}]}`, 400, "INVALID", ""},

		// Bad configurations, cuts, leases and queries.
		{"no segments", "POST", "/v1/scopes/s/streams", `{"streamName":"x","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":0}}`, 400, "INVALID", "minSegments"},
		{"unknown policy", "POST", "/v1/scopes/s/streams", `{"streamName":"x","scalingPolicy":{"type":"FAST","minSegments":1}}`, 400, "INVALID", `"FAST"`},
		{"bad retention", "POST", "/v1/scopes/s/streams", `{"streamName":"x","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1},"retentionPolicy":{"type":"LIMITED_DAYS","value":0}}`, 400, "INVALID", "retentionPolicy.value"},
		{"unseal", "PUT", st + "/state", `{"streamState":"ACTIVE"}`, 400, "INVALID", `streamState "ACTIVE"`},
		{"the field state (not Pravega's name)", "PUT", st + "/state", `{"state":"SEALED"}`, 400, "INVALID", `unknown field "state"`},
		{"cut with a bad name", "POST", st + "/truncate", `{"nonsense":1}`, 400, "INVALID", "nonsense"},
		{"cut that does not cover", "POST", st + "/truncate", cutJSON(api.StreamCut{s0: 0}), 400, "INVALID", "stream cut"},
		{"cut beyond the end", "POST", st + "/truncate", cutJSON(api.StreamCut{s0: 10, s1: 0}), 400, "INVALID", "beyond its length"},
		{"negative offset", "POST", st + "/truncate", cutJSON(api.StreamCut{s0: -1, s1: 0}), 400, "INVALID", "negative offset"},
		{"segments-between bad cut", "POST", st + "/segments-between", `{"from":{"x":1}}`, 400, "INVALID", `"x"`},
		{"negative lease", "POST", st + "/transactions", `{"leaseMillis":-5}`, 400, "INVALID", "leaseMillis -5"},
		{"lease too long", "POST", st + "/transactions", `{"leaseMillis":86400000}`, 400, "INVALID", "lease"},
		{"bad time", "GET", st + "/segments?at=yesterday", "", 400, "INVALID", "yesterday"},
		{"bad tag query", "GET", "/v1/scopes/s/streams?tag==x", "", 400, "INVALID", "tag"},

		// Malformed bodies.
		{"malformed JSON", "POST", "/v1/scopes", `{"scopeName":`, 400, "INVALID", "malformed JSON"},
		{"not JSON", "POST", "/v1/scopes", `scopeName=x`, 400, "INVALID", "malformed JSON"},
		{"unknown field", "POST", "/v1/scopes", `{"scopeName":"x","owner":"me"}`, 400, "INVALID", `unknown field "owner"`},
		{"wrong type", "POST", "/v1/scopes", `{"scopeName":5}`, 400, "INVALID", `"scopeName"`},
		{"two values", "POST", "/v1/scopes", `{"scopeName":"x"} {"scopeName":"y"}`, 400, "INVALID", "more than one JSON value"},
		{"stray brace after the value", "POST", "/v1/scopes", `{"scopeName":"x"} }`, 400, "INVALID", "more than one JSON value"},
		{"empty body", "POST", "/v1/scopes", "", 400, "INVALID", "empty"},
		{"body over 1 MiB", "POST", "/v1/scopes", `{"scopeName":"` + strings.Repeat("x", rest.MaxBodySize) + `"}`, 400, "INVALID", "larger than 1048576 bytes"},
		{"unknown field in a config", "PUT", st, `{"scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1,"max":3}}`, 400, "INVALID", `unknown field "max"`},
		{"malformed scale", "POST", st + "/scale", `{"sealedSegments":"0"}`, 400, "INVALID", "sealedSegments"},

		// Methods.
		{"method not allowed", "PATCH", "/v1/scopes", "", 405, "METHOD_NOT_ALLOWED", "allowed: POST, GET"},
		{"method not allowed on a stream", "POST", st, "{}", 405, "METHOD_NOT_ALLOWED", "allowed: GET, PUT, DELETE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := resttest.Dump(t, ctl.Store)
			status, hdr, body := send(t, tc.method, ctl.URL+tc.path, tc.body)
			var e api.Error
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil || hdr.Get("Content-Type") != "application/json" {
				t.Fatalf("reply %d %q (%s) is not a JSON api.Error: %v", status, body, hdr.Get("Content-Type"), err)
			}
			if status != tc.status || e.Code != tc.code || e.Message == "" || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("got %d %+v, want %d %s saying %q", status, e, tc.status, tc.code, tc.msg)
			}
			if status == 405 && hdr.Get("Allow") == "" {
				t.Error("405 without an Allow header")
			}
			t.Logf("%d %s: %s", status, e.Code, e.Message)
			equal(t, "store after the request", resttest.Dump(t, ctl.Store), before)
		})
	}
}

// TestScalingEvents scales a stream twice through the real stack and reads
// its three epochs back, each with its segments' ranges in key order.
func TestScalingEvents(t *testing.T) {
	ctl := resttest.StartController(t, resttest.StartNode(t))
	c := ctlclient.NewClient(ctl.URL)
	ctx := ctxT(t)
	must(t, c.CreateScope(ctx, "s"))
	info, err := c.CreateStream(ctx, fixed("s", "x", 2))
	must(t, err)
	// Split segment 1 ([0.5, 1)) into three, then merge 0 and 2 ([0, 0.7)).
	_, err = c.Scale(ctx, "s", "x", api.ScaleRequest{SealedSegments: []int64{1},
		NewRanges: []api.KeyRange{{Low: 0.5, High: 0.7}, {Low: 0.7, High: 0.9}, {Low: 0.9, High: 1}}})
	must(t, err)
	_, err = c.Scale(ctx, "s", "x", api.ScaleRequest{SealedSegments: []int64{0, 2},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.7}}})
	must(t, err)

	epochs, err := c.Epochs(ctx, "s", "x")
	must(t, err)
	seg := func(n, epoch int64, low, high float64) api.SegmentRange {
		return api.SegmentRange{Segment: protocol.SegmentName("s", "x", n, epoch), Number: n, Epoch: epoch, KeyLow: low, KeyHigh: high}
	}
	want := [][]api.SegmentRange{
		{seg(0, 0, 0, 0.5), seg(1, 0, 0.5, 1)},
		{seg(0, 0, 0, 0.5), seg(2, 1, 0.5, 0.7), seg(3, 1, 0.7, 0.9), seg(4, 1, 0.9, 1)},
		{seg(5, 2, 0, 0.7), seg(3, 1, 0.7, 0.9), seg(4, 1, 0.9, 1)},
	}
	if len(epochs) != len(want) {
		t.Fatalf("%d epochs, want %d: %+v", len(epochs), len(want), epochs)
	}
	for i, e := range epochs {
		if e.Epoch != int64(i) {
			t.Errorf("epochs[%d].Epoch = %d", i, e.Epoch)
		}
		equal(t, fmt.Sprintf("epoch %d segments", i), e.Segments, want[i])
		if i == 0 && e.CreationTime != info.CreationTime || i > 0 && e.CreationTime < epochs[i-1].CreationTime {
			t.Errorf("epoch %d created at %d (stream at %d, previous epoch at %d)", i, e.CreationTime, info.CreationTime, epochs[max(i-1, 0)].CreationTime)
		}
	}
	cur, err := c.CurrentSegments(ctx, "s", "x")
	must(t, err)
	equal(t, "current segments", cur, epochs[len(epochs)-1].Segments)
	got, err := c.GetStream(ctx, "s", "x")
	must(t, err)
	equal(t, "stream epoch", got.Epoch, epochs[len(epochs)-1].Epoch)

	_, err = c.Epochs(ctx, "s", "nope")
	wantErr(t, err, ctlclient.ErrNotFound, "stream s/nope: not found")
	_, err = c.Epochs(ctx, "s", "a b")
	wantErr(t, err, ctlclient.ErrInvalid, `"a b"`)
}

// TestClientErrors checks that Client errors carry the status, code and
// message, and match the package's sentinels.
func TestClientErrors(t *testing.T) {
	ctl := resttest.StartController(t, resttest.StartNode(t))
	c := ctlclient.NewClient(ctl.URL)
	ctx := ctxT(t)
	_, err := c.GetScope(ctx, "nope")
	var re *ctlclient.Error
	if !errors.As(err, &re) || re.StatusCode != 404 || re.Code != api.CodeNotFound || err.Error() != "scope nope: not found" {
		t.Fatalf("err = %#v", err)
	}
	wantErr(t, err, ctlclient.ErrNotFound, "scope nope")
	must(t, c.CreateScope(ctx, "s"))
	wantErr(t, c.CreateScope(ctx, "s"), ctlclient.ErrExists, "scope s: already exists")
	wantErr(t, c.CreateScope(ctx, "a b"), ctlclient.ErrInvalid, `"a b"`)
	_, err = c.CreateStream(ctx, fixed("s", "x", 1))
	must(t, err)
	wantErr(t, c.DeleteScope(ctx, "s"), ctlclient.ErrConflict, "has 1 streams")

	// A controller that is not there.
	dead := ctlclient.NewClient("http://127.0.0.1:1")
	err = dead.Health(ctx)
	if !errors.Is(err, ctlclient.ErrUnreachable) || !strings.HasPrefix(err.Error(), "controller http://127.0.0.1:1 unreachable: ") {
		t.Fatalf("err = %v", err)
	}
}

// downLocator answers that every container is unavailable.
type downLocator struct{}

func (downLocator) NodeFor(ctx context.Context, segment string) (string, error) {
	_, err := downLocator{}.Locate(ctx, segment)
	return "", err
}

func (downLocator) Locate(_ context.Context, segment string) (controller.Location, error) {
	return controller.Location{}, fmt.Errorf("segment %s: container 1: its node n1 is not live: %w", segment, protocol.ErrContainerUnavailable)
}

// TestSegmentURIUnavailable: a segment whose container no live node serves
// is 503 UNAVAILABLE, also for a controller without a locator.
func TestSegmentURIUnavailable(t *testing.T) {
	seg := protocol.SegmentName("s", "st", 0, 0)
	for name, h := range map[string]http.Handler{
		"owner down": rest.NewHandler(nil, nil, rest.WithLocator(downLocator{})),
		"no locator": rest.NewHandler(nil, nil),
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			status, _, body := send(t, "GET", srv.URL+"/v1/segments/"+url.PathEscape(seg)+"/uri", "")
			var e api.Error
			if status != 503 || json.Unmarshal(body, &e) != nil || e.Code != api.CodeUnavailable || e.Message == "" {
				t.Fatalf("status %d, body %s; want 503 UNAVAILABLE", status, body)
			}
			_, err := ctlclient.NewClient(srv.URL).SegmentURI(ctxT(t), seg)
			if !errors.Is(err, ctlclient.ErrUnavailable) {
				t.Fatalf("client err = %v, want ErrUnavailable", err)
			}
		})
	}
}

func TestTier2NotConfigured(t *testing.T) {
	ctl := resttest.StartController(t, resttest.StartNode(t))
	_, err := ctlclient.NewClient(ctl.URL).Tier2URI(ctxT(t))
	wantErr(t, err, ctlclient.ErrNotFound, "tier 2 is not configured")
	var e *ctlclient.Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusNotFound {
		t.Fatalf("err = %#v, want a 404", err)
	}
}
