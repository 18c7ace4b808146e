package server

import (
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
)

// segmentRates answers GetSegmentRates: each segment's rates from its
// container, or Missing where this node does not serve it now. It never
// fails as a whole: the controller asks again at its next poll.
func (c *conn) segmentRates(r *protocol.GetSegmentRates) *protocol.SegmentRates {
	cfg := c.s.node.RatesConfig()
	reply := &protocol.SegmentRates{RequestID: r.RequestID, WindowMillis: make([]int64, len(cfg.Windows)),
		Rates: make([]protocol.SegmentRate, len(r.Segments))}
	for i, w := range cfg.Windows {
		reply.WindowMillis[i] = w.Milliseconds()
	}
	now := container.RatesNow()
	for i, name := range r.Segments {
		out := &reply.Rates[i]
		out.Segment = name
		ct, err := c.s.node.ContainerFor(name)
		if err != nil {
			out.Missing = true
			continue
		}
		rt, err := ct.Rates(name, now)
		if err != nil {
			out.Missing = true
			continue
		}
		out.AgeMillis = rt.Age.Milliseconds()
		out.Events = append([]float64(nil), rt.Events[:]...)
		out.Bytes = append([]float64(nil), rt.Bytes[:]...)
	}
	return reply
}
