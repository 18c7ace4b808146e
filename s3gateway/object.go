package s3gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-streams/sluice/tier2/view"
)

// ETag is the entity tag of a chunk: "<32 hex>-1", the hex being the
// first half of SHA-256 over the chunk's path, size and modification
// time. The "-1" suffix is the form of a multipart upload's ETag, which
// clients know is not the body's MD5, so none checks the body against it;
// it changes whenever the chunk at a path is replaced, and costs no read.
func ETag(e view.Entry) string {
	h := sha256.New()
	h.Write([]byte(e.Path))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatInt(e.Size, 10)))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatInt(e.ModTime.UnixNano(), 10)))
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `-1"`
}

// chunkPath is the view path of a key, if the key has a chunk's shape
// (<stream>/segment=<N>/<name>); the view decides the rest.
func chunkPath(bucket, key string) (string, bool) {
	parts := strings.Split(key, "/")
	if len(parts) != 3 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return "", false
		}
	}
	return bucket + "/" + key, true
}

// Response header overrides of GetObject (query parameter → header).
var overrides = [][2]string{
	{"response-cache-control", "Cache-Control"},
	{"response-content-disposition", "Content-Disposition"},
	{"response-content-encoding", "Content-Encoding"},
	{"response-content-language", "Content-Language"},
	{"response-content-type", "Content-Type"},
	{"response-expires", "Expires"},
}

// object answers HeadObject and GetObject.
func (h *handler) object(w http.ResponseWriter, r *http.Request, rq *request, q url.Values) *s3Error {
	if sub, ok := unsupported(q, objectSubresources); ok {
		return errNotImplemented("?" + sub)
	}
	if v := q.Get("versionId"); v != "" && v != "null" {
		return errInvalidArgument("Invalid version id specified: the S3 head keeps no versions")
	}
	if !rq.signed {
		// As S3: an unsigned link must not choose how a browser shows
		// the body (say, a producer's bytes as text/html).
		for _, o := range overrides {
			if q.Has(o[0]) {
				return errAnonOverrides
			}
		}
	}
	if pn := q.Get("partNumber"); pn != "" && pn != "1" {
		return errorf(http.StatusRequestedRangeNotSatisfiable, "InvalidPartNumber", "The requested partnumber is not satisfiable")
	}
	ctx := r.Context()
	if _, err := h.v.Stat(ctx, rq.bucket); err != nil {
		return viewError(err, errNoSuchBucket)
	}
	p, ok := chunkPath(rq.bucket, rq.key)
	if !ok {
		return errNoSuchKey
	}
	e, err := h.v.Stat(ctx, p)
	if err != nil || e.IsDir {
		return viewError(err, errNoSuchKey)
	}
	etag := ETag(e)
	mod := e.ModTime.UTC().Truncate(time.Second)
	hd := w.Header()
	hd.Set("ETag", etag)
	hd.Set("Last-Modified", mod.Format(http.TimeFormat))
	hd.Set("Accept-Ranges", "bytes")
	if status := preconditions(r, etag, mod); status != 0 {
		if status == http.StatusNotModified {
			w.WriteHeader(status)
			return nil
		}
		return errPrecondition
	}
	hd.Set("Content-Type", "application/octet-stream")
	for _, o := range overrides {
		if v := q.Get(o[0]); v != "" {
			hd.Set(o[1], v)
		}
	}
	start, n, partial, rerr := ParseRange(r.Header.Get("Range"), e.Size)
	if rerr != nil {
		hd.Set("Content-Range", "bytes */"+strconv.FormatInt(e.Size, 10))
		return errInvalidRange
	}
	if ir := r.Header.Get("If-Range"); partial && ir != "" && !ifRange(ir, etag, mod) {
		start, n, partial = 0, e.Size, false
	}
	hd.Set("Content-Length", strconv.FormatInt(n, 10))
	status := http.StatusOK
	if partial {
		hd.Set("Content-Range", "bytes "+strconv.FormatInt(start, 10)+"-"+strconv.FormatInt(start+n-1, 10)+"/"+strconv.FormatInt(e.Size, 10))
		status = http.StatusPartialContent
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return nil
	}
	f, err := h.v.Open(ctx, p)
	if err != nil {
		hd.Del("Content-Length")
		hd.Del("Content-Range")
		return viewError(err, errNoSuchKey)
	}
	defer f.Close()
	w.WriteHeader(status)
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	if err := h.copyBody(w, f, start, n, *buf); err != nil {
		// The status is out: all that is left is to stop. A client that
		// went away (or stalled past StallTimeout) is no failure of the
		// head's.
		h.log.WithError(err).WithField("key", rq.bucket+"/"+rq.key).Debug("s3 head: GetObject cut short")
	}
	return nil
}

