package s3gateway

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-streams/sluice/s3gateway/sigv4"
	"github.com/sluice-streams/sluice/tier2/view"
)

const s3NS = "http://s3.amazonaws.com/doc/2006-03-01/"

// timeFormat is S3's XML time format.
const timeFormat = "2006-01-02T15:04:05.000Z"

type ownerXML struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

var owner = &ownerXML{ID: view.Owner, DisplayName: view.Owner}

type bucketXML struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
}

type listBucketsXML struct {
	XMLName xml.Name    `xml:"ListAllMyBucketsResult"`
	NS      string      `xml:"xmlns,attr"`
	Owner   *ownerXML   `xml:"Owner"`
	Buckets []bucketXML `xml:"Buckets>Bucket"`
}

func (h *handler) listBuckets(w http.ResponseWriter, r *http.Request) *s3Error {
	es, err := h.v.List(r.Context(), "")
	if err != nil {
		return viewError(err, errInternal)
	}
	out := listBucketsXML{NS: s3NS, Owner: owner, Buckets: []bucketXML{}}
	for _, e := range es {
		out.Buckets = append(out.Buckets, bucketXML{Name: e.Name, CreationDate: e.ModTime.UTC().Format(timeFormat)})
	}
	writeXML(w, http.StatusOK, out)
	return nil
}

// bucket answers the bucket's requests: HeadBucket, GetBucketLocation,
// GetBucketVersioning and the listings.
func (h *handler) bucket(w http.ResponseWriter, r *http.Request, rq *request, q url.Values) *s3Error {
	e, err := h.v.Stat(r.Context(), rq.bucket)
	if err != nil || !e.IsDir {
		return viewError(err, errNoSuchBucket)
	}
	w.Header().Set("x-amz-bucket-region", h.cfg.Region)
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	if sub, ok := unsupported(q, bucketSubresources); ok {
		return errNotImplemented("?" + sub)
	}
	switch {
	case q.Has("location"):
		region := h.cfg.Region
		if region == "us-east-1" { // as S3 answers it
			region = ""
		}
		writeXML(w, http.StatusOK, struct {
			XMLName xml.Name `xml:"LocationConstraint"`
			NS      string   `xml:"xmlns,attr"`
			Region  string   `xml:",chardata"`
		}{NS: s3NS, Region: region})
		return nil
	case q.Has("versioning"):
		writeXML(w, http.StatusOK, struct {
			XMLName xml.Name `xml:"VersioningConfiguration"`
			NS      string   `xml:"xmlns,attr"`
		}{NS: s3NS})
		return nil
	}
	lq, e2 := parseListQuery(rq.bucket, q)
	if e2 != nil {
		return e2
	}
	res, err := list(r.Context(), h.v, rq.bucket, lq)
	if err != nil {
		return viewError(err, errNoSuchBucket)
	}
	writeXML(w, http.StatusOK, lq.answer(rq.bucket, res))
	return nil
}

// listQuery is a ListObjects (V1 or V2) request.
type listQuery struct {
	v2         bool
	prefix     string
	delim      string
	after      string // keys after this one (exclusive): from the token, start-after or marker
	startAfter string // V2's start-after, echoed
	marker     string // V1's marker, echoed
	token      string // V2's continuation-token, echoed
	max        int
	owner      bool // V2's fetch-owner (V1 always)
	urlEncode  bool
}

