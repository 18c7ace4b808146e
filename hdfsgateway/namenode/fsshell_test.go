package namenode

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/view"
)

// dataAddr is where block locations point in these tests (nothing serves
// data there: the tests read metadata only).
const dataAddr = "127.0.0.1:9"

// TestFsShellReadsTheTree runs Hadoop's own FsShell (and FileSystem's
// block location calls) against the server and checks every answer
// against the view.
func TestFsShellReadsTheTree(t *testing.T) {
	f := newFixture(t)
	// One entry per getListing page: every listing pages, as a directory
	// of more than 1000 chunks does with the default limit.
	_, addr := serve(t, f.v, Config{DataAddr: func() string { return dataAddr }, ListingLimit: 1})
	u := "hdfs://" + addr
	small := "/" + tier2.ChunkPath("s", "a", 0, 0)
	big := "/" + tier2.ChunkPath("s", "a", 3, 0)
	res := shells(t,
		[]string{"-ls", "-R", u + "/"},
		[]string{"-ls", u + small},
		[]string{"-ls", u + "/nope"},
		[]string{"-du", u + "/s/a"},
		[]string{"-du", "-s", u + "/"},
		[]string{"-count", u + "/", u + "/s/b"},
		[]string{"-count", "-q", u + "/s"},
		[]string{"-stat", "%n|%b|%r|%o|%u|%g|%F|%a", u + small, u + "/s/a"},
		[]string{"-test", "-e", u + small},
		[]string{"-test", "-d", u + "/s/a/segment=3"},
		[]string{"-test", "-d", u + small},
		[]string{"-test", "-e", u + "/s/gone"},
		[]string{"-find", u + "/", "-name", "*.seq"},
		[]string{"-getfacl", u + small},
		[]string{"@blocks", u + big},
		[]string{"@located", u + "/s/a/segment=3"},
	)
	want := func(i int, exit string, lines ...string) {
		t.Helper()
		r := res[i]
		if r.exit != exit {
			t.Errorf("%s: exit %s, want %s\n%s", r.cmd, r.exit, exit, r.out)
		}
		for _, l := range lines {
			// Columns are padded: compare with single spaces.
			if !strings.Contains(squash(r.out), squash(l)) {
				t.Errorf("%s: output lacks %q:\n%s", r.cmd, l, r.out)
			}
		}
	}

	// -ls -R: every entry of the view but the root, with its mode, owner,
	// group and size, in order.
	var lines []string
	for _, e := range walk(t, f.v, "")[1:] {
		mode, size := "-r--r--r--   1", fmt.Sprint(e.Size)
		if e.IsDir {
			mode, size = "dr-xr-xr-x   -", "0"
		}
		lines = append(lines, fmt.Sprintf("%s sluice supergroup %s %s/%s", mode, size, u, e.Path))
	}
	var got []string
	for l := range strings.SplitSeq(strings.TrimSpace(res[0].out), "\n") {
		// "MODE REPL OWNER GROUP SIZE DATE TIME PATH": drop the date.
		fs := strings.Fields(l)
		if len(fs) != 8 {
			t.Fatalf("-ls -R line %q", l)
		}
		got = append(got, fmt.Sprintf("%-10s   %s %s %s %s %s", fs[0], fs[1], fs[2], fs[3], fs[4], fs[7]))
	}
	if !slices.Equal(got, lines) {
		t.Errorf("-ls -R:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(lines, "\n"))
	}
	want(0, "0")
	want(1, "0", u+small)
	want(2, "1", "No such file or directory")

	size := func(p string) int64 {
		var n int64
		for _, e := range walk(t, f.v, p) {
			n += e.Size
		}
		return n
	}
	seg0, seg3 := size("s/a/segment=0"), size("s/a/segment=3")
	want(3, "0", fmt.Sprintf("%d  %d  %s/s/a/segment=0", seg0, seg0, u), fmt.Sprintf("%d  %d  %s/s/a/segment=3", seg3, seg3, u))
	total := size("")
	want(4, "0", fmt.Sprintf("%d  %d  %s/", total, total, u))
	// -count: DIR_COUNT FILE_COUNT CONTENT_SIZE PATH (the root, s, a,
	// segment=0, segment=3, b and t are directories).
	want(5, "0", fmt.Sprintf("7            3             %d %s/\n", total, u), fmt.Sprintf("1            0                  0 %s/s/b", u))
	want(6, "0", fmt.Sprintf("none             inf            none             inf            5            3             %d %s/s", total, u))
	smallSize := size(small)
	want(7, "0", fmt.Sprintf("00000000000000000000.seq|%d|1|%d|sluice|supergroup|regular file|444", smallSize, testBlockSize),
		"a|0|0|0|sluice|supergroup|directory|555")
	want(8, "0")
	want(9, "0")
	want(10, "1")
	want(11, "1")
	var seqs []string
	for _, e := range walk(t, f.v, "") {
		if !e.IsDir {
			seqs = append(seqs, u+"/"+e.Path)
		}
	}
	want(12, "0", seqs...)
	want(13, "0", "# owner: sluice", "# group: supergroup", "user::r--")

	// Block locations as Hadoop's FileSystem decodes them.
	be, err := f.v.Stat(t.Context(), big)
	if err != nil {
		t.Fatal(err)
	}
	var blines []string
	for _, b := range blocks.Of(be.Path, be.Size, testBlockSize) {
		blines = append(blines, fmt.Sprintf("BLOCK %d %d %s", b.Offset, b.Len, dataAddr))
	}
	if len(blines) < 3 {
		t.Fatalf("the big chunk has %d blocks; the test wants several", len(blines))
	}
	if got := strings.TrimSpace(res[14].out); got != strings.Join(blines, "\n") {
		t.Errorf("@blocks:\n%s\nwant:\n%s", got, strings.Join(blines, "\n"))
	}
	want(14, "0")
	want(15, "0", fmt.Sprintf("LOCATED %s %d %d", big, be.Size, len(blines)))
}

// TestFsShellWritesArePermissionDenied runs FsShell's writing commands:
// each fails with "Permission denied" and tier 2 keeps every byte.
func TestFsShellWritesArePermissionDenied(t *testing.T) {
	f := newFixture(t)
	_, addr := serve(t, f.v, Config{DataAddr: func() string { return dataAddr }})
	before := f.files(t)
	local := filepath.Join(t.TempDir(), "local.txt")
	if err := os.WriteFile(local, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	u := "hdfs://" + addr
	small := u + "/" + tier2.ChunkPath("s", "a", 0, 0)
	cmds := [][]string{
		{"-put", local, u + "/s/a/segment=0/"},
		{"-put", local, u + "/s/b/new.txt"},
		{"-mkdir", u + "/s/x"},
		{"-mkdir", "-p", u + "/s/a/segment=9/y"},
		{"-rm", small},
		{"-rm", "-r", "-skipTrash", u + "/s/a"},
		{"-mv", small, u + "/s/b/"},
		{"-cp", small, u + "/s/b/copy.seq"},
		{"-chmod", "777", small},
		{"-chown", "alice", small},
		{"-touchz", u + "/s/b/empty"},
		{"-setrep", "3", small},
		{"-appendToFile", local, small},
		{"-truncate", "1", small},
		{"-setfattr", "-n", "user.x", "-v", "1", small},
	}
	res := shells(t, cmds...)
	for _, r := range res {
		if r.exit == "0" || !strings.Contains(r.out, "Permission denied") || !strings.Contains(r.out, "read-only") {
			t.Errorf("%s: exit %s, want a failure saying Permission denied ... read-only:\n%s", r.cmd, r.exit, r.out)
		}
	}
	if after := f.files(t); !maps.Equal(before, after) {
		t.Errorf("tier 2 changed:\nbefore %q\nafter  %q", sortedKeys(before), sortedKeys(after))
	}
	if _, err := f.v.Stat(t.Context(), "s/x"); err == nil {
		t.Error("s/x exists")
	}
	_ = view.Owner
}

// squash turns every run of spaces and tabs (not newlines) into one space.
func squash(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
