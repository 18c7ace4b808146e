package nfsexport

import (
	"context"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
)

func TestSmoke(t *testing.T) {
	f := newFixture(t, map[string][]string{"s": {"a"}})
	writeChunk(t, f.st, tier2.ChunkPath("s", "a", 0, 0), 0, 100, 1000)
	out, err := run(context.Background(), "nfs-ls", "-R", f.url("/"))
	t.Logf("%s %v", out, err)
	out, err = run(context.Background(), "nfs-cat", f.url("/s/a/segment=0/"+tier2.ChunkName(0)))
	t.Logf("%d %v", len(out), err)
}
