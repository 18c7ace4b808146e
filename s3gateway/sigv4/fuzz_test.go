package sigv4

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
)

var sentinels = []error{ErrMissing, ErrUnsupported, ErrMalformed, ErrWrongRegion, ErrUnknownKey, ErrSignature, ErrSkewed, ErrExpired}

// FuzzVerify feeds Verify any Authorization header, date, path and query
// (the presign form): it never panics, and every refusal is one of the
// package's errors.
func FuzzVerify(f *testing.F) {
	g := exampleGet()
	f.Add(g.Header.Get("Authorization"), g.Header.Get("X-Amz-Date"), g.Header.Get("X-Amz-Content-Sha256"), "/test.txt", "")
	l := exampleList()
	f.Add(l.Header.Get("Authorization"), l.Header.Get("X-Amz-Date"), l.Header.Get("X-Amz-Content-Sha256"), "/", l.URL.RawQuery)
	p := examplePresigned()
	f.Add("", "", "", "/test.txt", p.URL.RawQuery)
	f.Add("AWS AKID:sig", "", "", "/", "")
	f.Add("AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host;x, Signature=00", "20130524T000000Z", "UNSIGNED-PAYLOAD", "/%zz", "a=%&&=b")
	f.Add("", "", "", "/", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=99999999999999999999")
	v := exampleVerifier(exampleDate)
	f.Fuzz(func(t *testing.T, authz, date, payload, path, query string) {
		r := &http.Request{Method: "GET", Host: "examplebucket.s3.amazonaws.com", Header: http.Header{},
			URL: &url.URL{Path: path, RawQuery: query}}
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		if date != "" {
			r.Header.Set("X-Amz-Date", date)
		}
		if payload != "" {
			r.Header.Set("X-Amz-Content-Sha256", payload)
		}
		_, err := v.Verify(r)
		if err == nil {
			return
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				return
			}
		}
		t.Fatalf("error %v is none of the package's", err)
	})
}
