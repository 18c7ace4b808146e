package tiering

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
)

// onceCreateStore runs hook once, at the first Create under prefix.
type onceCreateStore struct {
	tier2.Storage
	prefix string
	once   *sync.Once
	hook   func()
}

func (s *onceCreateStore) Create(p string) (tier2.Writer, error) {
	if strings.HasPrefix(p, s.prefix) {
		s.once.Do(s.hook)
	}
	return s.Storage.Create(p)
}

// TestRecreatedDuringPassKeepsItsChunks: a segment is deleted and made
// again under its name while a pass tiers another segment (a paced chunk
// takes its time). The pass then tiers the segment by its name, as it was
// when the pass began, and so writes and commits a chunk of the NEW
// segment's events; the next pass finds the name in Gone and removes the
// directory, that chunk with it: the new segment's acknowledged events
// are lost from tier 2 (reads fail) although it was never deleted. The
// guard against a name made again (a segment in Gone is neither tiered
// nor trimmed) holds only for names in Gone when the pass began.
func TestRecreatedDuringPassKeepsItsChunks(t *testing.T) {
	inner, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var f *fixture
	dirA, _ := segmentDir(segA)
	hs := &onceCreateStore{Storage: inner, prefix: dirA + "/", once: &sync.Once{}}
	f = newFixture(t, hs, nil)
	hs.hook = func() {
		// While segA's chunk is written: segB deleted and made again.
		if err := f.c.Delete(segB); err != nil {
			t.Error(err)
			return
		}
		f.wrote[segB] = nil
		f.create(segB)
		f.write(segB, 5)
	}
	f.create(segA, segB)
	f.write(segA, 5)
	f.write(segB, 5)
	if err := f.w.Flush(t.Context()); err != nil { // tiers A, then B (by name)
		t.Fatal(err)
	}
	if _, events := f.chunks(segB); !bytes.Equal(events, f.wrote[segB]) {
		t.Fatalf("after the first pass tier 2 holds %d bytes of events of the new segment, want the %d written", len(events), len(f.wrote[segB]))
	}
	if err := f.w.Flush(t.Context()); err != nil { // removes what Gone names
		t.Fatal(err)
	}
	dirB, _ := segmentDir(segB)
	if _, err := f.store.List(dirB); err != nil {
		t.Errorf("the next pass removed the new segment's committed chunks: %v", err)
	}
	if got := f.readAll(segB); !bytes.Equal(got, f.wrote[segB]) {
		t.Fatal("the new segment reads back differently")
	}
}