// copyBody writes n bytes of f from start, a buffer at a time, each write
// within StallTimeout (where the server supports write deadlines).
func (h *handler) copyBody(w http.ResponseWriter, f view.File, start, n int64, buf []byte) error {
	rc := http.NewResponseController(w)
	defer rc.SetWriteDeadline(time.Time{})
	for n > 0 {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), n)], start)
		if k > 0 {
			rc.SetWriteDeadline(time.Now().Add(h.cfg.StallTimeout))
			if _, werr := w.Write(buf[:k]); werr != nil {
				return werr
			}
			start += int64(k)
			n -= int64(k)
		}
		if err != nil && (err != io.EOF || n > 0) {
			return err
		}
		if k == 0 && err == nil {
			return io.ErrNoProgress
		}
	}
	return nil
}

// copyBuf is the size of GetObject's copy buffer.
const copyBuf = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, copyBuf); return &b }}

// preconditions evaluates the conditional headers in RFC 9110's order
// (which S3 follows): If-Match, else If-Unmodified-Since (412); then
// If-None-Match, else If-Modified-Since (304). It returns 0 when the
// request goes ahead.
func preconditions(r *http.Request, etag string, mod time.Time) int {
	if im := r.Header.Get("If-Match"); im != "" {
		if !etagMatch(im, etag) {
			return http.StatusPreconditionFailed
		}
	} else if ius := r.Header.Get("If-Unmodified-Since"); ius != "" {
		if t, err := http.ParseTime(ius); err == nil && mod.After(t) {
			return http.StatusPreconditionFailed
		}
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if etagMatch(inm, etag) {
			return http.StatusNotModified
		}
	} else if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !mod.After(t) {
			return http.StatusNotModified
		}
	}
	return 0
}

// etagMatch reports whether the list of entity tags h (or "*") names
// etag; weak tags compare by their opaque part, unquoted tags as if
// quoted (some clients leave the quotes out).
func etagMatch(h, etag string) bool {
	for _, t := range strings.Split(h, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag || `"`+t+`"` == etag {
			return true
		}
	}
	return false
}

// ifRange reports whether If-Range's validator (an entity tag or a date)
// still holds, so that the range is served.
func ifRange(v, etag string, mod time.Time) bool {
	if strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "W/") {
		return v == etag
	}
	t, err := http.ParseTime(v)
	return err == nil && mod.Equal(t)
}

// errRange is ParseRange's error: the range cannot be satisfied.
type errRange struct{}

func (errRange) Error() string { return "s3gateway: range not satisfiable" }

// ParseRange reads a Range header against a body of size bytes: the
// first byte and the count to serve, and whether that is a part (206).
// S3 serves one range: a header it cannot parse, of another unit, or of
// several ranges, is ignored (the whole body, 200), as S3 does; a single
// range that starts at or past the end (or a suffix of 0 bytes) is an
// error (416).
func ParseRange(h string, size int64) (start, n int64, partial bool, err error) {
	spec, ok := strings.CutPrefix(h, "bytes=")
	if h == "" || !ok || strings.Contains(spec, ",") || len(spec) > 64 {
		return 0, size, false, nil
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return 0, size, false, nil
	}
	if first == "" { // suffix: the last <last> bytes
		k, perr := strconv.ParseInt(last, 10, 64)
		if perr != nil || k < 0 {
			return 0, size, false, nil
		}
		if k == 0 {
			return 0, 0, false, errRange{}
		}
		k = min(k, size)
		if k == 0 {
			return 0, 0, false, errRange{}
		}
		return size - k, k, true, nil
	}
	s, perr := strconv.ParseInt(first, 10, 64)
	if perr != nil || s < 0 {
		return 0, size, false, nil
	}
	e := size - 1
	if last != "" {
		if e, perr = strconv.ParseInt(last, 10, 64); perr != nil || e < s {
			return 0, size, false, nil
		}
		e = min(e, size-1)
	}
	if s >= size {
		return 0, 0, false, errRange{}
	}
	return s, e - s + 1, true, nil
}
