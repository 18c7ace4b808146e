package tier2test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
)

// An unarmed Faulty passes everything through.
func TestFaultyConformance(t *testing.T) {
	RunStorageTests(t, func(t *testing.T) tier2.Storage {
		f := NewFaulty(NewMem())
		t.Cleanup(func() { _ = f.Close() })
		return f
	})
}

var errFull = fmt.Errorf("disk full: %w", tier2.ErrUnavailable)

func mustPut(t *testing.T, s tier2.Storage, p, data string) {
	t.Helper()
	w, err := s.Create(p)
	if err != nil {
		t.Fatalf("Create(%q): %v", p, err)
	}
	if _, err := io.WriteString(w, data); err != nil {
		t.Fatalf("Write(%q): %v", p, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close(%q): %v", p, err)
	}
}

func TestFaultyNextNCalls(t *testing.T) {
	mem := NewMem()
	f := NewFaulty(mem)
	f.Arm(OpCreate, Fault{Err: errFull, Times: 2})
	for i := range 2 {
		_, err := f.Create("a/f")
		if !errors.Is(err, tier2.ErrUnavailable) || !strings.Contains(err.Error(), `"a/f"`) {
			t.Fatalf("call %d: error %v, want ErrUnavailable naming the path", i, err)
		}
	}
	if _, err := mem.Stat("a"); !errors.Is(err, tier2.ErrNotExist) {
		t.Fatalf("a failed Create reached the storage: Stat = %v", err)
	}
	mustPut(t, f, "a/f", "x")
	if got := f.Calls(OpCreate); got != 3 {
		t.Fatalf("Calls(OpCreate) = %d, want 3", got)
	}
}

func TestFaultyUntilDisarmed(t *testing.T) {
	f := NewFaulty(NewMem())
	f.Arm(OpStat, Fault{})
	for range 5 {
		if _, err := f.Stat(""); !errors.Is(err, ErrInjected) {
			t.Fatalf("Stat = %v, want ErrInjected", err)
		}
	}
	f.Disarm(OpStat)
	if _, err := f.Stat(""); err != nil {
		t.Fatalf("Stat after Disarm: %v", err)
	}
	if got := f.Calls(OpStat); got != 6 {
		t.Fatalf("Calls(OpStat) = %d, want 6", got)
	}
}

func TestFaultyMatch(t *testing.T) {
	f := NewFaulty(NewMem())
	mustPut(t, f, "keep/1", "1")
	mustPut(t, f, "drop/1", "1")
	inDrop := func(p string) bool { return strings.HasPrefix(p, "drop/") }
	f.Arm(OpOpen, Fault{Err: errFull, Match: inDrop})
	if _, err := f.Open("drop/1"); !errors.Is(err, errFull) {
		t.Fatalf("Open(drop/1) = %v, want the armed error", err)
	}
	r, err := f.Open("keep/1")
	if err != nil {
		t.Fatalf("Open(keep/1): %v", err)
	}
	_ = r.Close()

	// Rename matches on either path; a non-matching call uses up no Times.
	f.Arm(OpRename, Fault{Times: 1, Match: inDrop})
	if err := f.Rename("keep/1", "keep/2"); err != nil {
		t.Fatalf("Rename inside keep: %v", err)
	}
	if err := f.Rename("keep/2", "drop/2"); !errors.Is(err, ErrInjected) {
		t.Fatalf("Rename into drop = %v, want ErrInjected", err)
	}
	if err := f.Rename("keep/2", "drop/2"); err != nil {
		t.Fatalf("Rename after the one fault: %v", err)
	}
}

func TestFaultyWriterAndReader(t *testing.T) {
	mem := NewMem()
	f := NewFaulty(mem)
	w, err := f.Create("w/f")
	if err != nil {
		t.Fatal(err)
	}
	f.Arm(OpWrite, Fault{Err: errFull, Times: 1})
	if n, err := w.Write([]byte("lost")); n != 0 || !errors.Is(err, errFull) {
		t.Fatalf("Write = %d, %v; want 0 and the armed error", n, err)
	}
	if _, err := w.Write([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	f.Arm(OpClose, Fault{Times: 1})
	if err := w.Close(); !errors.Is(err, ErrInjected) {
		t.Fatalf("Close = %v, want ErrInjected", err)
	}
	// The wrapped writer was closed all the same.
	r, err := mem.Open("w/f")
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != 4 {
		t.Fatalf("file has %d bytes, want the 4 of the second write", r.Size())
	}
	_ = r.Close()

	fr, err := f.Open("w/f")
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	f.Arm(OpReadAt, Fault{Err: errFull, Match: func(p string) bool { return p == "w/f" }})
	if _, err := fr.ReadAt(make([]byte, 4), 0); !errors.Is(err, tier2.ErrUnavailable) {
		t.Fatalf("ReadAt = %v, want ErrUnavailable", err)
	}
	f.DisarmAll()
	b := make([]byte, 4)
	if _, err := fr.ReadAt(b, 0); err != nil || string(b) != "kept" {
		t.Fatalf("ReadAt after DisarmAll = %q, %v", b, err)
	}
	for op, want := range map[Op]int{OpCreate: 1, OpWrite: 2, OpClose: 1, OpOpen: 1, OpReadAt: 2} {
		if got := f.Calls(op); got != want {
			t.Errorf("Calls(%v) = %d, want %d", op, got, want)
		}
	}
}

func TestFaultyOtherOps(t *testing.T) {
	f := NewFaulty(NewMem())
	mustPut(t, f, "d/f", "1")
	checks := []struct {
		op   Op
		call func() error
	}{
		{OpList, func() error { _, err := f.List("d"); return err }},
		{OpRemove, func() error { return f.Remove("d/f") }},
		{OpRemoveAll, func() error { return f.RemoveAll("d") }},
	}
	for _, c := range checks {
		f.Arm(c.op, Fault{Err: errFull, Times: 1})
		if err := c.call(); !errors.Is(err, errFull) || !strings.Contains(err.Error(), c.op.String()) {
			t.Fatalf("%v = %v, want the armed error naming the op", c.op, err)
		}
		if err := c.call(); err != nil {
			t.Fatalf("%v after its one fault: %v", c.op, err)
		}
	}
	if _, err := f.Stat("d"); !errors.Is(err, tier2.ErrNotExist) {
		t.Fatalf("Stat after RemoveAll = %v, want ErrNotExist", err)
	}
}

func TestFaultyHold(t *testing.T) {
	mem := NewMem()
	f := NewFaulty(mem)
	mustPut(t, f, "h/tmp", "data")
	h := f.Hold(OpRename, func(p string) bool { return p == "h/final" })
	done := make(chan error, 1)
	go func() { done <- f.Rename("h/tmp", "h/final") }()
	<-h.Entered()

	// Held: the rename has not happened, other calls go on.
	if _, err := mem.Stat("h/final"); !errors.Is(err, tier2.ErrNotExist) {
		t.Fatalf("Stat(h/final) while held = %v, want ErrNotExist", err)
	}
	mustPut(t, f, "h/other", "o")
	if err := f.Rename("h/other", "h/other2"); err != nil {
		t.Fatalf("a non-matching Rename while another is held: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("held Rename returned %v before Release", err)
	default:
	}
	if h.Held() != 1 {
		t.Fatalf("Held = %d, want 1", h.Held())
	}

	// A held call meets the armed fault once released.
	f.Arm(OpRename, Fault{Err: errFull, Times: 1})
	h.Release()
	h.Release() // harmless
	if err := <-done; !errors.Is(err, errFull) {
		t.Fatalf("released Rename = %v, want the armed error", err)
	}
	// No longer held.
	if err := f.Rename("h/tmp", "h/final"); err != nil {
		t.Fatal(err)
	}
	if got := f.Calls(OpRename); got != 3 {
		t.Fatalf("Calls(OpRename) = %d, want 3", got)
	}
}

func TestFaultyCloseReleasesHolds(t *testing.T) {
	f := NewFaulty(NewMem())
	h := f.Hold(OpList, nil)
	done := make(chan error, 1)
	go func() { _, err := f.List(""); done <- err }()
	<-h.Entered()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("List released by Close: %v", err)
	}
}

func TestOpString(t *testing.T) {
	for op := OpCreate; op < numOps; op++ {
		if s := op.String(); s == "" || s == "unknown" {
			t.Errorf("Op(%d).String() = %q", op, s)
		}
	}
	if s := numOps.String(); s != "unknown" {
		t.Errorf("numOps.String() = %q, want unknown", s)
	}
}
