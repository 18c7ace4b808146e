package sigv4

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The examples of AWS's "Signature Calculations for the Authorization
// Header" and "Query String Authentication" pages for S3: their request,
// key and signature.
const (
	exampleKey    = "AKIAIOSFODNN7EXAMPLE"
	exampleSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	emptySHA256   = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

func exampleVerifier(now time.Time) *Verifier {
	return &Verifier{
		Secret: func(k string) (string, bool) {
			if k == exampleKey {
				return exampleSecret, true
			}
			return "", false
		},
		Region: "us-east-1",
		Now:    func() time.Time { return now },
	}
}

var exampleDate = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)

func exampleGet() *http.Request {
	r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt", nil)
	r.Header.Set("Range", "bytes=0-9")
	r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
	return r
}

func exampleList() *http.Request {
	r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J", nil)
	r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
	return r
}

func examplePresigned() *http.Request {
	return httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404", nil)
}

func TestAWSExamplesVerify(t *testing.T) {
	for name, r := range map[string]*http.Request{"get": exampleGet(), "list": exampleList(), "presigned": examplePresigned()} {
		res, err := exampleVerifier(exampleDate.Add(time.Minute)).Verify(r)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if res.AccessKey != exampleKey {
			t.Errorf("%s: key %q", name, res.AccessKey)
		}
	}
}

func TestRefusals(t *testing.T) {
	at := exampleDate.Add(time.Minute)
	for _, c := range []struct {
		name string
		req  func() *http.Request
		v    *Verifier
		want error
	}{
		{"unsigned", func() *http.Request { return httptest.NewRequest("GET", "http://h/b/k", nil) }, exampleVerifier(at), ErrMissing},
		{"tampered header", func() *http.Request { r := exampleGet(); r.Header.Set("Range", "bytes=0-10"); return r }, exampleVerifier(at), ErrSignature},
		{"tampered path", func() *http.Request { r := exampleGet(); r.URL.Path = "/test.tx"; return r }, exampleVerifier(at), ErrSignature},
		{"tampered query", func() *http.Request { r := exampleList(); r.URL.RawQuery = "max-keys=3&prefix=J"; return r }, exampleVerifier(at), ErrSignature},
		{"tampered host", func() *http.Request { r := exampleGet(); r.Host = "other"; return r }, exampleVerifier(at), ErrSignature},
		{"skewed", exampleGet, exampleVerifier(exampleDate.Add(16 * time.Minute)), ErrSkewed},
		{"skewed back", exampleGet, exampleVerifier(exampleDate.Add(-16 * time.Minute)), ErrSkewed},
		{"expired", examplePresigned, exampleVerifier(exampleDate.Add(86401 * time.Second)), ErrExpired},
		{"wrong region", exampleGet, func() *Verifier { v := exampleVerifier(at); v.Region = "eu-west-1"; return v }(), ErrWrongRegion},
		{"unknown key", exampleGet, func() *Verifier {
			v := exampleVerifier(at)
			v.Secret = func(string) (string, bool) { return "", false }
			return v
		}(), ErrUnknownKey},
		{"wrong secret", exampleGet, func() *Verifier {
			v := exampleVerifier(at)
			v.Secret = func(string) (string, bool) { return "nope", true }
			return v
		}(), ErrSignature},
		{"v2", func() *http.Request {
			r := httptest.NewRequest("GET", "http://h/b/k", nil)
			r.Header.Set("Authorization", "AWS AKID:c2lnbmF0dXJl")
			return r
		}, exampleVerifier(at), ErrUnsupported},
		{"no host signed", func() *http.Request {
			r := exampleGet()
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=range,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
			return r
		}, exampleVerifier(at), ErrMalformed},
		{"no payload hash", func() *http.Request { r := exampleGet(); r.Header.Del("X-Amz-Content-Sha256"); return r }, exampleVerifier(at), ErrMalformed},
		{"date mismatch", func() *http.Request { r := exampleGet(); r.Header.Set("X-Amz-Date", "20130525T000000Z"); return r }, exampleVerifier(at), ErrMalformed},
	} {
		_, err := c.v.Verify(c.req())
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestEncode(t *testing.T) {
	for in, want := range map[string]string{
		"a/b c":      "a/b%20c",
		"segment=0":  "segment%3D0",
		"~-._AZaz09": "~-._AZaz09",
		"é":          "%C3%A9",
		"a+b":        "a%2Bb",
	} {
		if got := Encode(in, false); got != want {
			t.Errorf("Encode(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Encode("a/b", true); got != "a%2Fb" {
		t.Errorf("Encode(a/b, slash) = %q", got)
	}
}
