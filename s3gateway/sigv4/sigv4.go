package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Errors of Verify; classify with errors.Is. Each maps to one S3 error
// code (s3gateway does the mapping).
var (
	// ErrMissing: the request carries no signature at all (anonymous).
	ErrMissing = errors.New("sigv4: request not signed")
	// ErrUnsupported: signed, but not with AWS4-HMAC-SHA256 (e.g. AWS's
	// older signature version 2).
	ErrUnsupported = errors.New("sigv4: unsupported authorization mechanism")
	// ErrMalformed: an Authorization header or presign parameter that
	// cannot be parsed, or is out of its bounds.
	ErrMalformed = errors.New("sigv4: malformed authorization")
	// ErrWrongRegion: the credential names another region.
	ErrWrongRegion = errors.New("sigv4: wrong region")
	// ErrUnknownKey: no secret for the access key.
	ErrUnknownKey = errors.New("sigv4: unknown access key")
	// ErrSignature: the signature does not match.
	ErrSignature = errors.New("sigv4: signature does not match")
	// ErrSkewed: the request's time is too far from the verifier's clock.
	ErrSkewed = errors.New("sigv4: request time too skewed")
	// ErrExpired: a presigned URL past its expiry (or not yet valid).
	ErrExpired = errors.New("sigv4: presigned request expired")
)

// Bounds (see the package doc).
const (
	Algorithm        = "AWS4-HMAC-SHA256"
	UnsignedPayload  = "UNSIGNED-PAYLOAD"
	MaxSkew          = 15 * time.Minute
	MaxExpires       = 7 * 24 * time.Hour
	MaxAuthLen       = 4096
	MaxSignedHeaders = 64
	amzDateLayout    = "20060102T150405Z"
	service          = "s3"
	terminator       = "aws4_request"
)

// Verifier checks signatures against a set of keys, for one region.
type Verifier struct {
	// Secret returns the secret key of an access key; false if unknown.
	Secret func(accessKey string) (string, bool)
	// Region is the only region requests may be signed for.
	Region string
	// Now is the clock.
	Now func() time.Time
}

// Result is what a verified request says about itself.
type Result struct {
	AccessKey string
	// PayloadHash is X-Amz-Content-Sha256 as signed (UNSIGNED-PAYLOAD for
	// a presigned URL without one); the caller checks a body against it.
	PayloadHash string
	Presigned   bool
}

// Signed reports whether r carries a signature of any kind (header or
// query), so that the caller can tell an anonymous request apart.
func Signed(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	q := r.URL.Query()
	return q.Has("X-Amz-Signature") || q.Has("X-Amz-Credential") || q.Has("X-Amz-Algorithm") ||
		q.Has("Signature") || q.Has("AWSAccessKeyId")
}

// credential is a parsed <key>/<date>/<region>/<service>/aws4_request.
type credential struct {
	key, date, region, service, term string
}

func parseCredential(s string) (credential, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 5 || parts[0] == "" {
		return credential{}, fmt.Errorf("%w: credential %q: want <key>/<date>/<region>/s3/aws4_request", ErrMalformed, s)
	}
	return credential{parts[0], parts[1], parts[2], parts[3], parts[4]}, nil
}

// scope is the credential scope of c.
func (c credential) scope() string {
	return c.date + "/" + c.region + "/" + c.service + "/" + c.term
}

// auth is what either form of signature carries.
type auth struct {
	cred      credential
	amzDate   string
	t         time.Time
	signed    []string // header names, lower case, as the client listed them
	signature string
	payload   string
	expires   time.Duration // presigned only
	presigned bool
}