// parseListQuery checks a listing's parameters.
func parseListQuery(bucket string, q url.Values) (listQuery, *s3Error) {
	lq := listQuery{max: MaxKeys}
	switch lt := q.Get("list-type"); lt {
	case "":
	case "2":
		lq.v2 = true
	default:
		return lq, errInvalidArgument("Invalid list-type " + strconv.Quote(lt) + ": want 2 (or none for version 1)")
	}
	for _, p := range []struct {
		name string
		to   *string
	}{{"prefix", &lq.prefix}, {"delimiter", &lq.delim}, {"start-after", &lq.startAfter}, {"marker", &lq.marker}} {
		*p.to = q.Get(p.name)
		if len(*p.to) > MaxKeyLen {
			return lq, errInvalidArgument(p.name + " longer than " + strconv.Itoa(MaxKeyLen) + " bytes")
		}
	}
	if mk := q.Get("max-keys"); mk != "" {
		n, err := strconv.Atoi(mk)
		if err != nil || n < 0 {
			return lq, errInvalidArgument("Provided max-keys not an integer or within integer range")
		}
		lq.max = min(n, MaxKeys)
	}
	switch et := q.Get("encoding-type"); et {
	case "":
	case "url":
		lq.urlEncode = true
	default:
		return lq, errInvalidArgument("Invalid Encoding Method specified in Request")
	}
	lq.owner = !lq.v2 || q.Get("fetch-owner") == "true"
	if !lq.v2 {
		lq.after = lq.marker
		return lq, nil
	}
	lq.after = lq.startAfter
	if q.Has("continuation-token") {
		lq.token = q.Get("continuation-token")
		m, err := decodeToken(lq.token, bucket, lq.prefix, lq.delim)
		if err != nil {
			return lq, errBadToken
		}
		lq.after = m
	}
	return lq, nil
}

// Continuation tokens: base64url of an 8-byte check and the key to
// continue after. The check is SHA-256 of the bucket, prefix, delimiter
// and key, so a token altered, made up or reused for another listing is
// refused (InvalidArgument) rather than listing from an arbitrary place.
// It needs no secret: any place a token could name, start-after can name
// too.
const tokenCheck = 8

func tokenSum(bucket, prefix, delim, marker string) []byte {
	h := sha256.New()
	for _, s := range []string{"sluice-s3-token-v1", bucket, prefix, delim, marker} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum(nil)[:tokenCheck]
}

func encodeToken(bucket, prefix, delim, marker string) string {
	return base64.RawURLEncoding.EncodeToString(append(tokenSum(bucket, prefix, delim, marker), marker...))
}

var errToken = errors.New("s3gateway: bad continuation token")

func decodeToken(tok, bucket, prefix, delim string) (string, error) {
	if len(tok) > base64.RawURLEncoding.EncodedLen(tokenCheck+MaxKeyLen) {
		return "", errToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) < tokenCheck {
		return "", errToken
	}
	marker := string(raw[tokenCheck:])
	if string(tokenSum(bucket, prefix, delim, marker)) != string(raw[:tokenCheck]) {
		return "", errToken
	}
	return marker, nil
}

// object is one key of a listing.
type object struct {
	key  string
	size int64
	mod  time.Time
	etag string
}

// listResult is one page of a listing.
type listResult struct {
	objects   []object
	prefixes  []string
	truncated bool
	last      string // the last key or common prefix of the page
}

// list walks the bucket's keys in S3's order (byte-wise), from after
// lq.after, for one page (see lister).
func list(ctx context.Context, v *view.View, bucket string, lq listQuery) (listResult, error) {
	l := &lister{ctx: ctx, v: v, q: lq}
	if lq.max == 0 {
		return l.res, nil
	}
	_, err := l.walk(bucket, "", 0)
	return l.res, err
}

// lister walks the tree below a bucket in key order. A directory's keys
// all start with "<its key prefix>/", so sorting a directory's children by
// name, with '/' appended to directories, yields the keys in order, and a
// subtree is skipped whole when it is entirely outside the prefix,
// entirely before the marker, or folds into one common prefix.
type lister struct {
	ctx    context.Context
	v      *view.View
	q      listQuery
	res    listResult
	lastCP string
}

// Depths below a bucket: streams (0), segments (1), chunks (2).
const chunkDepth = 2

