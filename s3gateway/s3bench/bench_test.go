package s3bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/benchtest"
	"github.com/sluice-streams/sluice/s3gateway"
	"github.com/sluice-streams/sluice/s3gateway/sigv4"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// Shape of a run; SLUICE_S3BENCH_FILES, _MIB and _ROUNDS override them.
const (
	defaultFiles  = 4
	defaultMiB    = 64
	defaultRounds = 5
	readBuf       = 1 << 20
	key, secret   = "BENCHKEY", "benchsecret"
)

type file struct {
	Key    string `json:"key"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	size   int64
}

// BenchmarkS3Read reads the same files through the S3 head (boto3, and
// Go's net/http) and from the disk (Python and Go), in the same minutes.
// The whole run is one op: run it with -benchtime 1x.
func BenchmarkS3Read(b *testing.B) {
	nfiles := benchtest.EnvInt(b, "SLUICE_S3BENCH_FILES", defaultFiles)
	mib := benchtest.EnvInt(b, "SLUICE_S3BENCH_MIB", defaultMiB)
	rounds := benchtest.EnvInt(b, "SLUICE_S3BENCH_ROUNDS", defaultRounds)
	py := venvPython(b)
	root := b.TempDir()
	st, err := fs.New(root)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	files := make([]file, nfiles)
	for i := range files {
		files[i] = writeChunk(b, st, root, int64(i)<<32, mib)
	}
	v := view.New(st, viewtest.NewCatalog(map[string][]string{"bench": {"s"}}), view.Options{})
	srv := httptest.NewServer(s3gateway.NewHandler(v, s3gateway.Config{Credentials: map[string]string{key: secret}}))
	defer srv.Close()

	for b.Loop() {
		loadBefore := benchtest.Loadavg()
		res := map[string][]float64{}
		res["go-disk"] = goRounds(b, rounds, files, func(f file, h hash.Hash) (int64, error) {
			fh, err := os.Open(f.Path)
			if err != nil {
				return 0, err
			}
			defer fh.Close()
			return io.CopyBuffer(h, onlyReader{fh}, make([]byte, readBuf))
		})
		res["go-http"] = goRounds(b, rounds, files, func(f file, h hash.Hash) (int64, error) {
			r, _ := http.NewRequest("GET", srv.URL+"/bench/"+f.Key, nil)
			sign(r)
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				return 0, fmt.Errorf("GET %s: %s", f.Key, resp.Status)
			}
			return io.CopyBuffer(h, onlyReader{resp.Body}, make([]byte, readBuf))
		})
		spec, _ := json.Marshal(map[string]any{"endpoint": srv.URL, "key": key, "secret": secret, "bucket": "bench", "rounds": rounds, "files": files})
		specFile := filepath.Join(b.TempDir(), "spec.json")
		os.WriteFile(specFile, spec, 0o644)
		cmd := exec.Command(py, "read.py", specFile)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("read.py: %v\n%s", err, stderr.String())
		}
		var pyRes map[string][]float64
		if err := json.Unmarshal(out, &pyRes); err != nil {
			b.Fatalf("read.py: %v: %s", err, out)
		}
		for k, v := range pyRes {
			res[k] = v
		}
		loadAfter := benchtest.Loadavg()
		var rep strings.Builder
		var total int64
		for _, f := range files {
			total += f.size
		}
		fmt.Fprintf(&rep, "BenchmarkS3Read: %d files of %d MiB (%d bytes), %d rounds after a warm-up; load %s before, %s after (1, 5, 15 min)\n",
			nfiles, mib, total, rounds, loadBefore, loadAfter)
		med := map[string]float64{}
		for _, label := range []string{"go-disk", "go-http", "python-disk", "boto3"} {
			lo, m, hi := benchtest.Spread(res[label])
			med[label] = m
			fmt.Fprintf(&rep, "  %-12s MB/s min %7.0f  median %7.0f  max %7.0f\n", label, lo, m, hi)
			b.ReportMetric(med[label], label+"-MB/s")
		}
		fmt.Fprintf(&rep, "  boto3 / python-disk %.2f; go-http / go-disk %.2f\n", med["boto3"]/med["python-disk"], med["go-http"]/med["go-disk"])
		b.ReportMetric(med["boto3"]/med["python-disk"], "boto3/disk")
		b.ReportMetric(med["go-http"]/med["go-disk"], "gohttp/disk")
		b.ReportMetric(0, "ns/op")
		b.Log(rep.String())
	}
}

// goRounds reads every file once untimed, then rounds times, checking
// the bytes, and returns MB/s per round.
func goRounds(b *testing.B, rounds int, files []file, read func(file, hash.Hash) (int64, error)) []float64 {
	var out []float64
	for r := 0; r <= rounds; r++ {
		start := time.Now()
		var total int64
		for _, f := range files {
			h := sha256.New()
			n, err := read(f, h)
			if err != nil {
				b.Fatal(err)
			}
			if hex.EncodeToString(h.Sum(nil)) != f.SHA256 || n != f.size {
				b.Fatalf("%s: read %d wrong bytes", f.Key, n)
			}
			total += n
		}
		if r > 0 {
			out = append(out, float64(total)/time.Since(start).Seconds()/1e6)
		}
	}
	return out
}

type onlyReader struct{ io.Reader }

func sign(r *http.Request) {
	amz := time.Now().UTC().Format("20060102T150405Z")
	r.Header.Set("X-Amz-Date", amz)
	r.Header.Set("X-Amz-Content-Sha256", sigv4.UnsignedPayload)
	signed := []string{"host", "x-amz-content-sha256", "x-amz-date"}
	scope := amz[:8] + "/us-east-1/s3/aws4_request"
	sts := sigv4.StringToSign(amz, scope, sigv4.CanonicalRequest(r, signed, sigv4.UnsignedPayload, false))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+key+"/"+scope+",SignedHeaders="+strings.Join(signed, ";")+",Signature="+sigv4.Signature(secret, amz[:8], "us-east-1", sts))
}

// venvPython is the S3 clients' Python (scripts/s3-deps.sh).
func venvPython(b *testing.B) string {
	py, err := filepath.Abs(filepath.Join("..", "..", ".cache", "s3clients", "bin", "python"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(py); err != nil {
		b.Fatalf("the S3 clients are not installed at %s: run `bash scripts/s3-deps.sh` from the repository root (`make bench-s3` does)", py)
	}
	return py
}

// writeChunk writes a chunk of about mib MiB at the first-th offset of
// stream bench/s (benchtest.WriteChunk) and returns it as read.py takes it.
func writeChunk(b *testing.B, st tier2.Storage, root string, first int64, mib int) file {
	c := benchtest.WriteChunk(b, st, tier2.ChunkPath("bench", "s", 0, first), first, mib<<20)
	return file{Key: strings.TrimPrefix(c.Path, "bench/"), Path: filepath.Join(root, filepath.FromSlash(c.Path)), SHA256: c.SHA256, size: c.Size}
}