// Verify checks r's signature. It returns ErrMissing for an unsigned
// request; every other error wraps one of the package's sentinels with a
// message saying what was wrong.
func (v *Verifier) Verify(r *http.Request) (Result, error) {
	var (
		a   auth
		err error
	)
	q := r.URL.Query()
	switch h := r.Header.Get("Authorization"); {
	case h != "":
		a, err = parseHeader(r, h)
	case q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Signature") || q.Has("X-Amz-Credential"):
		a, err = parseQuery(q)
	case q.Has("Signature") || q.Has("AWSAccessKeyId"):
		return Result{}, fmt.Errorf("%w: signature version 2 query authentication; use %s", ErrUnsupported, Algorithm)
	default:
		return Result{}, ErrMissing
	}
	if err != nil {
		return Result{}, err
	}
	if err := v.checkScope(a); err != nil {
		return Result{}, err
	}
	now := v.Now()
	if a.presigned {
		if now.Before(a.t.Add(-MaxSkew)) {
			return Result{}, fmt.Errorf("%w: not valid before %s", ErrExpired, a.t.Format(time.RFC3339))
		}
		if now.After(a.t.Add(a.expires)) {
			return Result{}, fmt.Errorf("%w: expired at %s", ErrExpired, a.t.Add(a.expires).Format(time.RFC3339))
		}
	} else if d := now.Sub(a.t); d > MaxSkew || d < -MaxSkew {
		return Result{}, fmt.Errorf("%w: request time %s, server time %s (at most %v apart)",
			ErrSkewed, a.t.Format(amzDateLayout), now.UTC().Format(amzDateLayout), MaxSkew)
	}
	secret, ok := v.Secret(a.cred.key)
	if !ok {
		return Result{}, fmt.Errorf("%w: %q", ErrUnknownKey, a.cred.key)
	}
	creq := CanonicalRequest(r, a.signed, a.payload, a.presigned)
	sts := StringToSign(a.amzDate, a.cred.scope(), creq)
	want := Signature(secret, a.cred.date, a.cred.region, sts)
	if !hmac.Equal([]byte(want), []byte(a.signature)) {
		return Result{}, fmt.Errorf("%w: the request's signature is not the one computed with the secret key of %q (string to sign: %q)",
			ErrSignature, a.cred.key, sts)
	}
	return Result{AccessKey: a.cred.key, PayloadHash: a.payload, Presigned: a.presigned}, nil
}

func (v *Verifier) checkScope(a auth) error {
	c := a.cred
	if c.date != a.amzDate[:8] {
		return fmt.Errorf("%w: credential date %q is not the request's date %q", ErrMalformed, c.date, a.amzDate[:8])
	}
	if c.service != service {
		return fmt.Errorf("%w: credential service %q: want %q", ErrMalformed, c.service, service)
	}
	if c.term != terminator {
		return fmt.Errorf("%w: credential terminator %q: want %q", ErrMalformed, c.term, terminator)
	}
	if c.region != v.Region {
		return fmt.Errorf("%w: the region %q is wrong; expecting %q", ErrWrongRegion, c.region, v.Region)
	}
	return nil
}

// parseHeader parses the Authorization header form.
func parseHeader(r *http.Request, h string) (auth, error) {
	if len(h) > MaxAuthLen {
		return auth{}, fmt.Errorf("%w: Authorization header of %d bytes (at most %d)", ErrMalformed, len(h), MaxAuthLen)
	}
	alg, rest, _ := strings.Cut(h, " ")
	if alg != Algorithm {
		return auth{}, fmt.Errorf("%w: %q; use %s", ErrUnsupported, alg, Algorithm)
	}
	var a auth
	var haveCred, haveSigned, haveSig bool
	for _, f := range strings.Split(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return auth{}, fmt.Errorf("%w: Authorization field %q: want name=value", ErrMalformed, f)
		}
		var err error
		switch k {
		case "Credential":
			a.cred, err = parseCredential(val)
			haveCred = true
		case "SignedHeaders":
			a.signed, err = parseSignedHeaders(val)
			haveSigned = true
		case "Signature":
			a.signature = val
			haveSig = true
		default:
			err = fmt.Errorf("%w: Authorization field %q unknown", ErrMalformed, k)
		}
		if err != nil {
			return auth{}, err
		}
	}
	if !haveCred || !haveSigned || !haveSig {
		return auth{}, fmt.Errorf("%w: Authorization header wants Credential, SignedHeaders and Signature", ErrMalformed)
	}
	if err := checkSignature(a.signature); err != nil {
		return auth{}, err
	}
	var err error
	a.amzDate = r.Header.Get("X-Amz-Date")
	if a.amzDate == "" {
		d, derr := http.ParseTime(r.Header.Get("Date"))
		if derr != nil {
			return auth{}, fmt.Errorf("%w: neither X-Amz-Date nor a Date header", ErrMalformed)
		}
		a.amzDate = d.UTC().Format(amzDateLayout)
	}
	if a.t, err = parseAmzDate(a.amzDate); err != nil {
		return auth{}, err
	}
	a.payload = r.Header.Get("X-Amz-Content-Sha256")
	if a.payload == "" {
		return auth{}, fmt.Errorf("%w: missing X-Amz-Content-Sha256 (S3 requires it)", ErrMalformed)
	}
	if err := checkPayload(a.payload); err != nil {
		return auth{}, err
	}
	return a, nil
}

