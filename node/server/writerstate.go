package server

import (
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
)

// writerState answers GetWriterState: what the segment holds of a writer,
// durable, without binding the writer to this connection.
func (c *conn) writerState(r *protocol.GetWriterState) {
	var last int64
	var sealed bool
	err := c.onContainer(r.Segment, func(ct *container.Container) (err error) {
		last, sealed, err = ct.WriterState(r.Segment, r.WriterID)
		return err
	})
	c.reply(r.RequestID, err, r.Segment, &protocol.WriterState{RequestID: r.RequestID, Segment: r.Segment,
		WriterID: r.WriterID, LastEventNumber: last, Sealed: sealed})
}
