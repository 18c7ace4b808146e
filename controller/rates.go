package controller

import (
	"context"
	"time"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
)

// NodeRate is one segment's append rates as its node measures them, with
// that node's averaging windows (shortest first).
type NodeRate struct {
	Windows []time.Duration
	protocol.SegmentRate
}

// rateReader is the part of a SegmentStore that asks nodes for segments'
// append rates (NodeSegments has it); without it nothing is auto-scaled.
type rateReader interface {
	SegmentRates(ctx context.Context, segments []string) (map[string]NodeRate, error)
}

// SegmentRates asks the nodes for segments' append rates: each segment is
// located, and each node asked once per protocol.MaxRateSegments of its
// segments. A segment that cannot be located, whose node cannot be asked
// or does not serve it now is left out of the map (the auto-scaler treats
// it as unmeasured); the error is the first such failure, for the log.
// Each request is bounded by CallTimeout and by ctx (the auto-scaler
// gives each stream's query its own deadline, rateQueryTimeout).
func (n *NodeSegments) SegmentRates(ctx context.Context, segments []string) (map[string]NodeRate, error) {
	byNode := map[string][]string{}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, s := range segments {
		addr, err := n.loc.NodeFor(ctx, s)
		if err != nil {
			keep(err)
			continue
		}
		byNode[addr] = append(byNode[addr], s)
	}
	out := make(map[string]NodeRate, len(segments))
	for addr, names := range byNode {
		for len(names) > 0 {
			batch := names[:min(len(names), protocol.MaxRateSegments)]
			names = names[len(batch):]
			var reply *protocol.SegmentRates
			bctx, cancel := n.bound(ctx)
			err := n.doOnceAt(bctx, addr, func(c *segclient.Conn) (err error) {
				reply, err = c.GetSegmentRates(bctx, batch)
				return err
			})
			cancel()
			if err != nil {
				keep(err)
				continue
			}
			windows := make([]time.Duration, len(reply.WindowMillis))
			for i, w := range reply.WindowMillis {
				windows[i] = time.Duration(w) * time.Millisecond
			}
			for _, r := range reply.Rates {
				if !r.Missing && len(r.Events) == len(windows) && len(r.Bytes) == len(windows) {
					out[r.Segment] = NodeRate{Windows: windows, SegmentRate: r}
				}
			}
		}
	}
	return out, first
}
