package tier2

import (
	"errors"
	"math"
	"testing"
)

func TestPaths(t *testing.T) {
	cases := []struct{ got, want string }{
		{StreamDir("sc", "st"), "sc/st"},
		{SegmentDir("sc", "st", 0), "sc/st/segment=0"},
		{SegmentDir("sc", "st", 42), "sc/st/segment=42"},
		{ChunkName(0), "00000000000000000000.seq"},
		{ChunkName(1234), "00000000000000001234.seq"},
		{ChunkName(math.MaxInt64), "09223372036854775807.seq"},
		{ChunkPath("sc", "st", 7, 99), "sc/st/segment=7/00000000000000000099.seq"},
		{TempChunkPath("sc", "st", 7, 99), "sc/st/segment=7/_tmp.00000000000000000099.seq"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	for _, p := range []string{ChunkPath("a", "b", 1, 2), TempChunkPath("a", "b", 1, 2), SegmentDir("a", "b", 3)} {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v", p, err)
		}
	}
}

func TestParseChunkName(t *testing.T) {
	for _, off := range []int64{0, 1, 1 << 40, math.MaxInt64} {
		if got, ok := ParseChunkName(ChunkName(off)); !ok || got != off {
			t.Errorf("ParseChunkName(ChunkName(%d)) = %d, %v", off, got, ok)
		}
	}
	for _, name := range []string{
		"", ".seq", "0.seq", "0000000000000000001.seq", "000000000000000000001.seq",
		"00000000000000000001", "00000000000000000001.SEQ", "00000000000000000001.seq.tmp",
		"_tmp.00000000000000000001.seq", "-0000000000000000001.seq", "+0000000000000000001.seq",
		"0000000000000000000a.seq", "99999999999999999999.seq", " 0000000000000000001.seq",
	} {
		if off, ok := ParseChunkName(name); ok {
			t.Errorf("ParseChunkName(%q) = %d, true; want false", name, off)
		}
	}
}

func TestIsTemp(t *testing.T) {
	if !IsTemp("_tmp.00000000000000000001.seq") {
		t.Error("a temporary chunk name is not temporary")
	}
	for _, name := range []string{ChunkName(1), "tmp.x", "_tmpx", ""} {
		if IsTemp(name) {
			t.Errorf("IsTemp(%q) = true", name)
		}
	}
}

func TestCheckPath(t *testing.T) {
	for _, p := range []string{"", "a", "a/b", "sc/st/segment=1/x.seq", "_tmp.x", ".hidden", "a..b", "a b"} {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{
		"/", "/a", ".", "..", "./a", "a/.", "a/..", "../a", "a/../b", "a//b", "a/", "a/./b",
		"a#b", "a:b", "x/y#z", `a\b`, "a/b:c",
	} {
		if err := CheckPath(p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("CheckPath(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
}
