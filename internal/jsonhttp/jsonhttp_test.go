package jsonhttp

import (
	"context"
	"io"
	"net/http"
	"testing"
)

func TestNewRequest(t *testing.T) {
	req, err := NewRequest(context.Background(), http.MethodPost, "http://127.0.0.1:1/x", map[string]int{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(req.Body)
	if string(b) != `{"a":1}` || req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Accept") != "application/json" {
		t.Fatalf("body %q, headers %v", b, req.Header)
	}
	req, err = NewRequest(context.Background(), http.MethodGet, "http://127.0.0.1:1/x", nil)
	if err != nil || req.Body != nil || req.Header.Get("Content-Type") != "" {
		t.Fatalf("GET: %v, body %v, headers %v", err, req.Body, req.Header)
	}
	if _, err := NewRequest(context.Background(), http.MethodPost, "http://127.0.0.1:1/x", func() {}); err == nil {
		t.Fatal("a value JSON cannot encode was sent")
	}
	if _, err := NewRequest(context.Background(), "BAD METHOD", "http://127.0.0.1:1/x", nil); err == nil {
		t.Fatal("a bad method was accepted")
	}
}
