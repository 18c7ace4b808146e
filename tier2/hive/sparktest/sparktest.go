package sparktest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Timeout bounds one Run (one RunScript): a Spark session starts in about
// 10 s on two busy cores; the rest is the queries' or the reads'.
const Timeout = 5 * time.Minute

// Spark is a PySpark installation that runs sparksql.py.
type Spark struct {
	// Python is the virtual environment's interpreter.
	Python string
	// Script is sparksql.py.
	Script string
}

// Request is what one Run does: Statements in order, then Queries, each
// a SELECT whose rows Run returns under its name, then SequenceFiles.
type Request struct {
	Statements    []string                `json:"statements"`
	Queries       map[string]string       `json:"queries"`
	SequenceFiles map[string]SequenceFile `json:"sequencefiles"`
	// ClassPath is jars put on the driver's class path before Spark's
	// own (spark.driver.extraClassPath): local mode runs every task there.
	ClassPath []string `json:"classpath"`
}

// SequenceFile is a read of LongWritable/BytesWritable SequenceFiles with
// Hadoop's own SequenceFileInputFormat (the mapreduce API) in Spark, as
// jobs that skip Hive read tier 2. Its result is [[records]], or
// [["error", the Java exception]] when the job fails; with Records, one
// row [key, value] per record instead (PySpark's newAPIHadoopFile).
type SequenceFile struct {
	Path    string            `json:"path"`    // a directory or a glob
	Conf    map[string]string `json:"conf"`    // set on the job
	Records bool              `json:"records"` // every record, not their count
}

// Result holds each query's rows by name. A cell is nil (NULL), bool,
// float64 (every number), string, or []byte (a BINARY value).
type Result map[string][][]any

// root is the repository's root (this file is tier2/hive/sparktest/).
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Find returns the installation, failing t (never skipping) with what to
// do when it is missing.
func Find(t testing.TB) *Spark {
	t.Helper()
	py := filepath.Join(root(), ".cache", "pyspark", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("sparktest: PySpark is not installed (%v); run `make spark` (or bash scripts/spark-deps.sh)", err)
	}
	_, file, _, _ := runtime.Caller(0)
	return &Spark{Python: py, Script: filepath.Join(filepath.Dir(file), "sparksql.py")}
}

// Run runs req in one Spark session and returns the queries' rows. Any
// failure (Spark's error, a timeout) fails t with Spark's output.
func (s *Spark) Run(t testing.TB, req Request) Result {
	t.Helper()
	res, err := decode(RunScript(t, s.Python, s.Script, req))
	if err != nil {
		t.Fatalf("sparktest: %v", err)
	}
	t.Logf("sparktest: seconds per step: %v", res["_timings"])
	delete(res, "_timings")
	return res
}

// RunScript runs `python script REQUEST RESULT WORK` in a temp dir WORK,
// REQUEST being req as JSON, and returns the bytes the script wrote to
// RESULT. The script (PySpark) starts a JVM: the process group is killed
// at Timeout, shortly before t's deadline, or when it exits. A failure
// (the script's exit status, a timeout, no result) fails t with the tail
// of the script's output.
func RunScript(t testing.TB, python, script string, req any) []byte {
	t.Helper()
	work := t.TempDir()
	in, out := filepath.Join(work, "request.json"), filepath.Join(work, "result.json")
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, body, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			ctx, cancel = context.WithDeadline(ctx, dl.Add(-10*time.Second))
			defer cancel()
		}
	}
	cmd := exec.CommandContext(ctx, python, script, in, out, work)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "SPARK_LOCAL_IP=127.0.0.1", "PYTHONUNBUFFERED=1")
	// Python starts the JVM: kill the whole group, and let it die with us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything the script left behind
	}
	if err != nil {
		t.Fatalf("sparktest: spark failed (%v; timeout %v):\n%s", err, Timeout, tail(log.String(), 12000))
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("sparktest: no result (%v):\n%s", err, tail(log.String(), 12000))
	}
	return raw
}

// decode reads sparksql.py's result, turning {"hex": ...} cells into
// []byte.
func decode(raw []byte) (Result, error) {
	var rows map[string][][]any
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	for name, rs := range rows {
		for _, row := range rs {
			for i, c := range row {
				m, ok := c.(map[string]any)
				if !ok {
					continue
				}
				h, _ := m["hex"].(string)
				b, err := hex.DecodeString(h)
				if err != nil {
					return nil, fmt.Errorf("result %s: binary cell %q: %w", name, h, err)
				}
				row[i] = b
			}
		}
	}
	return Result(rows), nil
}

// Statements splits a script as `sluice hive ddl` prints it into its
// statements: comment lines dropped, a statement ending with the line that
// ends in ';'.
func Statements(script string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") || strings.TrimSpace(line) == "" {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}
