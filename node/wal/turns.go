package wal

import (
	"slices"
	"sync"
)

// spareTurns lets one log of the process zero-fill at a time, so that the
// pacing holds for the disk, not for each of a node's containers, and
// hands the next turn to the log that needs it most.
//
// A log whose appends go to a growing file pays an fsync (a metadata write
// besides its data) for every batch until its spare is ready; a log that
// grows but takes no appends pays nothing meanwhile. After a burst over
// every container, or when a node starts, all of a node's logs ask for a
// spare at once; in the order they asked, the one the load goes to could
// wait for every other log's 64 MiB first (2 s after an 8-writer burst,
// measured through the binary). So an urgent waiter (urgent reports true
// when asked) takes the next turn before any other, and a holder that is
// not urgent itself steps aside between pieces while an urgent one waits
// (see makeSpare).
type spareTurns struct {
	mu      sync.Mutex
	held    bool
	waiters []*turnWaiter // in the order they came
}

type turnWaiter struct {
	urgent func() bool
	turn   chan struct{} // closed when the turn is handed to this waiter
}

// spareTurn is the process's: the disk is shared by every log of it.
var spareTurn spareTurns

// acquire takes the turn, waiting for it if another log holds it, and
// reports true; or false if stop is closed first (then the caller holds
// nothing). urgent is asked, without the caller's locks, whenever the turn
// is handed on; it must not call into t.
func (t *spareTurns) acquire(urgent func() bool, stop <-chan struct{}) bool {
	t.mu.Lock()
	if !t.held {
		t.held = true
		t.mu.Unlock()
		return true
	}
	w := &turnWaiter{urgent: urgent, turn: make(chan struct{})}
	t.waiters = append(t.waiters, w)
	t.mu.Unlock()
	select {
	case <-w.turn:
		return true
	case <-stop:
	}
	t.mu.Lock()
	if i := slices.Index(t.waiters, w); i >= 0 {
		t.waiters = slices.Delete(t.waiters, i, i+1)
		t.mu.Unlock()
		return false
	}
	t.mu.Unlock()
	// The turn was handed over while stop closed: pass it on.
	t.release()
	return false
}

// release gives the turn up: to the first urgent waiter, else to the
// one that has waited longest, else to nobody.
func (t *spareTurns) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.waiters) == 0 {
		t.held = false
		return
	}
	i := max(slices.IndexFunc(t.waiters, func(w *turnWaiter) bool { return w.urgent() }), 0)
	next := t.waiters[i]
	t.waiters = slices.Delete(t.waiters, i, i+1)
	close(next.turn)
}

// urgentWaiting reports whether a waiter is urgent now.
func (t *spareTurns) urgentWaiting() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.ContainsFunc(t.waiters, func(w *turnWaiter) bool { return w.urgent() })
}
