package webhdfs

import (
	"bytes"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/seqfile"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// record is one event of a chunk.
type record struct {
	off   int64
	event []byte
}

// testBlockSize makes the big chunk span several blocks.
const testBlockSize = 64 << 10

// fixture is a tier-2 root with real chunks, its view and the handler on
// a real HTTP server on 127.0.0.1.
type fixture struct {
	root   string
	st     tier2.Storage
	v      *view.View
	srv    *httptest.Server
	chunks map[string][]record // view path -> events
	big    string              // the view path of the multi-block chunk
}

// writeChunk writes a chunk of n events at the view path p.
func (f *fixture) writeChunk(t testing.TB, p string, seg int64, first int64, n int, comp seqfile.Compression) {
	t.Helper()
	var buf bytes.Buffer
	w, err := seqfile.NewWriter(&buf, seqfile.WriterOptions{
		KeyClass: seqfile.LongWritable, ValueClass: seqfile.BytesWritable,
		Compression: comp, BlockSize: 4000,
		Metadata: map[string]string{"sluice.segment": fmt.Sprint(seg)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var recs []record
	off := first
	for i := range n {
		ev := make([]byte, (i*37)%300)
		for j := range ev {
			ev[j] = byte(int(seg)*31 + i*7 + j)
		}
		if err := w.AppendEvent(off, ev); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, record{off, ev})
		off += int64(len(ev)) + 8
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := f.st.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	f.chunks[p] = recs
}

// newFixture: scope "sc" with stream "st" (segment 0: two chunks, one of
// them spanning several blocks; segment 1: one chunk) and stream "empty"
// (nothing in tier 2), and scope "none" with no stream; beside them a
// chunk being written and a hand-over file the tree must not show.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	st, err := fs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{root: root, st: st, chunks: map[string][]record{}}
	f.writeChunk(t, tier2.ChunkPath("sc", "st", 0, 0), 0, 0, 40, seqfile.None)
	f.big = tier2.ChunkPath("sc", "st", 0, 100000)
	f.writeChunk(t, f.big, 0, 100000, 1500, seqfile.None)
	f.writeChunk(t, tier2.ChunkPath("sc", "st", 1, 0), 1, 0, 60, seqfile.Block)
	for _, junk := range []string{tier2.TempChunkPath("sc", "st", 1, 777), tier2.HandoverPath(1, 2)} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, junk)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, junk), []byte("SEQ\x06half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.v = view.New(st, viewtest.NewCatalog(map[string][]string{"sc": {"st", "empty"}, "none": nil}), view.Options{CatalogTTL: -1})
	f.srv = httptest.NewServer(NewHandler(f.v, Config{BlockSize: testBlockSize}))
	t.Cleanup(f.srv.Close)
	return f
}

// data returns the bytes of the chunk at view path p.
func (f *fixture) data(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