// parseQuery parses the presigned-URL form.
func parseQuery(q url.Values) (auth, error) {
	get := func(name string) (string, error) {
		vs := q[name]
		if len(vs) != 1 || vs[0] == "" {
			return "", fmt.Errorf("%w: query parameter %s: want exactly one non-empty value", ErrMalformed, name)
		}
		if len(vs[0]) > MaxAuthLen {
			return "", fmt.Errorf("%w: query parameter %s of %d bytes (at most %d)", ErrMalformed, name, len(vs[0]), MaxAuthLen)
		}
		return vs[0], nil
	}
	var a auth
	a.presigned = true
	alg, err := get("X-Amz-Algorithm")
	if err != nil {
		return auth{}, err
	}
	if alg != Algorithm {
		return auth{}, fmt.Errorf("%w: X-Amz-Algorithm %q; use %s", ErrUnsupported, alg, Algorithm)
	}
	cred, err := get("X-Amz-Credential")
	if err != nil {
		return auth{}, err
	}
	if a.cred, err = parseCredential(cred); err != nil {
		return auth{}, err
	}
	if a.amzDate, err = get("X-Amz-Date"); err != nil {
		return auth{}, err
	}
	if a.t, err = parseAmzDate(a.amzDate); err != nil {
		return auth{}, err
	}
	exp, err := get("X-Amz-Expires")
	if err != nil {
		return auth{}, err
	}
	secs, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > MaxExpires {
		return auth{}, fmt.Errorf("%w: X-Amz-Expires %q: want 1..%d seconds", ErrMalformed, exp, int64(MaxExpires/time.Second))
	}
	a.expires = time.Duration(secs) * time.Second
	sh, err := get("X-Amz-SignedHeaders")
	if err != nil {
		return auth{}, err
	}
	if a.signed, err = parseSignedHeaders(sh); err != nil {
		return auth{}, err
	}
	if a.signature, err = get("X-Amz-Signature"); err != nil {
		return auth{}, err
	}
	if err := checkSignature(a.signature); err != nil {
		return auth{}, err
	}
	a.payload = UnsignedPayload
	if p := q.Get("X-Amz-Content-Sha256"); p != "" {
		if err := checkPayload(p); err != nil {
			return auth{}, err
		}
		a.payload = p
	}
	return a, nil
}

func parseAmzDate(s string) (time.Time, error) {
	t, err := time.Parse(amzDateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: date %q: want yyyymmddThhmmssZ", ErrMalformed, s)
	}
	return t, nil
}

func parseSignedHeaders(s string) ([]string, error) {
	hs := strings.Split(s, ";")
	if len(hs) > MaxSignedHeaders {
		return nil, fmt.Errorf("%w: %d signed headers (at most %d)", ErrMalformed, len(hs), MaxSignedHeaders)
	}
	for _, h := range hs {
		if h == "" || h != strings.ToLower(h) || strings.ContainsAny(h, " \t:") {
			return nil, fmt.Errorf("%w: signed header %q: want a lower-case header name", ErrMalformed, h)
		}
	}
	if !slices.Contains(hs, "host") {
		return nil, fmt.Errorf("%w: SignedHeaders %q must include host", ErrMalformed, s)
	}
	return hs, nil
}

