package scheduler

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCounts(t *testing.T) {
	for _, c := range []struct {
		body, err string
	}{
		{`{"heads":0}`, ""},
		{`{"nfsHeads":0}`, ""},
		{`{"s3Heads":2,"nfsHeads":1}`, ""},
		{`{"nfsHeads":-1}`, "NFS heads -1: want 0 or more"},
		{`{"s3Heads":-2}`, "S3 heads -2: want 0 or more"},
		{`{"s3Heads":10001}`, "at most 10000"},
		{`{"nfs":1}`, "unknown field"},
		{`{"nodes":3,"controllers":1,"heads":2}`, ""},
		{`{}`, "want"},
		{`{"heads":-1}`, "want 0 or more"},
		{`{"nodes":0}`, "at least 1"},
		{`{"nodes":10001}`, "at most 10000"},
		{`{"heads":1e9}`, "cannot unmarshal"},
		{`{"head":1}`, "unknown field"},
		{`{"heads":1} {"heads":2}`, "more than one"},
		{`{"heads":1` + strings.Repeat(" ", countsBodyLimit) + `}`, "body over"},
		{`[`, "unexpected EOF"},
	} {
		_, err := parseCounts([]byte(c.body))
		if c.err == "" && err != nil || c.err != "" && (!errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%.40q: %v, want %q", c.body, err, c.err)
		}
	}
}

// FuzzParseCounts: any body is a request within the bounds or a
// bad-request error, never a panic.
func FuzzParseCounts(f *testing.F) {
	for _, s := range []string{`{"heads":0}`, `{"nodes":3,"controllers":1,"heads":2}`, `{"nodes":-1}`, `{}`, `null`, `{"nfsHeads":1,"s3Heads":0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseCounts(body)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("error without ErrBadRequest: %v", err)
			}
			return
		}
		if req.Controllers == nil && req.Nodes == nil && req.Heads == nil && req.NFSHeads == nil && req.S3Heads == nil {
			t.Fatal("accepted an empty request")
		}
		for _, n := range []*int{req.Controllers, req.Nodes} {
			if n != nil && (*n < 1 || *n > maxCount) {
				t.Fatalf("accepted count %d", *n)
			}
		}
		for _, n := range []*int{req.Heads, req.NFSHeads, req.S3Heads} {
			if n != nil && (*n < 0 || *n > maxCount) {
				t.Fatalf("accepted heads %d", *n)
			}
		}
	})
}
