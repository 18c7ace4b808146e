package backend

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestURI(t *testing.T) {
	abs, _ := filepath.Abs("rel/dir")
	for _, tc := range []struct{ in, want string }{
		{"/srv/tier2", "file:///srv/tier2"},
		{"rel/dir", "file://" + abs},
		{"file:///srv/tier2", "file:///srv/tier2"},
		{"file://localhost/srv", "file:///srv"},
		{"hdfs://nn:8020/sluice", "hdfs://nn:8020/sluice"},
		{"hdfs://nn:8020", "hdfs://nn:8020/"},
		{"hdfs://hdfs/sluice", "hdfs://hdfs/sluice"}, // a nameservice
	} {
		got, err := URI(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("URI(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "s3://bucket/x", "hdfs:///no-host", "file://otherhost/x", "hdfs://nn:bad port/x"} {
		if _, err := URI(bad); !errors.Is(err, ErrBadURI) {
			t.Errorf("URI(%q): %v, want ErrBadURI", bad, err)
		}
		if _, err := Open(bad); !errors.Is(err, ErrBadURI) {
			t.Errorf("Open(%q): %v, want ErrBadURI", bad, err)
		}
	}
}

func TestOpenDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := s.Create("a/b.seq")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := s.Stat("a/b.seq"); err != nil {
		t.Fatal(err)
	}
}
