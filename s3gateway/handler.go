package s3gateway

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/s3gateway/sigv4"
	"github.com/sluice-streams/sluice/tier2/view"
)

// handler serves one View over the S3 API.
type handler struct {
	v      *view.View
	cfg    Config
	log    logrus.FieldLogger
	verify sigv4.Verifier
	idBase string        // random per handler: request ids differ across restarts
	seq    atomic.Uint64 // request counter
}

// NewHandler returns the S3 API over v (see the package doc).
func NewHandler(v *view.View, cfg Config) http.Handler {
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	cfg.Domain = strings.ToLower(strings.Trim(cfg.Domain, "."))
	creds := make(map[string]string, len(cfg.Credentials))
	for k, s := range cfg.Credentials {
		creds[k] = s
	}
	cfg.Credentials = creds
	cfg.AllowedHosts = append([]string(nil), cfg.AllowedHosts...)
	var b [4]byte
	rand.Read(b[:])
	h := &handler{v: v, cfg: cfg, log: logs.OrDiscard(cfg.Logger), idBase: strings.ToUpper(hex.EncodeToString(b[:]))}
	h.verify = sigv4.Verifier{
		Secret: func(ak string) (string, bool) { s, ok := creds[ak]; return s, ok },
		Region: cfg.Region,
		Now:    cfg.Now,
	}
	return h
}

// request is what routing found out about one request.
type request struct {
	id      string
	bucket  string // "" for the service (ListBuckets)
	key     string // "" for the bucket
	virtual bool   // the bucket came from the Host
	signed  bool   // the request is signed (header or query), not anonymous
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rq := &request{id: fmt.Sprintf("%s%08X", h.idBase, h.seq.Add(1))}
	w.Header().Set("x-amz-request-id", rq.id)
	w.Header().Set("Server", "Sluice")
	// Bodies are chunks that producers wrote: never let a browser guess
	// they are HTML.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if e := h.serve(w, r, rq); e != nil {
		if e.status >= 500 {
			h.log.WithFields(logrus.Fields{"method": r.Method, "path": r.URL.Path, "request": rq.id}).Warn("s3 head: " + e.Error())
		}
		writeError(w, r, rq, e)
	}
}

// serve answers r, or returns the error to answer.
func (h *handler) serve(w http.ResponseWriter, r *http.Request, rq *request) *s3Error {
	if len(r.URL.RawQuery) > MaxQueryLen {
		return errURITooLong
	}
	var err *s3Error
	if rq.bucket, rq.key, rq.virtual, err = Route(r.Host, r.URL.Path, h.cfg.Domain); err != nil {
		return err
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodPatch:
		// Every write, whatever its subresource (objects, multipart,
		// copy, ACLs, policies, tags, DeleteObjects): read-only.
		return errAccessDenied
	default:
		return errMethod
	}
	if rq.signed, err = h.authenticate(r); err != nil {
		return err
	}
	q := r.URL.Query()
	switch {
	case rq.bucket == "":
		return h.listBuckets(w, r)
	case rq.key == "":
		return h.bucket(w, r, rq, q)
	default:
		return h.object(w, r, rq, q)
	}
}

// Route splits a request's Host and decoded path into bucket and key:
// virtual-hosted style when the Host (port left out, case ignored) is
// "<bucket>.<domain>" or "<bucket>.localhost", path style ("/<bucket>/<key>")
// otherwise. An empty bucket is the service; an empty key the bucket.
func Route(host, path, domain string) (bucket, key string, virtual bool, _ *s3Error) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range []string{domain, "localhost"} {
		if d != "" && strings.HasSuffix(host, "."+d) {
			bucket, virtual = strings.TrimSuffix(host, "."+d), true
			break
		}
	}
	path = strings.TrimPrefix(path, "/")
	if !virtual {
		bucket, key, _ = strings.Cut(path, "/")
	} else {
		key = path
	}
	if len(key) > MaxKeyLen {
		return "", "", false, errKeyTooLong
	}
	if strings.Contains(bucket, "/") || len(bucket) > 255 {
		return "", "", false, errNoSuchBucket
	}
	return bucket, key, virtual, nil
}

