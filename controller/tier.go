package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// StreamTier reports the tier-2 state of every segment of a stream that
// still exists on the nodes (those before the head cut are deleted).
func (s *Service) StreamTier(ctx context.Context, scope, stream string) (api.StreamTier, error) {
	r, _, err := s.loadStream(ctx, scope, stream)
	if err != nil {
		return api.StreamTier{}, err
	}
	out := api.StreamTier{Scope: scope, Stream: stream, Segments: []api.SegmentTier{}}
	now := s.opts.Clock()
	for _, seg := range r.Segments[r.FirstSegment:] {
		name := r.name(seg)
		info, err := s.segs.GetSegmentInfo(ctx, name)
		if errors.Is(err, protocol.ErrNoSuchSegment) {
			continue
		}
		if err != nil {
			return api.StreamTier{}, fmt.Errorf("controller: tier state of %s: %w", name, err)
		}
		st := api.SegmentTier{Segment: name, StartOffset: info.StartOffset, Length: info.Length, Sealed: info.Sealed,
			TieredOffset: info.TieredOffset, UntieredBytes: info.UntieredBytes, Tier2Error: info.Tier2Error}
		if info.OldestUntieredUnixNano != 0 {
			st.LagMillis = max(now.Sub(time.Unix(0, info.OldestUntieredUnixNano)).Milliseconds(), 0)
		}
		out.TieredBytes += max(info.TieredOffset-info.StartOffset, 0)
		out.UntieredBytes += info.UntieredBytes
		out.LagMillis = max(out.LagMillis, st.LagMillis)
		out.Segments = append(out.Segments, st)
	}
	return out, nil
}

// tierAttrs are the segment attributes that carry a stream's tiering
// policy to the nodes (nil if the stream keeps the nodes' settings).
func tierAttrs(cfg api.StreamConfig) map[string]int64 {
	t := cfg.TieringPolicy
	if t == nil || (t.MaxLagMillis == 0 && t.SegmentBytes == 0) {
		return nil
	}
	attrs := map[string]int64{}
	if t.MaxLagMillis > 0 {
		attrs[protocol.AttrTierMaxLagMillis] = t.MaxLagMillis
	}
	if t.SegmentBytes > 0 {
		attrs[protocol.AttrTierSegmentBytes] = t.SegmentBytes
	}
	return attrs
}

// applyTierPolicy sets a stream's tiering policy on its current segments
// after an update changed it (new segments get it at creation). A zero
// field sets 0, which the nodes read as "the node's setting".
func (s *Service) applyTierPolicy(ctx context.Context, r *streamRec) error {
	attrs := map[string]int64{protocol.AttrTierMaxLagMillis: 0, protocol.AttrTierSegmentBytes: 0}
	for k, v := range tierAttrs(r.Config) {
		attrs[k] = v
	}
	for _, n := range r.current().Segments {
		name := r.name(r.Segments[n])
		if err := s.segs.SetAttributes(ctx, name, attrs); err != nil {
			return fmt.Errorf("controller: set the tiering policy of %s: %w (repeat the update)", name, err)
		}
	}
	return nil
}

// NodeInfo is a live node: its id and data-plane address.
type NodeInfo struct {
	ID   string
	Addr string
}

// NodeLister lists the live nodes; the standalone and cluster locators
// implement it.
type NodeLister interface {
	Nodes(ctx context.Context) ([]NodeInfo, error)
}

// Nodes returns the standalone node.
func (s StaticNode) Nodes(context.Context) ([]NodeInfo, error) {
	return []NodeInfo{{ID: "standalone", Addr: s.Addr}}, nil
}

// Nodes returns the nodes the published assignment names that are
// registered now, by id.
func (l *ClusterLocator) Nodes(context.Context) ([]NodeInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []NodeInfo
	for id, e := range l.mu.nodes {
		if e.addr != "" {
			out = append(out, NodeInfo{ID: id, Addr: e.addr})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// tierStatser is the part of a SegmentStore that asks a node for its
// storage writers' counters (NodeSegments has it).
type tierStatser interface {
	TierStats(ctx context.Context, addr string) (*protocol.TierStats, error)
}

// TierStats asks the node at addr for its storage writers' counters.
func (n *NodeSegments) TierStats(ctx context.Context, addr string) (*protocol.TierStats, error) {
	c, err := n.conn(ctx, addr)
	if err != nil {
		return nil, err
	}
	return c.GetTierStats(ctx)
}

// NodeTiers asks each node for its tier-2 state; a node that cannot be
// asked is reported with the reason, not as a failure of the whole call.
func (s *Service) NodeTiers(ctx context.Context, nodes []NodeInfo) (api.NodeTierList, error) {
	ts, ok := s.segs.(tierStatser)
	if !ok {
		return api.NodeTierList{}, fmt.Errorf("%w: this controller cannot ask nodes for tier-2 counters", protocol.ErrContainerUnavailable)
	}
	out := api.NodeTierList{Nodes: []api.NodeTier{}}
	for _, n := range nodes {
		nt := api.NodeTier{Node: n.ID, Addr: n.Addr, Containers: []api.ContainerTier{}}
		st, err := ts.TierStats(ctx, n.Addr)
		if err != nil {
			nt.Error = err.Error()
		} else {
			for _, c := range st.Containers {
				nt.Containers = append(nt.Containers, api.ContainerTier{Container: int(c.Container), TieredBytes: c.TieredBytes,
					Chunks: c.Chunks, UntieredBytes: c.Untiered, LagMillis: time.Duration(c.LagNanos).Milliseconds(),
					Errors: c.Errors, LastError: c.LastError, Stalled: c.Stalled})
			}
		}
		out.Nodes = append(out.Nodes, nt)
	}
	return out, nil
}