// walk lists the directory at path (depth below the bucket), whose
// entries' keys start with kp. It returns true once the page is full.
func (l *lister) walk(path, kp string, depth int) (bool, error) {
	es, err := l.children(path, depth)
	if err != nil {
		if depth > 0 && errors.Is(err, view.ErrNotExist) {
			return false, nil // gone since its parent was listed
		}
		return false, err
	}
	type child struct {
		key string
		e   view.Entry
	}
	cs := make([]child, 0, len(es))
	for _, e := range es {
		if e.IsDir != (depth < chunkDepth) {
			continue
		}
		k := kp + e.Name
		if e.IsDir {
			k += "/"
		}
		cs = append(cs, child{k, e})
	}
	slices.SortFunc(cs, func(a, b child) int { return strings.Compare(a.key, b.key) })
	q := l.q
	for _, c := range cs {
		k := c.key
		if !strings.HasPrefix(k, q.prefix) && !(c.e.IsDir && strings.HasPrefix(q.prefix, k)) {
			continue
		}
		if c.e.IsDir && k < q.after && !strings.HasPrefix(q.after, k) {
			continue // every key below is before the marker
		}
		if cp, ok := l.commonPrefix(k); ok {
			if cp <= q.after || cp == l.lastCP {
				continue
			}
			if c.e.IsDir {
				if any, err := l.hasKey(c.e.Path, depth+1); err != nil || !any {
					if err != nil {
						return false, err
					}
					continue
				}
			}
			if l.full() {
				return true, nil
			}
			l.lastCP = cp
			l.res.prefixes = append(l.res.prefixes, cp)
			l.res.last = cp
			continue
		}
		if c.e.IsDir {
			if full, err := l.walk(c.e.Path, k, depth+1); full || err != nil {
				return full, err
			}
			continue
		}
		if k <= q.after {
			continue
		}
		if l.full() {
			return true, nil
		}
		l.res.objects = append(l.res.objects, object{key: k, size: c.e.Size, mod: c.e.ModTime, etag: ETag(c.e)})
		l.res.last = k
	}
	return false, nil
}

// children returns the entries of the directory at path (depth below the
// bucket). A bucket's are its streams, named by the catalog and described
// no further: the walk needs only their names, and describing each (a
// tier-2 Stat) would cost a call per stream of the bucket whatever the
// prefix. Below, the entries come with one tier-2 List.
func (l *lister) children(path string, depth int) ([]view.Entry, error) {
	if depth > 0 {
		return l.v.List(l.ctx, path)
	}
	names, err := l.v.Names(l.ctx, path)
	if err != nil {
		return nil, err
	}
	es := make([]view.Entry, len(names))
	for i, n := range names {
		es[i] = view.Entry{Path: path + "/" + n, Name: n, IsDir: true}
	}
	return es, nil
}

// commonPrefix is the common prefix k folds into (the prefix, then up to
// and including the first delimiter after it), if the delimiter occurs
// within k past the prefix.
func (l *lister) commonPrefix(k string) (string, bool) {
	q := l.q
	if q.delim == "" || !strings.HasPrefix(k, q.prefix) {
		return "", false
	}
	i := strings.Index(k[len(q.prefix):], q.delim)
	if i < 0 {
		return "", false
	}
	return k[:len(q.prefix)+i+len(q.delim)], true
}

// full reports whether the page has no room for one more entry, marking
// it truncated: one more exists.
func (l *lister) full() bool {
	if len(l.res.objects)+len(l.res.prefixes) >= l.q.max {
		l.res.truncated = true
		return true
	}
	return false
}

