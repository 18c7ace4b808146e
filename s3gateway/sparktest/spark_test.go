//go:build spark

package sparktest_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	iofs "io/fs"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/s3gateway"
	"github.com/sluice-streams/sluice/s3gateway/sparktest"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/seqfile"
	"github.com/sluice-streams/sluice/tier2/tier2test"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// manyChunks is the number of chunks of the stream whose listing takes
// two pages of the head's (s3gateway.MaxKeys) and more than one of S3A's
// 5,000-key requests would if the head served them all.
const manyChunks = s3gateway.MaxKeys + 234

// The head's keys and region in the test.
const (
	accessKey = "SLUICETESTKEY"
	secretKey = "sluice-test-secret"
	region    = "us-east-1"
)

// writeChunks writes the chunks (tier2test.WriteChunks) and returns
// each segment's records as Spark should read them.
func writeChunks(t *testing.T, st tier2.Storage, scope, stream string, chunks []tier2test.Chunk) map[int64][]sparktest.Record {
	t.Helper()
	recs := map[int64][]sparktest.Record{}
	for seg, evs := range tier2test.WriteChunks(t, st, scope, stream, chunks) {
		for _, ev := range evs {
			recs[seg] = append(recs[seg], sparktest.Record{Key: ev.Offset, Value: ev.Data})
		}
	}
	return recs
}

// events are every byte value alone and together, empty events, text,
// and large random ones (so that a chunk spans several of S3A's reads
// and Spark's splits).
func events() [][]byte {
	var evs [][]byte
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
		evs = append(evs, []byte{byte(i)})
	}
	evs = append(evs, all, []byte{}, []byte{}, []byte("\n"), []byte("héllo, wörld"), []byte("\xff\xfe"))
	for i := range 300 {
		evs = append(evs, []byte(fmt.Sprintf("h%d\t%d\t/p/%d", i%7, 200+i%3, i)))
	}
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{1000, 70000, 150000, 150000, 200000, 200000, 300000, 300000, 250000, 250000, 100000, 100000} {
		b := make([]byte, n)
		r.Read(b)
		evs = append(evs, b)
	}
	return evs
}

// split spreads events over chunks of two segments, in each compression.
func split(evs [][]byte) []tier2test.Chunk {
	comps := []seqfile.Compression{seqfile.None, seqfile.Record, seqfile.Block}
	var chunks []tier2test.Chunk
	for i := range 6 {
		chunks = append(chunks, tier2test.Chunk{Segment: int64(i / 3), Compression: comps[i%3]})
	}
	for i, ev := range evs {
		chunks[i%6].Events = append(chunks[i%6].Events, ev)
	}
	return chunks
}