func checkSignature(s string) error {
	if len(s) != 64 || strings.ToLower(s) != s {
		return fmt.Errorf("%w: signature %q: want 64 lower-case hex digits", ErrMalformed, truncate(s))
	}
	if _, err := hex.DecodeString(s); err != nil {
		return fmt.Errorf("%w: signature %q: want 64 lower-case hex digits", ErrMalformed, truncate(s))
	}
	return nil
}

func checkPayload(p string) error {
	if p == UnsignedPayload || strings.HasPrefix(p, "STREAMING-") && len(p) < 64 {
		return nil
	}
	if len(p) == 64 {
		if _, err := hex.DecodeString(p); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: X-Amz-Content-Sha256 %q: want a hex SHA-256, %s or STREAMING-...", ErrMalformed, truncate(p), UnsignedPayload)
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// CanonicalRequest builds the canonical request of r (see the package
// doc) for the signed header names and payload hash.
func CanonicalRequest(r *http.Request, signed []string, payload string, presigned bool) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(canonicalPath(r.URL))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery, presigned))
	b.WriteByte('\n')
	for _, h := range signed {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signed, ";"))
	b.WriteByte('\n')
	b.WriteString(payload)
	return b.String()
}

// StringToSign is the string signed for a canonical request.
func StringToSign(amzDate, scope, canonicalRequest string) string {
	sum := sha256.Sum256([]byte(canonicalRequest))
	return Algorithm + "\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
}

// Signature is the hex signature of stringToSign with secret's key for
// date (yyyymmdd) and region.
func Signature(secret, date, region, stringToSign string) string {
	k := mac([]byte("AWS4"+secret), date)
	k = mac(k, region)
	k = mac(k, service)
	k = mac(k, terminator)
	return hex.EncodeToString(mac(k, stringToSign))
}

func mac(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// canonicalPath encodes the decoded path once, keeping '/'.
func canonicalPath(u *url.URL) string {
	p := u.EscapedPath()
	if dec, err := url.PathUnescape(p); err == nil {
		p = dec
	}
	if p == "" {
		return "/"
	}
	return Encode(p, false)
}

// canonicalQuery decodes and re-encodes every parameter of the raw
// query, sorted, leaving X-Amz-Signature out of a presigned request.
func canonicalQuery(raw string, presigned bool) string {
	if raw == "" {
		return ""
	}
	type kv struct{ k, v string }
	var kvs []kv
	for _, f := range strings.Split(raw, "&") {
		if f == "" {
			continue
		}
		k, v, _ := strings.Cut(f, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if dv, err := url.QueryUnescape(v); err == nil {
			v = dv
		}
		if presigned && k == "X-Amz-Signature" {
			continue
		}
		kvs = append(kvs, kv{Encode(k, true), Encode(v, true)})
	}
	slices.SortFunc(kvs, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	var b strings.Builder
	for i, e := range kvs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(e.k)
		b.WriteByte('=')
		b.WriteString(e.v)
	}
	return b.String()
}

// headerValue is the canonical value of the signed header h.
func headerValue(r *http.Request, h string) string {
	var vs []string
	switch h {
	case "host":
		vs = []string{r.Host}
	case "content-length":
		vs = slices.Clone(r.Header.Values("Content-Length"))
		if len(vs) == 0 && r.ContentLength >= 0 {
			vs = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	case "transfer-encoding":
		vs = r.TransferEncoding
	default:
		vs = slices.Clone(r.Header.Values(h))
	}
	for i, v := range vs {
		vs[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vs, ",")
}

// Encode percent-encodes s the AWS way: A-Z a-z 0-9 - . _ ~ as they are,
// '/' as it is unless slash, every other byte %XX.
func Encode(s string, slash bool) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		case c == '/' && !slash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexd[c>>4])
			b.WriteByte(hexd[c&15])
		}
	}
	return b.String()
}