// hasKey reports whether the directory at path (depth below the bucket)
// holds any chunk: S3 has no empty directories to list.
func (l *lister) hasKey(path string, depth int) (bool, error) {
	es, err := l.v.List(l.ctx, path)
	if errors.Is(err, view.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range es {
		if e.IsDir != (depth < chunkDepth) {
			continue
		}
		if !e.IsDir {
			return true, nil
		}
		if ok, err := l.hasKey(e.Path, depth+1); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

type contentXML struct {
	Key          string    `xml:"Key"`
	LastModified string    `xml:"LastModified"`
	ETag         string    `xml:"ETag"`
	Size         int64     `xml:"Size"`
	Owner        *ownerXML `xml:"Owner,omitempty"`
	StorageClass string    `xml:"StorageClass"`
}

type prefixXML struct {
	Prefix string `xml:"Prefix"`
}

type listV2XML struct {
	XMLName               xml.Name     `xml:"ListBucketResult"`
	NS                    string       `xml:"xmlns,attr"`
	Name                  string       `xml:"Name"`
	Prefix                string       `xml:"Prefix"`
	StartAfter            string       `xml:"StartAfter,omitempty"`
	ContinuationToken     string       `xml:"ContinuationToken,omitempty"`
	NextContinuationToken string       `xml:"NextContinuationToken,omitempty"`
	KeyCount              int          `xml:"KeyCount"`
	MaxKeys               int          `xml:"MaxKeys"`
	Delimiter             string       `xml:"Delimiter,omitempty"`
	EncodingType          string       `xml:"EncodingType,omitempty"`
	IsTruncated           bool         `xml:"IsTruncated"`
	Contents              []contentXML `xml:"Contents"`
	CommonPrefixes        []prefixXML  `xml:"CommonPrefixes"`
}

type listV1XML struct {
	XMLName        xml.Name     `xml:"ListBucketResult"`
	NS             string       `xml:"xmlns,attr"`
	Name           string       `xml:"Name"`
	Prefix         string       `xml:"Prefix"`
	Marker         string       `xml:"Marker"`
	NextMarker     string       `xml:"NextMarker,omitempty"`
	MaxKeys        int          `xml:"MaxKeys"`
	Delimiter      string       `xml:"Delimiter,omitempty"`
	EncodingType   string       `xml:"EncodingType,omitempty"`
	IsTruncated    bool         `xml:"IsTruncated"`
	Contents       []contentXML `xml:"Contents"`
	CommonPrefixes []prefixXML  `xml:"CommonPrefixes"`
}

// answer is the XML of a page.
func (lq listQuery) answer(bucket string, res listResult) any {
	enc := func(s string) string {
		if lq.urlEncode {
			return sigv4.Encode(s, false)
		}
		return s
	}
	var contents []contentXML
	for _, o := range res.objects {
		c := contentXML{Key: enc(o.key), LastModified: o.mod.UTC().Format(timeFormat), ETag: o.etag, Size: o.size, StorageClass: "STANDARD"}
		if lq.owner {
			c.Owner = owner
		}
		contents = append(contents, c)
	}
	var cps []prefixXML
	for _, p := range res.prefixes {
		cps = append(cps, prefixXML{enc(p)})
	}
	et := ""
	if lq.urlEncode {
		et = "url"
	}
	if !lq.v2 {
		out := listV1XML{NS: s3NS, Name: bucket, Prefix: enc(lq.prefix), Marker: enc(lq.marker), MaxKeys: lq.max,
			Delimiter: enc(lq.delim), EncodingType: et, IsTruncated: res.truncated, Contents: contents, CommonPrefixes: cps}
		if res.truncated {
			out.NextMarker = enc(res.last)
		}
		return out
	}
	out := listV2XML{NS: s3NS, Name: bucket, Prefix: enc(lq.prefix), StartAfter: enc(lq.startAfter), ContinuationToken: lq.token,
		KeyCount: len(contents) + len(cps), MaxKeys: lq.max, Delimiter: enc(lq.delim), EncodingType: et,
		IsTruncated: res.truncated, Contents: contents, CommonPrefixes: cps}
	if res.truncated {
		out.NextContinuationToken = encodeToken(bucket, lq.prefix, lq.delim, res.last)
	}
	return out
}
