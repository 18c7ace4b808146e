package container

import "github.com/sluice-streams/sluice/protocol"

// WriterState returns the last event number the segment holds for writer
// (protocol.NoEventNumber if none) and whether the segment is sealed. It
// changes nothing and answers once everything logged before it is
// durable, so the number never shrinks after a crash. Unlike SetupAppend it
// binds nothing: a resuming writer asks it of every segment of a stream's
// history, sealed ones included.
func (c *Container) WriterState(name, writer string) (last int64, sealed bool, err error) {
	if writer == "" {
		return 0, false, c.errorf(protocol.ErrInvalidArgument, name, "empty writer id")
	}
	err = c.change(func() (durableWait, error) {
		s, err := c.segmentLocked(name)
		if err != nil {
			return nil, err
		}
		var ok bool
		if last, ok = s.writers[writer]; !ok {
			last = protocol.NoEventNumber
		}
		sealed = s.sealed
		return c.syncPointLocked(), nil
	})
	return last, sealed, err
}
