package membership

import (
	"reflect"
	"testing"

	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/node"
)

func TestReconcile(t *testing.T) {
	own := func(pairs ...any) layout.Map {
		var m layout.Map
		for i := 0; i < len(pairs); i += 2 {
			m.Containers = append(m.Containers, layout.Owner{Node: pairs[i].(string), Epoch: int64(pairs[i+1].(int))})
		}
		return m
	}
	h := func(id int, epoch int64, fenced bool) node.Hosting {
		return node.Hosting{ID: id, Epoch: epoch, Fenced: fenced}
	}
	fence := func(id int) Action { return Action{Op: Fence, Container: id} }
	unhost := func(id int) Action { return Action{Op: Unhost, Container: id} }
	host := func(id int, e int64) Action { return Action{Op: Host, Container: id, Epoch: e} }

	for _, tc := range []struct {
		name   string
		hosted []node.Hosting
		m      layout.Map
		want   []Action
	}{
		{"nothing hosted, empty map", nil, layout.New(3), nil},
		{"first map", nil, own("a", 1, "b", 1, "a", 1), []Action{host(0, 1), host(2, 1)}},
		{"steady", []node.Hosting{h(0, 1, false), h(2, 1, false)}, own("a", 1, "b", 1, "a", 1), nil},
		{"moved away", []node.Hosting{h(0, 1, false), h(2, 1, false)}, own("a", 1, "b", 1, "b", 2),
			[]Action{fence(2), unhost(2)}},
		{"moved here", []node.Hosting{h(0, 1, false)}, own("a", 1, "a", 2), []Action{host(1, 2)}},
		{"moved away and back (coalesced)", []node.Hosting{h(0, 1, false)}, own("a", 3),
			[]Action{fence(0), unhost(0), host(0, 3)}},
		{"fenced by session expiry, still mine", []node.Hosting{h(0, 1, true), h(1, 4, true)}, own("a", 1, "a", 4),
			[]Action{unhost(0), unhost(1), host(0, 1), host(1, 4)}},
		{"fenced and given away", []node.Hosting{h(0, 1, true)}, own("b", 2), []Action{unhost(0)}},
		{"unassigned in the map", []node.Hosting{h(1, 1, false)}, layout.New(2), []Action{fence(1), unhost(1)}},
		{"map epoch behind ours", []node.Hosting{h(0, 5, false)}, own("a", 4),
			[]Action{fence(0), unhost(0), host(0, 4)}},
		{"hosted beyond the map", []node.Hosting{h(0, 1, false), h(3, 1, false)}, own("a", 1),
			[]Action{fence(3), unhost(3)}},
		{"order: fences, unhosts, hosts", []node.Hosting{h(1, 1, false), h(2, 1, true), h(3, 1, false)},
			own("a", 2, "b", 2, "b", 2, "a", 2),
			[]Action{fence(1), fence(3), unhost(1), unhost(2), unhost(3), host(0, 2), host(3, 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Reconcile("a", tc.hosted, tc.m, nil)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Reconcile =\n  %v\nwant\n  %v", got, tc.want)
			}
		})
	}
	if got := Reconcile("", []node.Hosting{h(0, 1, false)}, own("", 1), nil); !reflect.DeepEqual(got, []Action{fence(0), unhost(0)}) {
		t.Fatalf("empty self: %v", got)
	}
}

func TestReconcileHandOver(t *testing.T) {
	moving := func(node string, epoch int64, to string) layout.Map {
		return layout.Map{Containers: []layout.Owner{{Node: node, Epoch: epoch, MoveTo: to}}}
	}
	h := func(epoch int64, fenced bool) []node.Hosting {
		return []node.Hosting{{ID: 0, Epoch: epoch, Fenced: fenced}}
	}
	release := Action{Op: Release, Container: 0, Epoch: 3}
	for _, tc := range []struct {
		name     string
		hosted   []node.Hosting
		m        layout.Map
		released map[int]int64
		want     []Action
	}{
		{"hosted: release", h(3, false), moving("a", 3, "b"), nil, []Action{release}},
		{"not hosted (a restart): release hosts first", nil, moving("a", 3, "b"), nil, []Action{release}},
		{"fenced: reopen and release", h(3, true), moving("a", 3, "b"), nil, []Action{{Op: Unhost, Container: 0}, release}},
		{"released already: nothing", nil, moving("a", 3, "b"), map[int]int64{0: 3}, nil},
		{"released already but hosted: close it", h(3, false), moving("a", 3, "b"), map[int]int64{0: 3},
			[]Action{{Op: Fence, Container: 0}, {Op: Unhost, Container: 0}}},
		{"an older release does not count", h(3, false), moving("a", 3, "b"), map[int]int64{0: 2}, []Action{release}},
		{"the target waits", nil, moving("b", 3, "a"), nil, nil},
		{"the target builds from the hand-over", nil,
			layout.Map{Containers: []layout.Owner{{Node: "a", Epoch: 4, From: 3}}}, map[int]int64{0: 3},
			[]Action{{Op: Host, Container: 0, Epoch: 4, From: 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reconcile("a", tc.hosted, tc.m, tc.released); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Reconcile =\n  %v\nwant\n  %v", got, tc.want)
			}
		})
	}
}
