package tier2test

import (
	"testing"

	"github.com/sluice-streams/sluice/tier2"
)

func TestMemConformance(t *testing.T) {
	RunStorageTests(t, func(t *testing.T) tier2.Storage {
		s := NewMem()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// Two Mems given the same calls describe their files identically, times
// included.
func TestMemDeterministic(t *testing.T) {
	run := func() []tier2.FileInfo {
		s := NewMem()
		mustPut(t, s, "a/1", "one")
		mustPut(t, s, "a/2", "two!")
		if err := s.Rename("a/2", "a/3"); err != nil {
			t.Fatal(err)
		}
		infos, err := s.List("a")
		if err != nil {
			t.Fatal(err)
		}
		return infos
	}
	first, second := run(), run()
	if len(first) != 2 || first[0].ModTime.Equal(first[1].ModTime) {
		t.Fatalf("List = %+v, want two files with distinct times", first)
	}
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("run 1 gave %+v, run 2 %+v", first[i], second[i])
		}
	}
}

// A file is there (empty) from Create; its writer's Close publishes the
// bytes wherever the file has been renamed meanwhile.
func TestMemWriterPublishesOnClose(t *testing.T) {
	s := NewMem()
	w, err := s.Create("d/tmp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if fi, err := s.Stat("d/tmp"); err != nil || fi.Size != 0 {
		t.Fatalf("Stat before Close = %+v, %v; want an empty file", fi, err)
	}
	if err := s.Rename("d/tmp", "d/final"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := s.Stat("d/final"); err != nil || fi.Size != 3 {
		t.Fatalf("Stat after Close = %+v, %v; want 3 bytes", fi, err)
	}
}
