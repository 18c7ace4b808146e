package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-streams/sluice/client"
)

// commitInterval is how often the bench's readers commit and heartbeat:
// shorter than client.DefaultCommitInterval so that the group balances in
// a fraction of a second before the timed part starts.
const commitInterval = 100 * time.Millisecond

// balanceTimeout bounds the wait for the group to give every reader its
// share of the segments.
const balanceTimeout = 30 * time.Second

// group is the Config.Readers readers of the reader group a run creates
// (bench-<random> in the stream's scope), deleted when the run ends.
type group struct {
	g       *client.ReaderGroup
	readers []*client.GroupReader
}

// joinGroup creates the run's reader group of s starting at start, joins
// readers readers to it, and waits until the group has balanced: every
// segment held by a reader, none holding more than its fair share.
func joinGroup(ctx context.Context, cl *client.Client, s stream, readers int, start client.ReaderOption) (*group, error) {
	var id [4]byte
	rand.Read(id[:])
	name := "bench-" + hex.EncodeToString(id[:])
	opts := []client.GroupOption{client.WithCommitInterval(commitInterval)}
	g, err := cl.NewReaderGroup(ctx, s.scope, name, s.name, append(opts, client.GroupFrom(start))...)
	if err != nil {
		return nil, fmt.Errorf("reader group: %w", err)
	}
	bg := &group{g: g}
	for i := 1; i <= readers; i++ {
		gr, err := cl.JoinReaderGroup(ctx, s.scope, name, fmt.Sprintf("reader-%d", i), opts...)
		if err != nil {
			bg.close()
			return nil, fmt.Errorf("reader group %s/%s: join: %w", s.scope, name, err)
		}
		bg.readers = append(bg.readers, gr)
	}
	if err := bg.waitBalanced(ctx); err != nil {
		bg.close()
		return nil, err
	}
	return bg, nil
}

// waitBalanced polls the group's state every 20 ms until every reader is
// in it, no segment is unassigned and no reader holds more than
// ceil(segments/readers).
func (bg *group) waitBalanced(ctx context.Context) error {
	deadline := time.Now().Add(balanceTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	state := "not read yet"
	for {
		st, _, _, err := bg.g.State(ctx)
		if err != nil {
			return fmt.Errorf("reader group: %w", err)
		}
		held, most := 0, 0
		for _, m := range st.Readers {
			held += len(m.Segments)
			most = max(most, len(m.Segments))
		}
		segs := held + len(st.Unassigned)
		share := (segs + len(bg.readers) - 1) / len(bg.readers)
		if len(st.Readers) == len(bg.readers) && len(st.Unassigned) == 0 && most <= share {
			return nil
		}
		state = fmt.Sprintf("%d readers, %d segments held (at most %d by one, fair share %d), %d unassigned",
			len(st.Readers), held, most, share, len(st.Unassigned))
		if time.Now().After(deadline) {
			return fmt.Errorf("reader group did not balance within %v: %s", balanceTimeout, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// run reads with every reader at once, calling each (from the readers'
// goroutines, so concurrently) with every event and how long its ReadNext
// took. The channel yields one error once every reader has stopped: the
// first reader's error (wrapping context.Canceled when ctx is cancelled),
// or each's. An error of one reader stops the others.
func (bg *group) run(ctx context.Context, each func(ev client.Event, took time.Duration) error) <-chan error {
	rctx, cancel := context.WithCancel(ctx)
	out := make(chan error, 1)
	var (
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() { first = err })
		cancel()
	}
	for _, gr := range bg.readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t0 := time.Now()
				ev, err := gr.ReadNext(rctx)
				if err != nil {
					fail(fmt.Errorf("%s: %w", gr.ID(), err))
					return
				}
				if err := each(ev, time.Since(t0)); err != nil {
					fail(fmt.Errorf("%s: %w", gr.ID(), err))
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		cancel()
		out <- first
	}()
	return out
}

// close makes the readers leave and deletes the group.
func (bg *group) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	for _, gr := range bg.readers {
		errs = append(errs, gr.Close(ctx))
	}
	errs = append(errs, bg.g.Delete(ctx))
	return errors.Join(errs...)
}

// storeMax stores v in a unless a holds more: readers running concurrently
// record the time of the latest event, not of the last one stored.
func storeMax(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}
