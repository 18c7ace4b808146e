package webhdfs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/tier2/view"
)

// Config configures a handler.
type Config struct {
	// BlockSize is the files' block size: FileStatus.blockSize, the blocks
	// of GETFILECHECKSUM and GETFILEBLOCKLOCATIONS (blocks.DefaultSize if
	// not positive). It must be the HDFS RPC head's, so both give a file
	// the same checksum.
	BlockSize int64
	// Logger gets the requests that failed on the server's side (nil: none).
	Logger logrus.FieldLogger
	// WriteTimeout bounds each write of a response body
	// (DefaultWriteTimeout if 0): a client that stops reading an OPEN is
	// cut off after it.
	WriteTimeout time.Duration
}

// DefaultWriteTimeout is Config.WriteTimeout's default.
const DefaultWriteTimeout = time.Minute

// BatchSize is how many entries one LISTSTATUS_BATCH answer holds (HDFS's
// default dfs.ls.limit).
const BatchSize = 1000

type handler struct {
	v            *view.View
	blockSize    int64
	writeTimeout time.Duration
	log          logrus.FieldLogger
}

// NewHandler returns the WebHDFS API over v: an http.Handler for the
// paths under Prefix, read-only. It holds no state of its own beyond v,
// starts no goroutine and needs no Close.
func NewHandler(v *view.View, cfg Config) http.Handler {
	if cfg.BlockSize <= 0 {
		cfg.BlockSize = blocks.DefaultSize
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	return &handler{v: v, blockSize: cfg.BlockSize, writeTimeout: cfg.WriteTimeout, log: logs.OrDiscard(cfg.Logger)}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r, err := parseRequest(req.Method, req.URL.EscapedPath(), req.URL.RawQuery)
	if err == nil && r.mutating {
		err = readOnly()
	}
	if err == nil {
		err = r.checkParams()
	}
	if err == nil {
		err = h.serve(req.Context(), w, req, r)
	}
	if err != nil {
		h.fail(w, req, r, err)
	}
}

// fail answers err as a RemoteException, unless the request's context
// ended (the client went away: nothing to answer).
func (h *handler) fail(w http.ResponseWriter, req *http.Request, r request, err error) {
	if req.Context().Err() != nil {
		return
	}
	var re *remoteError
	if !errors.As(err, &re) {
		re = h.mapError(r, err)
	}
	if re.status >= 500 {
		h.log.WithError(err).WithField("op", r.op).WithField("path", r.display()).Warn("webhdfs: request failed")
	}
	writeJSON(w, re.status, map[string]remoteException{"RemoteException": {re.exception, re.javaClass, re.message}})
}

// mapError maps an error of the view to what HDFS answers.
func (h *handler) mapError(r request, err error) *remoteError {
	switch {
	case errors.Is(err, view.ErrNotExist), errors.Is(err, view.ErrNotDir):
		if r.op == "LISTSTATUS" || r.op == "LISTSTATUS_BATCH" {
			return notFoundf("File %s does not exist.", r.display())
		}
		return notFoundf("File does not exist: %s", r.display())
	case errors.Is(err, view.ErrIsDir):
		return notFoundf("Path is not a file: %s", r.display())
	default:
		// ErrUnavailable, and anything else the storage says: the client
		// may retry.
		return unavailable(err)
	}
}

// writeJSON answers v as Hadoop's Jackson writes it: no HTML escapes, no
// trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // only our own types: cannot happen
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"RemoteException":{"exception":"IOException","javaClassName":"java.io.IOException","message":"encoding the answer failed"}}` + "\n")
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

func (h *handler) serve(ctx context.Context, w http.ResponseWriter, req *http.Request, r request) error {
	if (r.op == "OPEN" || r.op == "GETFILECHECKSUM") && r.q.Get("noredirect") == "true" {
		return h.location(ctx, w, req, r)
	}
	switch r.op {
	case "GETFILESTATUS", "GETFILELINKSTATUS":
		e, err := h.v.Stat(ctx, r.path)
		if err != nil {
			return err
		}
		children := 0
		if e.IsDir {
			es, err := h.v.List(ctx, r.path)
			if err != nil {
				return err
			}
			children = len(es)
		}
		writeJSON(w, http.StatusOK, map[string]fileStatus{"FileStatus": h.status(e, "", children)})
	case "LISTSTATUS":
		return h.list(ctx, w, r, false)
	case "LISTSTATUS_BATCH":
		return h.list(ctx, w, r, true)
	case "OPEN":
		return h.open(ctx, w, req, r)
	case "GETCONTENTSUMMARY", "GETQUOTAUSAGE":
		dirs, files, length, err := h.summarize(ctx, r.path)
		if err != nil {
			return err
		}
		if r.op == "GETQUOTAUSAGE" {
			writeJSON(w, http.StatusOK, map[string]quotaUsage{"QuotaUsage": {
				FileAndDirectoryCount: dirs + files, Quota: -1, SpaceConsumed: length * Replication,
				SpaceQuota: -1, TypeQuota: map[string]any{}}})
			return nil
		}
		writeJSON(w, http.StatusOK, map[string]contentSummary{"ContentSummary": {
			DirectoryCount: dirs, FileCount: files, Length: length,
			Quota: -1, SpaceConsumed: length * Replication, SpaceQuota: -1, TypeQuota: map[string]any{}}})
	case "GETFILECHECKSUM":
		return h.checksum(ctx, w, r)
	case "GETFILEBLOCKLOCATIONS":
		return h.blockLocations(ctx, w, req, r)
	case "GETHOMEDIRECTORY":
		writeJSON(w, http.StatusOK, map[string]string{"Path": "/user/" + r.user})
	case "GETTRASHROOT":
		writeJSON(w, http.StatusOK, map[string]string{"Path": "/user/" + r.user + "/.Trash"})
	case "GETDELEGATIONTOKEN":
		writeJSON(w, http.StatusOK, map[string]any{"Token": nil})
	case "GETSERVERDEFAULTS":
		writeJSON(w, http.StatusOK, map[string]serverDefaults{"FsServerDefaults": {
			BlockSize: h.blockSize, BytesPerChecksum: blocks.BytesPerChecksum, ChecksumType: checksumCRC32C,
			DefaultStoragePolicyID: hot.ID, FileBufferSize: 4096, Replication: Replication,
			WritePacketSize: 64 << 10}})
	case "CHECKACCESS":
		return h.checkAccess(ctx, w, r)
	case "GETACLSTATUS":
		e, err := h.v.Stat(ctx, r.path)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]aclStatus{"AclStatus": {
			Entries: []string{}, Group: view.Group, Owner: view.Owner, Permission: h.status(e, "", 0).Permission}})
	case "GETXATTRS", "LISTXATTRS":
		if _, err := h.v.Stat(ctx, r.path); err != nil {
			return err
		}
		if r.op == "GETXATTRS" && r.q.Get("encoding") == "" {
			return badRequest("Required param encoding for op: GETXATTRS is null or empty")
		}
		if r.op == "LISTXATTRS" {
			writeJSON(w, http.StatusOK, map[string]string{"XAttrNames": "[]"})
		} else if len(r.q["xattr.name"]) > 0 {
			return ioError("java.io.IOException", "IOException", "At least one of the attributes provided was not found.")
		} else {
			writeJSON(w, http.StatusOK, map[string][]any{"XAttrs": {}})
		}
	case "GETSTORAGEPOLICY":
		if _, err := h.v.Stat(ctx, r.path); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]storagePolicy{"BlockStoragePolicy": hot})
	case "GETALLSTORAGEPOLICY":
		writeJSON(w, http.StatusOK, map[string]map[string][]storagePolicy{"BlockStoragePolicies": {"BlockStoragePolicy": {hot}}})
	default:
		return unsupported(r.op)
	}
	return nil
}

// list answers LISTSTATUS (every entry) and LISTSTATUS_BATCH (BatchSize
// entries after startAfter), writing the entries one by one.
func (h *handler) list(ctx context.Context, w http.ResponseWriter, r request, batch bool) error {
	e, err := h.v.Stat(ctx, r.path)
	if err != nil {
		return err
	}
	entries := []view.Entry{e}
	if e.IsDir {
		if entries, err = h.v.List(ctx, r.path); err != nil {
			return err
		}
	}
	remaining := 0
	if batch && e.IsDir {
		after := r.q.Get("startAfter")
		i := 0
		for i < len(entries) && entries[i].Name <= after {
			i++
		}
		entries = entries[i:]
		if len(entries) > BatchSize {
			remaining = len(entries) - BatchSize
			entries = entries[:BatchSize]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 32<<10)
	if batch {
		bw.WriteString(`{"DirectoryListing":{"partialListing":{"FileStatuses":{"FileStatus":[`)
	} else {
		bw.WriteString(`{"FileStatuses":{"FileStatus":[`)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, c := range entries {
		if i > 0 {
			bw.WriteByte(',')
		}
		suffix := c.Name
		if !e.IsDir {
			suffix = "" // a file lists as itself, as HDFS does
		}
		buf.Reset()
		enc.Encode(h.status(c, suffix, -1)) // our own type: cannot fail
		if _, err := bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); err != nil {
			return nil // the client went away: nothing to answer
		}
	}
	if batch {
		bw.WriteString(`]}},"remainingEntries":` + strconv.Itoa(remaining) + "}}")
	} else {
		bw.WriteString("]}}")
	}
	bw.Flush()
	return nil
}

// copyBufs holds OPEN's copy buffers (*[]byte of copyBufSize bytes).
var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// copyBufSize is the size of OPEN's reads of the file and writes to the
// connection.
const copyBufSize = 256 << 10

// open answers OPEN with the bytes themselves (200, no redirect: Hadoop's
// client takes a 200 to its redirecting request as the data, as from
// HttpFS).
func (h *handler) open(ctx context.Context, w http.ResponseWriter, req *http.Request, r request) error {
	f, err := h.v.Open(ctx, r.path)
	if err != nil {
		return err
	}
	defer f.Close()
	size := f.Size()
	off, _ := r.longParam("offset", 0)
	n, _ := r.longParam("length", -1)
	if off >= size && size > 0 {
		// HDFS's NameNode refuses these before it redirects.
		return ioError("java.io.IOException", "IOException", "Offset=%d out of the range [0, %d); OPEN, path=%s", off, size, r.display())
	}
	if n < 0 || n > size-off {
		n = size - off
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	// Through a plain Writer: the ResponseWriter's ReadFrom would copy
	// in 32 KiB pieces, one read and one write system call each.
	dw := deadlineWriter{w: w, rc: http.NewResponseController(w), d: h.writeTimeout}
	if _, err := io.CopyBuffer(dw, io.NewSectionReader(f, off, n), *bp); err != nil && ctx.Err() == nil {
		// The status is sent: all that is left is to cut the body short,
		// which the client sees against Content-Length.
		h.log.WithError(err).WithField("path", r.display()).Warn("webhdfs: OPEN failed mid-body")
		panic(http.ErrAbortHandler)
	}
	return nil
}

// deadlineWriter gives every write of a body its own deadline, so a client
// that stops reading frees its handler (and the chunk and buffer it
// holds) within d, however long the whole body takes.
type deadlineWriter struct {
	w  io.Writer
	rc *http.ResponseController
	d  time.Duration
}

func (dw deadlineWriter) Write(p []byte) (int, error) {
	if err := dw.rc.SetWriteDeadline(time.Now().Add(dw.d)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return 0, err
	}
	return dw.w.Write(p)
}

// location answers a redirecting op asked with noredirect=true as HDFS's
// NameNode does, with {"Location": URL}: here the same URL without
// noredirect, as this handler serves the data itself.
func (h *handler) location(ctx context.Context, w http.ResponseWriter, req *http.Request, r request) error {
	e, err := h.v.Stat(ctx, r.path)
	if err != nil {
		return err
	}
	if e.IsDir {
		return notFoundf("Path is not a file: %s", r.display())
	}
	q := url.Values{}
	for k, vs := range r.q {
		if k != "noredirect" {
			q[k] = vs
		}
	}
	u := url.URL{Scheme: "http", Host: req.Host, RawPath: req.URL.EscapedPath(), Path: req.URL.Path, RawQuery: q.Encode()}
	if req.TLS != nil {
		u.Scheme = "https"
	}
	writeJSON(w, http.StatusOK, map[string]string{"Location": u.String()})
	return nil
}

// summarize walks the tree under p: directories (p itself included),
// files, and their bytes.
func (h *handler) summarize(ctx context.Context, p string) (dirs, files, length int64, err error) {
	e, err := h.v.Stat(ctx, p)
	if err != nil {
		return 0, 0, 0, err
	}
	if !e.IsDir {
		return 0, 1, e.Size, nil
	}
	stack := []string{e.Path}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return 0, 0, 0, err
		}
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		dirs++
		es, err := h.v.List(ctx, d)
		if errors.Is(err, view.ErrNotExist) && d != e.Path {
			continue // gone since its parent was listed
		}
		if err != nil {
			return 0, 0, 0, err
		}
		for _, c := range es {
			if c.IsDir {
				stack = append(stack, c.Path)
			} else {
				files++
				length += c.Size
			}
		}
	}
	return dirs, files, length, nil
}

// checksum answers GETFILECHECKSUM with blocks.Checksum, the HDFS RPC
// head's value.
func (h *handler) checksum(ctx context.Context, w http.ResponseWriter, r request) error {
	f, err := h.v.Open(ctx, r.path)
	if err != nil {
		return err
	}
	defer f.Close()
	sum, err := blocks.Checksum(f, r.path, f.Size(), h.blockSize)
	if err != nil {
		return err
	}
	b := sum.Bytes()
	writeJSON(w, http.StatusOK, map[string]fileChecksum{"FileChecksum": {
		Algorithm: sum.Algorithm(), Bytes: hex.EncodeToString(b), Length: len(b)}})
	return nil
}

// blockLocations answers GETFILEBLOCKLOCATIONS: every block is on this
// server, the host the client called.
func (h *handler) blockLocations(ctx context.Context, w http.ResponseWriter, req *http.Request, r request) error {
	e, err := h.v.Stat(ctx, r.path)
	if err != nil {
		return err
	}
	if e.IsDir {
		return notFoundf("Path is not a file: %s", r.display())
	}
	off, _ := r.longParam("offset", 0)
	n, _ := r.longParam("length", e.Size)
	host, port, err := net.SplitHostPort(req.Host)
	if err != nil {
		host, port = req.Host, "80"
	}
	name := net.JoinHostPort(host, port)
	locs := []blockLocation{}
	end := off + n
	if end < off { // a length up to the largest long: to the end
		end = math.MaxInt64
	}
	for _, b := range blocks.Of(r.path, e.Size, h.blockSize) {
		if b.Offset+b.Len <= off || b.Offset >= end {
			continue
		}
		locs = append(locs, blockLocation{
			CachedHosts: []string{}, Hosts: []string{host}, Length: b.Len, Names: []string{name},
			Offset: b.Offset, StorageTypes: []string{"DISK"},
			TopologyPaths: []string{"/default-rack/" + name},
		})
	}
	writeJSON(w, http.StatusOK, map[string]map[string][]blockLocation{"BlockLocations": {"BlockLocation": locs}})
	return nil
}

// checkAccess answers CHECKACCESS: reading (and traversing a directory)
// is allowed, writing never.
func (h *handler) checkAccess(ctx context.Context, w http.ResponseWriter, r request) error {
	_, write, exec, err := fsAction(r.q.Get("fsaction"))
	if err != nil {
		return err
	}
	e, err := h.v.Stat(ctx, r.path)
	if err != nil {
		return err
	}
	if write || (exec && !e.IsDir) {
		return accessDenied("user=%s, access=%s, inode=%q: sluice's HDFS head is read-only", r.user, r.q.Get("fsaction"), r.display())
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