// calls counts the head's requests by S3 call, as s3a made them.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n[callName(r)]++
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (c *calls) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, n := range c.n {
		out = append(out, fmt.Sprintf("%s x%d", k, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// callName names a path-style S3 request.
func callName(r *http.Request) string {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	switch {
	case bucket == "":
		return r.Method + " service"
	case key == "" && r.Method == http.MethodGet && q.Get("list-type") == "2":
		name := "ListObjectsV2"
		if q.Has("delimiter") {
			name += " delimiter=" + q.Get("delimiter")
		}
		if q.Has("continuation-token") {
			name += " continued"
		}
		return name
	case key == "" && r.Method == http.MethodGet && q.Has("location"):
		return "GetBucketLocation"
	case key == "" && r.Method == http.MethodGet:
		return "ListObjects (v1) " + r.URL.RawQuery
	case key == "" && r.Method == http.MethodHead:
		return "HeadBucket"
	case key == "":
		return r.Method + " bucket " + r.URL.RawQuery
	case r.Method == http.MethodHead:
		return "HeadObject"
	case r.Method == http.MethodGet && r.Header.Get("Range") != "":
		return "GetObject with Range"
	case r.Method == http.MethodGet:
		return "GetObject"
	}
	return r.Method + " object " + r.URL.RawQuery
}

// TestS3AInSpark reads a stream's chunks through the S3 head with
// Spark's s3a:// (hadoop-aws 3.5.0 in PySpark 4.3.0), signed with the
// head's keys: sc.sequenceFile over one segment's chunks and over all
// segments' gives every record (offset and event) as written, in order,
// also when Spark splits a chunk into several ranged reads;
// SequenceFileInputFormat over the stream's directory (recursive) the
// same, also through S3A's prefetching and analytics input streams; the
// binaryFile DataFrame reader every chunk byte-identical to
// tier 2 with its size and time, and never a chunk still being written;
// a stream of more chunks than a page of listing globbed, listed
// recursively and read whole.
// Unsigned reads (S3A's anonymous credentials) work from a head that
// serves them, as the standalone's does by default. A wrong secret or an
// unknown key fails with the head's 403, a deleted stream (its chunks
// still in tier 2) and a missing one match no file, and a write from
// Spark fails with AccessDenied and leaves tier 2 as it was.
func TestS3AInSpark(t *testing.T) {
	spark := sparktest.Find(t)
	dir := t.TempDir()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := writeChunks(t, st, "iot", "frames", split(events()))
	var access [][]byte
	for i := range 12 {
		access = append(access, []byte(fmt.Sprintf("another scope's event %d", i)))
	}
	writeChunks(t, st, "logs", "access", split(access))
	// A stream of more chunks than one page of a listing holds.
	var many []tier2test.Chunk
	for i := range manyChunks {
		many = append(many, tier2test.Chunk{Events: [][]byte{[]byte(fmt.Sprintf("chunk %d", i))}})
	}
	wantMany := writeChunks(t, st, "iot", "many", many)[0]
	// A deleted stream: its chunks wait in tier 2 to be removed, but the
	// controller no longer names it.
	writeChunks(t, st, "iot", "deleted", split(access))
	// A chunk being written, under its temporary name: half a chunk.
	half := chunkFiles(t, dir)[tier2.ChunkPath("iot", "frames", 0, 0)].data
	half = half[:len(half)/2]
	last := want[0][len(want[0])-1]
	tmp, err := st.Create(tier2.TempChunkPath("iot", "frames", 0, last.Key+int64(protocol.EventHeaderSize+len(last.Value))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write(half); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	tier2Files := chunkFiles(t, dir)
	v := view.New(st, viewtest.NewCatalog(map[string][]string{"iot": {"frames", "many"}, "logs": {"access"}}), view.Options{})

	seen := &calls{n: map[string]int{}}
	endpoint := serveHead(t, v, seen, s3gateway.Config{Credentials: map[string]string{accessKey: secretKey}, Region: region})
	// The standalone's default: no keys, unsigned requests served.
	anonymous := serveHead(t, v, seen, s3gateway.Config{Anonymous: true, Region: region})
	conf := sparktest.S3AConf(endpoint, region, accessKey, secretKey)
	// Splits of 128 KiB: Spark reads each chunk in several splits, each
	// from the sync point after its start, through its own ranged GETs.
	conf["spark.hadoop.fs.s3a.block.size"] = "131072"
	// A refusal is final: no retries with backoff to wait through.
	conf["spark.hadoop.fs.s3a.attempts.maximum"] = "1"
	conf["spark.hadoop.fs.s3a.retry.limit"] = "1"

	other := func(k, v string) map[string]string {
		return map[string]string{k: v, "fs.s3a.impl.disable.cache": "true"}
	}
	res := spark.Run(t, sparktest.Request{Conf: conf, Reads: map[string]sparktest.Read{
		"segment0":  {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames/segment=0/*.seq"},
		"segments":  {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames/segment=*/*.seq"},
		"recursive": {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames", Conf: map[string]string{"mapreduce.input.fileinputformat.input.dir.recursive": "true"}},
		"files":     {Kind: sparktest.BinaryFile, Path: "s3a://iot/frames/segment=*/*.seq"},
		"deleted":   {Kind: sparktest.SequenceFile, Path: "s3a://iot/deleted/segment=*/*.seq"},
		"no-stream": {Kind: sparktest.SequenceFile, Path: "s3a://iot/nosuch/segment=0/*.seq"},
		"secret":    {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames/segment=0/*.seq", Conf: other("fs.s3a.secret.key", "not-"+secretKey)},
		"key":       {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames/segment=0/*.seq", Conf: other("fs.s3a.access.key", "NOSUCHKEY")},
		"write":     {Kind: sparktest.TextWrite, Path: "s3a://iot/frames/out"},
		"many-glob": {Kind: sparktest.Glob, Path: "s3a://iot/many/segment=0/*.seq"},
		"many-list": {Kind: sparktest.ListFiles, Path: "s3a://iot/many"},
		"many-seq":  {Kind: sparktest.SequenceFile, Path: "s3a://iot/many/segment=*/*.seq"},
		// S3A's other input streams (the default is "classic").
		"prefetch":  {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames/segment=*/*.seq", Conf: other("fs.s3a.input.stream.type", "prefetch")},
		"analytics": {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames/segment=*/*.seq", Conf: other("fs.s3a.input.stream.type", "analytics")},
		"anonymous": {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames/segment=*/*.seq", Conf: map[string]string{
			"fs.s3a.endpoint":                 anonymous,
			"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider",
			"fs.s3a.impl.disable.cache":       "true",
		}},
	}})
	t.Logf("S3 calls s3a made: %s", seen)

	var all []sparktest.Record
	for _, seg := range []int64{0, 1} {
		all = append(all, want[seg]...)
	}
	checkRecords(t, "sc.sequenceFile(segment=0/*.seq)", res["segment0"], want[0])
	checkRecords(t, "sc.sequenceFile(segment=*/*.seq)", res["segments"], all)
	checkRecords(t, "SequenceFileInputFormat(frames, recursive)", res["recursive"], all)
	checkRecords(t, "SequenceFileInputFormat(segment=*/*.seq), S3A's prefetching stream", res["prefetch"], all)
	checkRecords(t, "SequenceFileInputFormat(segment=*/*.seq), S3A's analytics stream", res["analytics"], all)
	checkRecords(t, "SequenceFileInputFormat(segment=*/*.seq), unsigned, from a head serving anonymous requests", res["anonymous"], all)

	// Listings of more than a page: S3A follows the continuation tokens.
	var wantManyPaths []string
	for rel := range tier2Files {
		if strings.HasPrefix(rel, "iot/many/") {
			wantManyPaths = append(wantManyPaths, "s3a://"+rel)
		}
	}
	slices.Sort(wantManyPaths)
	for _, name := range []string{"many-glob", "many-list"} {
		got := res[name]
		if got.Error != "" {
			t.Errorf("%s: %s", name, got.Error)
			continue
		}
		var paths []string
		for _, f := range got.Files {
			paths = append(paths, f.Path)
		}
		slices.Sort(paths)
		if !slices.Equal(paths, wantManyPaths) {
			t.Errorf("%s: %d files listed, %d chunks in tier 2 (first listed %v)", name, len(paths), len(wantManyPaths), paths[:min(3, len(paths))])
		}
	}
	checkRecords(t, "sc.sequenceFile(many/segment=*/*.seq)", res["many-seq"], wantMany)

	files := res["files"]
	if files.Error != "" {
		t.Errorf("binaryFile: %s", files.Error)
	}
	var paths []string
	for _, f := range files.Files {
		paths = append(paths, f.Path)
		rel := strings.TrimPrefix(f.Path, "s3a://")
		disk, ok := tier2Files[rel]
		if !ok {
			t.Errorf("binaryFile: %s read, not a chunk of iot/frames", f.Path)
			continue
		}
		if !bytes.Equal(f.Content, disk.data) || f.Length != int64(len(disk.data)) {
			t.Errorf("binaryFile: %s: %d bytes (length %d), tier 2 has %d; equal: %v", f.Path, len(f.Content), f.Length, len(disk.data), bytes.Equal(f.Content, disk.data))
		}
		if !f.ModTime.Equal(disk.mod.Truncate(time.Second)) {
			t.Errorf("binaryFile: %s: modified %v, tier 2 says %v", f.Path, f.ModTime, disk.mod)
		}
	}
	var wantPaths []string
	for rel := range tier2Files {
		if _, ok := tier2.ParseChunkName(path.Base(rel)); ok && !tier2.IsTemp(path.Base(rel)) && strings.HasPrefix(rel, "iot/frames/") {
			wantPaths = append(wantPaths, "s3a://"+rel)
		}
	}
	slices.Sort(paths)
	slices.Sort(wantPaths)
	if !slices.Equal(paths, wantPaths) {
		t.Errorf("binaryFile: files %v, want %v", paths, wantPaths)
	}

	for _, name := range []string{"deleted", "no-stream"} {
		if got := res[name]; !strings.Contains(got.Error, "matches 0 files") {
			t.Errorf("%s: %d records, error %q; want no file matched", name, len(got.Records), got.Error)
		}
	}
	// Refusals: the head's 403 and S3 error code, as S3A reports them.
	for name, code := range map[string]string{"secret": "SignatureDoesNotMatch", "key": "InvalidAccessKeyId", "write": "AccessDenied"} {
		got := res[name]
		if !sparktest.HasStatus(got.Error, http.StatusForbidden) || !strings.Contains(got.Error, code) {
			t.Errorf("%s: %d records, error %q; want the head's 403 %s", name, len(got.Records), got.Error, code)
		} else {
			t.Logf("%s, as Spark says it: %s", name, firstLine(got.Error))
		}
	}
	after := chunkFiles(t, dir)
	if len(after) != len(tier2Files) {
		t.Errorf("tier 2 had %d files before Spark, %d after", len(tier2Files), len(after))
	}
	for rel, f := range after {
		if b, ok := tier2Files[rel]; !ok || !bytes.Equal(b.data, f.data) {
			t.Errorf("tier 2's %s changed while Spark read it", rel)
		}
	}
}

// checkRecords compares what Spark read with the records written, in
// order.
func checkRecords(t *testing.T, what string, got sparktest.Outcome, want []sparktest.Record) {
	t.Helper()
	if got.Error != "" {
		t.Errorf("%s: %s", what, got.Error)
		return
	}
	if len(got.Records) != len(want) {
		t.Errorf("%s: %d records, %d written", what, len(got.Records), len(want))
	}
	var gotBytes, wantBytes int
	for i := range min(len(got.Records), len(want)) {
		g, w := got.Records[i], want[i]
		gotBytes += len(g.Value)
		wantBytes += len(w.Value)
		if g.Key != w.Key || !bytes.Equal(g.Value, w.Value) {
			t.Errorf("%s: record %d is (%d, %s), written (%d, %s)", what, i, g.Key, short(g.Value), w.Key, short(w.Value))
			return
		}
	}
	t.Logf("%s: %d records, %d bytes of events, as written", what, len(got.Records), gotBytes)
}

// diskFile is a file of the tier-2 directory.
type diskFile struct {
	data []byte
	mod  time.Time
}

// chunkFiles reads every file under dir, by slash-separated relative path.
func chunkFiles(t *testing.T, dir string) map[string]diskFile {
	t.Helper()
	out := map[string]diskFile{}
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = diskFile{data: data, mod: fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func short(b []byte) string {
	if len(b) > 16 {
		return hex.EncodeToString(b[:16]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return hex.EncodeToString(b)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// serveHead serves v with the S3 head configured by cfg on 127.0.0.1 (a
// free port) until the test ends, and returns its endpoint.
func serveHead(t *testing.T, v *view.View, seen *calls, cfg s3gateway.Config) string {
	t.Helper()
	srv := httptest.NewServer(seen.wrap(s3gateway.NewHandler(v, cfg)))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + u.Host
}
