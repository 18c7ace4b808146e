package membership

import (
	"fmt"
	"sort"

	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/node"
)

// Op is what an Action does.
type Op int

// The operations of a reconciliation, in the order they are applied.
const (
	// Fence: stop the container's changes at once (node.Node.Fence).
	Fence Op = iota
	// Unhost: close the container (node.Node.Unhost).
	Unhost
	// Host: open the container under Epoch (node.Node.HostFrom, with the
	// hand-over of epoch From if From > 0).
	Host
	// Release: hand the container over to its next owner through tier 2
	// (node.Node.Release, hosting it under Epoch first if need be), then
	// confirm in the store.
	Release
)

func (o Op) String() string {
	switch o {
	case Fence:
		return "fence"
	case Unhost:
		return "unhost"
	case Host:
		return "host"
	case Release:
		return "release"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Action is one step of a reconciliation.
type Action struct {
	Op        Op
	Container int
	Epoch     int64 // for Host and Release
	From      int64 // for Host: the epoch of the hand-over to build from
}

func (a Action) String() string {
	switch {
	case a.Op == Host && a.From > 0:
		return fmt.Sprintf("host %d@%d from %d", a.Container, a.Epoch, a.From)
	case a.Op == Host || a.Op == Release:
		return fmt.Sprintf("%v %d@%d", a.Op, a.Container, a.Epoch)
	}
	return fmt.Sprintf("%v %d", a.Op, a.Container)
}

// Reconcile returns what node self must do to serve exactly what m gives
// it: Fence actions first (sorted by container), then Unhost, then Host,
// then Release. A hosted container is kept only if m gives it to self
// under the epoch it was opened with and it is not fenced; otherwise it is
// fenced (if not yet) and unhosted, and hosted again under m's epoch if m
// gives it to self. A container m asks self to move (MoveTo) is released,
// unless released says self did so under its epoch already. Containers
// that m does not have (beyond its length) are dropped.
func Reconcile(self string, hosted []node.Hosting, m layout.Map, released map[int]int64) []Action {
	var fence, unhost, host, release []Action
	have := make(map[int]node.Hosting, len(hosted))
	for _, h := range hosted {
		have[h.ID] = h
		if h.ID >= len(m.Containers) || h.ID < 0 {
			if !h.Fenced {
				fence = append(fence, Action{Op: Fence, Container: h.ID})
			}
			unhost = append(unhost, Action{Op: Unhost, Container: h.ID})
		}
	}
	for id, o := range m.Containers {
		h, ok := have[id]
		mine := self != "" && o.Node == self
		if mine && o.MoveTo != "" {
			if e, done := released[id]; done && e == o.Epoch {
				if ok {
					fence = append(fence, Action{Op: Fence, Container: id})
					unhost = append(unhost, Action{Op: Unhost, Container: id})
				}
				continue
			}
			if ok && (h.Fenced || h.Epoch != o.Epoch) {
				if !h.Fenced {
					fence = append(fence, Action{Op: Fence, Container: id})
				}
				unhost = append(unhost, Action{Op: Unhost, Container: id})
			}
			release = append(release, Action{Op: Release, Container: id, Epoch: o.Epoch, From: o.From})
			continue
		}
		if ok && mine && !h.Fenced && h.Epoch == o.Epoch {
			continue
		}
		if ok {
			if !h.Fenced {
				fence = append(fence, Action{Op: Fence, Container: id})
			}
			unhost = append(unhost, Action{Op: Unhost, Container: id})
		}
		if mine {
			host = append(host, Action{Op: Host, Container: id, Epoch: o.Epoch, From: o.From})
		}
	}
	byID := func(as []Action) {
		sort.Slice(as, func(i, j int) bool { return as[i].Container < as[j].Container })
	}
	byID(fence)
	byID(unhost)
	byID(host)
	byID(release)
	out := append(fence, unhost...)
	out = append(out, host...)
	return append(out, release...)
}
