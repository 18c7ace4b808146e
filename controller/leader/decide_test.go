package leader

import (
	"reflect"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/controller/assignment"
)

func TestLiveNodes(t *testing.T) {
	got := LiveNodes([]cluster.KV{{Key: "cluster/nodes/b"}, {Key: "cluster/nodes/a"}})
	if want := []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("LiveNodes = %v, want %v", got, want)
	}
	if got := LiveNodes(nil); len(got) != 0 {
		t.Fatalf("LiveNodes(nil) = %v", got)
	}
}

func owners(pairs ...any) layout.Map {
	m := layout.Map{}
	for i := 0; i < len(pairs); i += 2 {
		m.Containers = append(m.Containers, layout.Owner{Node: pairs[i].(string), Epoch: int64(pairs[i+1].(int))})
	}
	return m
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name      string
		published []byte
		exists    bool
		live      []string
		want      layout.Map
		changed   bool
		wantErr   bool
	}{
		{name: "no map, no node: nothing to publish",
			want: layout.New(4)},
		{name: "no map: spread over the live nodes",
			live: []string{"b", "a"},
			want: owners("a", 1, "b", 1, "a", 1, "b", 1), changed: true},
		{name: "complete map, same nodes: unchanged",
			published: owners("a", 1, "b", 1, "a", 1, "b", 1).Encode(), exists: true,
			live: []string{"a", "b"},
			want: owners("a", 1, "b", 1, "a", 1, "b", 1)},
		{name: "a dead node keeps its containers",
			published: owners("a", 1, "b", 1, "a", 1, "b", 1).Encode(), exists: true,
			live: []string{"a"},
			want: owners("a", 1, "b", 1, "a", 1, "b", 1)},
		{name: "a new node gets only unassigned containers",
			published: owners("a", 1, "", 0, "a", 1, "", 3).Encode(), exists: true,
			live: []string{"a", "c"},
			want: owners("a", 1, "c", 1, "a", 1, "c", 4), changed: true},
		{name: "no live node: the map stays",
			published: owners("a", 1, "", 0, "a", 1, "", 0).Encode(), exists: true,
			want: owners("a", 1, "", 0, "a", 1, "", 0)},
		{name: "another container count: never replaced",
			published: owners("a", 1, "b", 1).Encode(), exists: true,
			live: []string{"a", "b"}, wantErr: true},
		{name: "unreadable: never replaced",
			published: []byte("{"), exists: true,
			live: []string{"a"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := Decide(tc.published, tc.exists, assignment.Input{Live: tc.live}, 4)
			if tc.wantErr {
				if err == nil || changed {
					t.Fatalf("Decide = %v, %v, %v; want an error and no change", got, changed, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decide = %+v, changed %v; want %+v, changed %v", got, changed, tc.want, tc.changed)
			}
		})
	}
}

func TestReleased(t *testing.T) {
	got := Released([]cluster.KV{
		{Key: "cluster/handover/3", Value: []byte(`{"epoch":7}`)},
		{Key: "cluster/handover/x", Value: []byte(`{"epoch":1}`)},
		{Key: "cluster/handover/4", Value: []byte(`garbage`)},
	})
	if !reflect.DeepEqual(got, map[int]int64{3: 7}) {
		t.Fatalf("Released = %v", got)
	}
}
