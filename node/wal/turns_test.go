package wal

import (
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
)

func notUrgent() bool { return false }

// waitWaiters waits until n acquirers wait on t.
func waitWaiters(t *testing.T, tt *spareTurns, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tt.mu.Lock()
		got := len(tt.waiters)
		tt.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters after 10s, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSpareTurnsOrder: the turn goes to an urgent waiter before those
// that came earlier, then in the order they came, then to nobody.
func TestSpareTurnsOrder(t *testing.T) {
	var tt spareTurns
	stop := make(chan struct{})
	if !tt.acquire(notUrgent, stop) {
		t.Fatal("a free turn was not taken")
	}
	got := make(chan string, 3)
	start := func(name string, urgent func() bool) {
		go func() {
			if tt.acquire(urgent, stop) {
				got <- name
			}
		}()
	}
	var late atomic.Bool // urgent only once asked after the second came
	start("first", notUrgent)
	waitWaiters(t, &tt, 1)
	start("second", notUrgent)
	waitWaiters(t, &tt, 2)
	start("urgent", late.Load)
	waitWaiters(t, &tt, 3)
	if tt.urgentWaiting() {
		t.Fatal("urgentWaiting with no urgent waiter")
	}
	late.Store(true)
	if !tt.urgentWaiting() {
		t.Fatal("urgentWaiting missed the urgent waiter")
	}
	for _, want := range []string{"urgent", "first", "second"} {
		tt.release()
		if name := <-got; name != want {
			t.Fatalf("the turn went to %s, want %s", name, want)
		}
	}
	tt.release()
	if tt.held {
		t.Fatal("the turn is held after the last release")
	}
}

// TestSpareTurnsStop: an acquirer whose stop closes leaves the queue
// holding nothing, and the turn passes over it.
func TestSpareTurnsStop(t *testing.T) {
	var tt spareTurns
	if !tt.acquire(notUrgent, nil) {
		t.Fatal("a free turn was not taken")
	}
	stop := make(chan struct{})
	res := make(chan bool)
	go func() { res <- tt.acquire(notUrgent, stop) }()
	waitWaiters(t, &tt, 1)
	close(stop)
	if <-res {
		t.Fatal("acquire reported the turn after its stop closed")
	}
	waitWaiters(t, &tt, 0)
	tt.release()
	if tt.held {
		t.Fatal("the turn is held with nobody waiting")
	}
}

// TestUrgentSpareGoesFirst: two logs of one process want a spare at once,
// as every container of a node does after a burst over all of them. The
// one whose appends go to a growing file (an fsync each batch until its
// spare is ready) gets its spare first, although the idle one asked first
// and was zero-filling: it steps aside between its pieces, and finishes
// after.
func TestUrgentSpareGoesFirst(t *testing.T) {
	var mu sync.Mutex
	var order []string
	record := func(name string) vfstest.Injector {
		return func(op vfstest.Op, path string) error {
			if op == vfstest.OpRename && filepath.Base(path) == spareName {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
			}
			return nil
		}
	}
	idleFS, busyFS := vfstest.New(vfs.Default), vfstest.New(vfs.Default)
	busyFS.SetInjector(record("busy"))
	var pieces atomic.Int32
	urgentSeen := make(chan struct{})
	idleFS.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpWrite && filepath.Base(path) == spareTmpName && pieces.Add(1) == 1 {
			// The idle log holds the turn: its first piece waits
			// until the busy log waits for the turn, urgent, so
			// that it steps aside before its second piece, and
			// not before the busy log asked.
			deadline := time.Now().Add(10 * time.Second)
			for !spareTurn.urgentWaiting() {
				if time.Now().After(deadline) {
					return errors.New("no urgent log waited for the turn in 10s")
				}
				time.Sleep(time.Millisecond)
			}
			close(urgentSeen)
		}
		return record("idle")(op, path)
	})

	idle, _ := mustOpen(t, Options{Dir: t.TempDir(), FS: idleFS, FileSize: earlyFileSize, Preallocate: true}, 1)
	defer idle.Close()
	deadline := time.Now().Add(10 * time.Second)
	for pieces.Load() < 1 { // its first file grows: Open asked for a spare
		if time.Now().After(deadline) {
			t.Fatal("the idle log did not start its spare in 10s")
		}
		time.Sleep(time.Millisecond)
	}
	busy, _ := mustOpen(t, Options{Dir: t.TempDir(), FS: busyFS, FileSize: earlyFileSize, Preallocate: true}, 1)
	defer busy.Close()
	deadline = time.Now().Add(10 * time.Second)
	n := 0
	for busy.Stats().EarlyRolls == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the busy log did not roll early into a spare in 10s: %+v", busy.Stats())
		}
		writeN(t, busy, n, 1)
		n++
		time.Sleep(time.Millisecond) // a slow log, which can afford a spare
	}
	select {
	case <-urgentSeen:
	default:
		t.Fatal("the busy log got its spare without waiting for the turn")
	}
	waitSpare(t, idle)
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 2 || order[0] != "busy" || order[1] != "idle" {
		t.Fatalf("spares finished in the order %v, want [busy idle]", order)
	}
	if st := busy.Stats(); st.Rolls != 1 {
		t.Fatalf("the busy log rolled %d times, want once, early: %+v", st.Rolls, st)
	}
}
