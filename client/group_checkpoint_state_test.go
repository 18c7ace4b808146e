package client

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/sluice-streams/sluice/protocol/api"
)

// TestGroupStateCheckpointReaderGone: a checkpoint pending for a reader
// that leaves or is expired does not wait for it; its segments count at
// the position it left at (leave) or its last commit (expiry), the other
// reader's at its checkpoint event.
func TestGroupStateCheckpointReaderGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone func(s *GroupState)
		want api.StreamCut
	}{
		{"leaves at its position", func(s *GroupState) { s.leave("b", api.StreamCut{gseg(2): 25, gseg(3): 35}) },
			api.StreamCut{gseg(0): 5, gseg(1): 6, gseg(2): 25, gseg(3): 35}},
		{"expired: its last commit", func(s *GroupState) { s.expire("a", 5000, 1000) },
			api.StreamCut{gseg(0): 5, gseg(1): 6, gseg(2): 20, gseg(3): 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newGroupState(nil)
			s.join("a", 1000)
			s.join("b", 1000)
			s.Readers["a"].Segments = map[string]int64{gseg(0): 0, gseg(1): 0}
			s.Readers["b"].Segments = map[string]int64{gseg(2): 20, gseg(3): 30}
			if err := s.startCheckpoint("cp"); err != nil {
				t.Fatal(err)
			}
			// a heartbeats past its checkpoint event: the event counts.
			if err := s.report("a", 4500, groupReport{Positions: api.StreamCut{gseg(0): 9, gseg(1): 9},
				Checkpoint: &checkpointReport{Name: "cp", Positions: api.StreamCut{gseg(0): 5, gseg(1): 6}}}); err != nil {
				t.Fatal(err)
			}
			if s.Checkpoint == nil {
				t.Fatal("completed before b delivered or left")
			}
			tc.gone(s)
			cut, ok := s.checkpointCut("cp")
			if !ok || s.Checkpoint != nil {
				t.Fatalf("not completed: %+v", s.Checkpoint)
			}
			if !maps.Equal(cut, tc.want) {
				t.Fatalf("cut %v, want %v", cut, tc.want)
			}
		})
	}
}

// TestGroupStateEndCutJSON: a state written before end cuts existed reads
// with none; one with an end cut keeps it across encoding.
func TestGroupStateEndCutJSON(t *testing.T) {
	var old GroupState
	if err := json.Unmarshal([]byte(`{"gen":0,"readers":{},"unassigned":{"s/x/0.#epoch.0":0},"ended":{}}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.EndCut != nil {
		t.Fatalf("old state has end cut %v", old.EndCut)
	}
	s := newGroupState(api.StreamCut{gseg(0): 0})
	s.EndCut = api.StreamCut{gseg(0): 42}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back GroupState
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(back.EndCut, s.EndCut) {
		t.Fatalf("end cut %v after a round trip of %s", back.EndCut, b)
	}
	// A reset keeps the end cut.
	back.reset(api.StreamCut{gseg(0): 7})
	if !maps.Equal(back.EndCut, s.EndCut) {
		t.Fatalf("end cut %v after a reset", back.EndCut)
	}
}
