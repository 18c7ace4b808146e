package hadooptest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// LongWritable is the Java class of a key that the harness prints as a
// decimal number.
const LongWritable = "org.apache.hadoop.io.LongWritable"

// Record is one key/value pair that Hadoop read.
type Record struct {
	// File is the path the record came from: as given to SeqDump, or
	// relative to the input directory for MapReduce.
	File string
	// Key is a LongWritable key's value.
	Key int64
	// RawKey is any other key's serialized bytes (nil for LongWritable).
	RawKey []byte
	// Value is a BytesWritable's or Text's bytes, or any other value's
	// serialized bytes.
	Value []byte
}

// File is what SequenceFile.Reader said about one file.
type File struct {
	Path                 string
	KeyClass, ValueClass string
	// Compression is NONE, RECORD or BLOCK.
	Compression string
	// Codec is the codec's class name, or "" when uncompressed.
	Codec    string
	Metadata map[string]string
	Records  []Record
}

// SeqDump reads the SequenceFiles at paths (local paths or hdfs:// URIs)
// with Hadoop's SequenceFile.Reader and returns their records in order.
// Any error of Hadoop's, a corrupt file included, fails t.
func SeqDump(t testing.TB, paths ...string) []Record {
	t.Helper()
	var recs []Record
	for _, f := range SeqFiles(t, paths...) {
		recs = append(recs, f.Records...)
	}
	return recs
}

// SeqFiles is SeqDump with each file's header.
func SeqFiles(t testing.TB, paths ...string) []File {
	t.Helper()
	out, err := runHarness(t, append([]string{"seqdump"}, paths...)...)
	if err != nil {
		t.Fatal(err)
	}
	files, err := parseDump(out)
	if err != nil {
		t.Fatalf("hadooptest: seqdump output: %v\n%s", err, out)
	}
	if len(files) != len(paths) {
		t.Fatalf("hadooptest: seqdump printed %d files, want %d", len(files), len(paths))
	}
	return files
}

// runHarness runs the harness to completion and returns its stdout; its
// stderr goes into the error.
func runHarness(t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	cmd := Harness(t).Command(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tail := stderr.Bytes()
		if len(tail) > 8<<10 {
			tail = tail[len(tail)-8<<10:]
		}
		return nil, fmt.Errorf("hadooptest: harness %s: %v; its stderr:\n%s", args[0], err, tail)
	}
	return stdout.Bytes(), nil
}

// parseDump parses seqdump's output (see Harness.java).
func parseDump(out []byte) ([]File, error) {
	var files []File
	var cur *File
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if f[0] != "FILE" && cur == nil {
			return nil, fmt.Errorf("%q before FILE", sc.Text())
		}
		switch {
		case f[0] == "FILE" && len(f) == 2:
			files = append(files, File{Path: f[1], Metadata: map[string]string{}})
			cur = &files[len(files)-1]
		case f[0] == "HEADER" && len(f) == 5:
			cur.KeyClass, cur.ValueClass, cur.Compression = f[1], f[2], f[3]
			if f[4] != "-" {
				cur.Codec = f[4]
			}
		case f[0] == "META" && len(f) == 3:
			k, err1 := hex.DecodeString(f[1])
			v, err2 := hex.DecodeString(f[2])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("bad META line %q", sc.Text())
			}
			cur.Metadata[string(k)] = string(v)
		case f[0] == "REC" && len(f) == 3:
			rec, err := parseRecord(cur.Path, cur.KeyClass == LongWritable, f[1], f[2])
			if err != nil {
				return nil, err
			}
			cur.Records = append(cur.Records, rec)
		case f[0] == "END" && len(f) == 2:
			if n, err := strconv.Atoi(f[1]); err != nil || n != len(cur.Records) {
				return nil, fmt.Errorf("END %s after %d records", f[1], len(cur.Records))
			}
		default:
			return nil, fmt.Errorf("unexpected line %q", sc.Text())
		}
	}
	return files, sc.Err()
}

func parseRecord(file string, longKey bool, key, value string) (Record, error) {
	rec := Record{File: file}
	var err error
	if longKey {
		rec.Key, err = strconv.ParseInt(key, 10, 64)
	} else {
		rec.RawKey, err = hex.DecodeString(key)
	}
	if err != nil {
		return rec, fmt.Errorf("bad key %q: %v", key, err)
	}
	if rec.Value, err = hex.DecodeString(value); err != nil {
		return rec, fmt.Errorf("bad value: %v", err)
	}
	return rec, nil
}

// MapReduce runs a local MapReduce job (LocalJobRunner) that reads every
// SequenceFile under inputDir (a local path or an hdfs:// URI),
// recursively, with SequenceFileInputFormat, and returns the records its
// mapper saw, sorted by file and then key. Files and directories whose
// names start with '_' or '.' are skipped, as Hadoop skips them. Keys
// must be LongWritable.
func MapReduce(t testing.TB, inputDir string) []Record {
	t.Helper()
	outDir := filepath.Join(t.TempDir(), "out")
	if _, err := runHarness(t, "mapreduce", inputDir, outDir); err != nil {
		t.Fatal(err)
	}
	parts, err := filepath.Glob(filepath.Join(outDir, "part-m-*"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outDir, "_SUCCESS")); err != nil {
		t.Fatalf("hadooptest: the job left no _SUCCESS marker: %v", err)
	}
	var recs []Record
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" {
				continue
			}
			f := strings.Split(line, "\t")
			if len(f) != 3 {
				t.Fatalf("hadooptest: %s: bad line %q", p, line)
			}
			rec, err := parseRecord(f[0], true, f[1], f[2])
			if err != nil {
				t.Fatalf("hadooptest: %s: %v", p, err)
			}
			recs = append(recs, rec)
		}
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].File != recs[j].File {
			return recs[i].File < recs[j].File
		}
		return recs[i].Key < recs[j].Key
	})
	return recs
}
