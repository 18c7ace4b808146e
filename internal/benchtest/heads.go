package benchtest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// ChunkEventSize is the size of the events WriteChunk writes.
const ChunkEventSize = 256 << 10

// EnvInt is the positive integer in the environment variable name, or
// def if it is unset; anything else fails b.
func EnvInt(b testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// Loadavg is the machine's load: /proc/loadavg's first three fields (1,
// 5 and 15 minutes), or "?" if it cannot be read.
func Loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// Spread is the minimum, median (the upper one of an even count) and
// maximum of xs, which must not be empty; xs is left as it was.
func Spread(xs []float64) (lo, med, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[0], s[len(s)/2], s[len(s)-1]
}

// Chunk is a chunk WriteChunk wrote.
type Chunk struct {
	Path   string // in the tier-2 tree
	Size   int64
	SHA256 string // of the file's bytes, in hex
}

// WriteChunk writes a SequenceFile chunk at p in st, as the node's
// storage writer lays one out (LongWritable offsets, BytesWritable
// events), of size/ChunkEventSize events of random bytes (the same bytes
// for the same first) from offset first on.
func WriteChunk(b testing.TB, st tier2.Storage, p string, first int64, size int) Chunk {
	w, err := st.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	h := sha256.New()
	sw, err := seqfile.NewWriter(io.MultiWriter(w, h), seqfile.WriterOptions{KeyClass: seqfile.LongWritable, ValueClass: seqfile.BytesWritable})
	if err != nil {
		b.Fatal(err)
	}
	var seed [32]byte
	for i := range 8 {
		seed[i] = byte(first >> (8 * i))
	}
	rng := rand.NewChaCha8(seed)
	ev := make([]byte, ChunkEventSize)
	off := first
	for range size / ChunkEventSize {
		rng.Read(ev)
		if err := sw.AppendEvent(off, ev); err != nil {
			b.Fatal(err)
		}
		off += int64(len(ev)) + 8
	}
	if err := sw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := st.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return Chunk{Path: p, Size: fi.Size, SHA256: hex.EncodeToString(h.Sum(nil))}
}