// authenticate verifies r's signature, or lets an unsigned request
// through when anonymous requests are served (and its Host passes
// AllowedHost); it reports whether r is signed. A signed read's body (S3
// reads have none) must match its payload hash.
func (h *handler) authenticate(r *http.Request) (signed bool, _ *s3Error) {
	res, err := h.verify.Verify(r)
	switch {
	case err == sigv4.ErrMissing:
		if !h.cfg.Anonymous {
			return false, errAnonymous
		}
		if !AllowedHost(r.Host, h.cfg.Domain, h.cfg.AllowedHosts) {
			return false, errHost(r.Host)
		}
		if r.ContentLength != 0 {
			return false, errReadBody
		}
		return false, nil
	case err != nil:
		return false, authError(err, h.cfg.Region)
	}
	if res.PayloadHash == sigv4.UnsignedPayload {
		if r.ContentLength != 0 {
			return true, errReadBody
		}
		return true, nil
	}
	if strings.HasPrefix(res.PayloadHash, "STREAMING-") {
		return true, errReadBody
	}
	body, rerr := io.ReadAll(io.LimitReader(r.Body, maxReadBody+1))
	if rerr != nil {
		return true, errorf(http.StatusBadRequest, "IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header.")
	}
	if len(body) > maxReadBody {
		return true, errReadBody
	}
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != res.PayloadHash {
		return true, errPayloadHash
	}
	return true, nil
}

// AllowedHost reports whether an unsigned request with Host host (a Host
// header: port optional, case ignored, a final dot ignored) is served,
// whatever address it came in on. It is the guard against DNS
// rebinding: a web page that re-points its own name at an address of
// the head (127.0.0.1 through a published container port, a LAN address)
// sends its own name as Host, and could otherwise read every scope. So
// the Host must be a name no page can own:
//
//   - an IP literal, any address (0.0.0.0, [::1], 10.1.2.3); also a
//     name whose last label is a number (127.1, 0x7f.1, the shortened
//     forms curl sends and net.ParseIP refuses): browsers read such a
//     name as an IPv4 address and public DNS has no numeric top-level
//     name, so no page can own one;
//   - a localhost name: localhost, *.localhost, localhost.localdomain,
//     ip6-localhost, ip6-loopback;
//   - domain or a name under it (domain "" names none);
//   - a name of allowed (exact, case ignored); "*" in allowed allows any
//     Host, which turns the guard off.
//
// Signed requests are not checked: no page can sign them.
func AllowedHost(host, domain string, allowed []string) bool {
	host = hostName(host)
	domain = hostName(domain)
	switch {
	case host == "":
		return false
	case host == "localhost", strings.HasSuffix(host, ".localhost"),
		host == "localhost.localdomain", host == "ip6-localhost", host == "ip6-loopback":
		return true
	case domain != "" && (host == domain || strings.HasSuffix(host, "."+domain)):
		return true
	case numericName(host):
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	for _, a := range allowed {
		if a == "*" || hostName(a) == host {
			return true
		}
	}
	return false
}

// hostName is host without port, brackets and final dot, in lower case.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
}

// numericName reports whether host's last label is a number (decimal, or
// hex after 0x), as the WHATWG URL standard's "ends in a number": a
// browser takes such a host for an IPv4 address, so DNS never names it
// for a page.
func numericName(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	digits := "0123456789"
	if strings.HasPrefix(last, "0x") {
		last, digits = last[2:], "0123456789abcdef"
		if last == "" {
			return true // "0x" is zero
		}
	}
	if last == "" {
		return false
	}
	for _, c := range last {
		if !strings.ContainsRune(digits, c) {
			return false
		}
	}
	return true
}

// errHost is the answer to an unsigned request whose Host AllowedHost
// refuses: it names the Host (cut short) and how to allow it.
func errHost(host string) *s3Error {
	if len(host) > 128 {
		host = host[:128] + "..."
	}
	return errorf(http.StatusForbidden, "AccessDenied", fmt.Sprintf("Access Denied: an unsigned request with Host %q is refused, so that no web page re-pointing its own name at the head (DNS rebinding) can read it. "+
		"Unsigned requests may name the head by an IP address, localhost, this machine's name or the head's --domain; allow another name with --allowed-hosts NAME (the standalone's --s3-allowed-hosts), or sign the request.", host))
}

// Subresources of a bucket and of an object (query parameters) that the
// head does not serve: NotImplemented, not a listing or the object.
var (
	bucketSubresources = []string{
		"accelerate", "acl", "analytics", "cors", "encryption", "intelligent-tiering", "inventory",
		"lifecycle", "logging", "metrics", "notification", "object-lock", "ownershipControls",
		"policy", "policyStatus", "publicAccessBlock", "replication", "requestPayment", "tagging",
		"uploads", "versions", "website",
	}
	objectSubresources = []string{
		"acl", "attributes", "legal-hold", "retention", "tagging", "torrent", "uploadId", "restore", "select",
	}
)

// unsupported names the first of subs present in q.
func unsupported(q map[string][]string, subs []string) (string, bool) {
	for _, s := range subs {
		if _, ok := q[s]; ok {
			return s, true
		}
	}
	return "", false
}
