package scheduler

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestRequestDrainOfUnknownNode: a controller answers 404 NOT_FOUND to a
// drain of a node it does not know (one that never registered, say);
// there is nothing to drain, so the request succeeds and the watcher goes
// on to GET /v1/nodes, where the absent node counts as drained. Other
// failures stay errors, to be retried.
func TestRequestDrainOfUnknownNode(t *testing.T) {
	var status atomic.Int32
	status.Store(http.StatusNotFound)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Origin") != "" {
			http.Error(w, "want JSON and no Origin", http.StatusUnsupportedMediaType)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		w.Write([]byte(`{"code":"NOT_FOUND","message":"node \"node-9\": not found"}`))
	}))
	defer srv.Close()
	d := &Driver{cfg: Config{HTTPClient: srv.Client()}}
	ctx := context.Background()
	if err := d.requestDrain(ctx, srv.URL, "node-9"); err != nil {
		t.Fatalf("drain of an unknown node: %v, want nil", err)
	}
	if drained(nil, "node-9") != true {
		t.Fatal("a node the controller does not list is not drained")
	}
	status.Store(http.StatusInternalServerError)
	if err := d.requestDrain(ctx, srv.URL, "node-9"); !errors.Is(err, ErrController) {
		t.Fatalf("drain on a failing controller: %v, want ErrController", err)
	}
}
