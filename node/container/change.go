package container

import "github.com/sluice-streams/sluice/node/wal"

// Every change to a container follows one sequence, lock-log-wait:
//
//  1. Under c.mu, decide: check that the container takes changes, that
//     the segment exists and that the change fits its state; a refusal
//     logs nothing.
//  2. Still under c.mu, append the change's record to the log (logLocked)
//     and apply it to the state, so that the log's order is the order of
//     the changes.
//  3. Release c.mu and wait until the record is durable (fsync): only
//     then is the change acknowledged.
//  4. For what readers see only once durable (a seal, a merge's new
//     length), take c.mu again and mark it durable (thenLocked).
//
// An answer that changes nothing but reports state that may not be
// durable yet (a segment sealed a moment ago, attributes, a writer's last
// event number) waits instead, at step 3, until everything logged before
// it is durable (syncPointLocked).
//
// change runs steps 1 to 3 around an operation's decide function, which
// returns the wait of step 3; the lock is released on every path. Appends
// follow the same sequence but split it at step 3 (AppendAsync returns,
// PendingAppend.Wait waits), so that a connection can pipeline them.

// durableWait waits, without the container's lock, until what an
// operation logged (or read) under the lock is durable; it returns the
// container's failure if the log failed.
type durableWait func() error

// change runs decide under c.mu, then, with the lock released, the wait
// it returned. An error from decide is returned at once.
func (c *Container) change(decide func() (durableWait, error)) error {
	wait, err := c.underLock(decide)
	if err != nil {
		return err
	}
	return wait()
}

func (c *Container) underLock(decide func() (durableWait, error)) (durableWait, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return decide()
}

// noWait is the wait of an operation that logged nothing and answers
// nothing that may not be durable.
func noWait() error { return nil }

// durable returns the wait for a logged record.
func (c *Container) durable(p wal.Pending) durableWait {
	return func() error { return c.wait(p) }
}

// thenLocked returns a wait that runs wait and then, once the record is
// durable, mark under c.mu (step 4).
func (c *Container) thenLocked(wait durableWait, mark func()) durableWait {
	return func() error {
		if err := wait(); err != nil {
			return err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		mark()
		return nil
	}
}

// segmentForChangeLocked returns the segment a change is for, or why the
// container takes no change to it from a client.
func (c *Container) segmentForChangeLocked(name string) (*segment, error) {
	if err := c.usableLocked(); err != nil {
		return nil, err
	}
	return c.segmentLocked(name)
}
