package sparktest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	hivespark "github.com/sluice-streams/sluice/tier2/hive/sparktest"
)

// Timeout bounds one Run: that of the PySpark script it runs.
const Timeout = hivespark.Timeout

// Spark is PySpark with the S3A jars.
type Spark struct {
	// Python is the virtual environment's interpreter.
	Python string
	// Script is s3aread.py.
	Script string
	// Jars are the S3A jars (jars/target/jars), sorted.
	Jars []string
}

// Read kinds.
const (
	// SequenceFile reads with sc.sequenceFile (Hadoop's
	// SequenceFileInputFormat), every record as key and value.
	SequenceFile = "sequencefile"
	// BinaryFile reads with the binaryFile DataFrame reader, every file
	// whole.
	BinaryFile = "binaryfile"
	// Glob lists with Hadoop's FileSystem.globStatus through S3A: Files
	// with no content.
	Glob = "glob"
	// ListFiles lists with FileSystem.listFiles(path, recursive): Files
	// with no content.
	ListFiles = "listfiles"
	// TextWrite writes a line with saveAsTextFile: a write, which an
	// Outcome with no Error says succeeded.
	TextWrite = "textwrite"
)

// Read is one read of a Run.
type Read struct {
	Kind string `json:"kind"` // SequenceFile, BinaryFile, Glob, ListFiles or TextWrite
	// Path is an s3a:// file, directory or glob.
	Path string `json:"path"`
	// Conf is Hadoop settings for this read only, over the session's
	// (SequenceFile only; the read then goes through newAPIHadoopFile).
	// Hadoop caches a FileSystem per bucket: settings that must reach S3A
	// need "fs.s3a.impl.disable.cache": "true" too.
	Conf map[string]string `json:"conf,omitempty"`
}

// Request is what one Run does: Conf set on the session, then Reads in
// order of their names (a TextWrite is one of them).
type Request struct {
	// Conf is Spark settings: S3AConf's, and any other.
	Conf  map[string]string `json:"conf"`
	Reads map[string]Read   `json:"reads"`
}

// Record is a SequenceFile record as Spark read it.
type Record struct {
	Key   int64
	Value []byte
}

// File is a file as the binaryFile reader read it.
type File struct {
	Path    string
	Length  int64
	ModTime time.Time // whole seconds
	Content []byte
}

// Outcome is one read's result: Records or Files, or Error (the Java
// exception and its causes, one per line) when the read failed in Spark.
type Outcome struct {
	Records []Record
	Files   []File
	Error   string
}

// Result holds each read's Outcome by name.
type Result map[string]Outcome

// S3AConf returns the Spark settings that point s3a:// at an S3 endpoint
// such as the head's (http://HOST:PORT): path-style requests (bucket in
// the path, no per-bucket host names), no TLS, the region the head signs
// in, and static keys. They are the settings docs/S3.md tells users to
// set.
func S3AConf(endpoint, region, accessKey, secretKey string) map[string]string {
	return map[string]string{
		"spark.hadoop.fs.s3a.endpoint":                 endpoint,
		"spark.hadoop.fs.s3a.endpoint.region":          region,
		"spark.hadoop.fs.s3a.path.style.access":        "true",
		"spark.hadoop.fs.s3a.connection.ssl.enabled":   "false",
		"spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
		"spark.hadoop.fs.s3a.access.key":               accessKey,
		"spark.hadoop.fs.s3a.secret.key":               secretKey,
	}
}

// dir is this package's directory (this file's).
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Find returns PySpark with the S3A jars, failing t (never skipping)
// with what to do when either is missing.
func Find(t testing.TB) *Spark {
	t.Helper()
	py := hivespark.Find(t).Python
	jars, err := filepath.Glob(filepath.Join(dir(), "jars", "target", "jars", "*.jar"))
	if err == nil && len(jars) == 0 {
		err = os.ErrNotExist
	}
	if err != nil {
		t.Fatalf("sparktest: the S3A jars are not in %s (%v); run `make spark` (or make s3a-jars)",
			filepath.Join("s3gateway", "sparktest", "jars", "target", "jars"), err)
	}
	slices.Sort(jars)
	return &Spark{Python: py, Script: filepath.Join(dir(), "s3aread.py"), Jars: jars}
}

// request is s3aread.py's request.
type request struct {
	Jars []string `json:"jars"`
	Request
}

// Run runs req in one Spark session and returns each read's Outcome. A
// failure outside the reads (Spark does not start, a timeout) fails t
// with Spark's output.
func (s *Spark) Run(t testing.TB, req Request) Result {
	t.Helper()
	res, timings, err := decode(hivespark.RunScript(t, s.Python, s.Script, request{Jars: s.Jars, Request: req}))
	if err != nil {
		t.Fatalf("sparktest: %v", err)
	}
	t.Logf("sparktest: seconds per step: %s", timings)
	return res
}

// outcome is an Outcome as s3aread.py writes it.
type outcome struct {
	Records [][2]json.RawMessage `json:"records"`
	Files   [][4]json.RawMessage `json:"files"`
	Error   string               `json:"error"`
}

// decode reads s3aread.py's result and its "_timings".
func decode(raw []byte) (Result, string, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, "", fmt.Errorf("result: %w", err)
	}
	timings := string(all["_timings"])
	delete(all, "_timings")
	res := Result{}
	for name, m := range all {
		var o outcome
		if err := json.Unmarshal(m, &o); err != nil {
			return nil, "", fmt.Errorf("result %s: %w", name, err)
		}
		out := Outcome{Error: o.Error}
		for _, r := range o.Records {
			var rec Record
			var h string
			if err := json.Unmarshal(r[0], &rec.Key); err != nil {
				return nil, "", fmt.Errorf("result %s: key %s: %w", name, r[0], err)
			}
			if err := unhex(r[1], &h, &rec.Value); err != nil {
				return nil, "", fmt.Errorf("result %s: value: %w", name, err)
			}
			out.Records = append(out.Records, rec)
		}
		for _, r := range o.Files {
			var f File
			var h string
			var mtime int64
			if err := json.Unmarshal(r[0], &f.Path); err != nil {
				return nil, "", fmt.Errorf("result %s: path %s: %w", name, r[0], err)
			}
			if err := json.Unmarshal(r[1], &f.Length); err != nil {
				return nil, "", fmt.Errorf("result %s: length %s: %w", name, r[1], err)
			}
			if err := json.Unmarshal(r[2], &mtime); err != nil {
				return nil, "", fmt.Errorf("result %s: mtime %s: %w", name, r[2], err)
			}
			f.ModTime = time.Unix(mtime, 0)
			if err := unhex(r[3], &h, &f.Content); err != nil {
				return nil, "", fmt.Errorf("result %s: content: %w", name, err)
			}
			out.Files = append(out.Files, f)
		}
		res[name] = out
	}
	return res, timings, nil
}

// unhex decodes a JSON string of hex digits into *b.
func unhex(raw json.RawMessage, s *string, b *[]byte) error {
	if err := json.Unmarshal(raw, s); err != nil {
		return err
	}
	v, err := hex.DecodeString(*s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// HasStatus reports whether err (an Outcome's Error) carries the HTTP
// status code as the AWS SDK prints it ("Status Code: 403").
func HasStatus(err string, code int) bool {
	return strings.Contains(err, fmt.Sprintf("Status Code: %d", code))
}
