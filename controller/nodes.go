package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Nodes lists the cluster's nodes from the store: the registered ones
// (layout.NodesKey), those the published assignment names, and those being
// drained (layout.DrainKey). A standalone controller's store has none of these.
func (s *Service) Nodes(ctx context.Context) (api.NodeList, error) {
	byID := map[string]*api.NodeStatus{}
	get := func(id string) *api.NodeStatus {
		n, ok := byID[id]
		if !ok {
			n = &api.NodeStatus{ID: id, Containers: []int{}, Moving: []int{}}
			byID[id] = n
		}
		return n
	}
	regs, err := s.store.List(ctx, layout.NodesKey)
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return api.NodeList{}, fmt.Errorf("controller: list %s: %w", layout.NodesKey, err)
	}
	for _, kv := range regs {
		reg, _ := layout.ParseNodeRegistration(kv.Value) // what it holds is shown, even if not all of it decodes
		n := get(path.Base(kv.Key))
		n.Live, n.Addr, n.Tier2 = true, reg.Addr, reg.Tier2
	}
	drains, err := s.store.List(ctx, layout.DrainKey)
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return api.NodeList{}, fmt.Errorf("controller: list %s: %w", layout.DrainKey, err)
	}
	for _, kv := range drains {
		get(path.Base(kv.Key)).Draining = true
	}
	kv, err := s.store.Get(ctx, layout.AssignmentKey)
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return api.NodeList{}, fmt.Errorf("controller: read %s: %w", layout.AssignmentKey, err)
	}
	if err == nil {
		var m layout.Map
		if err := json.Unmarshal(kv.Value, &m); err != nil {
			return api.NodeList{}, fmt.Errorf("controller: read %s: %w", layout.AssignmentKey, err)
		}
		for i, o := range m.Containers {
			if o.Node == "" {
				continue
			}
			n := get(o.Node)
			n.Containers = append(n.Containers, i)
			if o.MoveTo != "" {
				n.Moving = append(n.Moving, i)
			}
		}
	}
	out := api.NodeList{Nodes: []api.NodeStatus{}}
	for _, n := range byID {
		out.Nodes = append(out.Nodes, *n)
	}
	sort.Slice(out.Nodes, func(i, j int) bool { return out.Nodes[i].ID < out.Nodes[j].ID })
	return out, nil
}

// SetDrain asks the leader to move every container away from node id
// (drain true), or stops asking (false). The node need not be live. A
// node is drained when it holds no container (Nodes).
func (s *Service) SetDrain(ctx context.Context, id string, drain bool) error {
	if err := api.ValidateNodeID(id); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	key := layout.DrainKey + "/" + id
	if drain {
		if _, err := s.store.Put(ctx, key, []byte("{}")); err != nil {
			return fmt.Errorf("controller: drain node %s: %w", id, err)
		}
	} else if err := s.store.Delete(ctx, key, cluster.AnyVersion); err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return fmt.Errorf("controller: stop draining node %s: %w", id, err)
	}
	// Wake the leader's watch on the parent (watches report no child
	// changes); it would see the change at its next tick anyway.
	s.store.Put(ctx, layout.DrainKey, []byte(id))
	return nil
}
