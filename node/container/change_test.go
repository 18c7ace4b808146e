package container

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
	"github.com/sluice-streams/sluice/protocol"
)

// TestChangeReleasesTheLockOnEveryPath: a refusal returns it at once with
// the lock released, and the wait runs without the lock.
func TestChangeReleasesTheLockOnEveryPath(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir()})
	refused := errors.New("refused")
	if err := c.change(func() (durableWait, error) { return nil, refused }); err != refused {
		t.Fatalf("change with a refusal = %v, want the refusal", err)
	}
	if !c.mu.TryLock() {
		t.Fatal("the lock is still held after a refusal")
	}
	c.mu.Unlock()

	waited := false
	err := c.change(func() (durableWait, error) {
		return func() error {
			if !c.mu.TryLock() {
				return errors.New("the wait ran under the container's lock")
			}
			c.mu.Unlock()
			waited = true
			return nil
		}, nil
	})
	if err != nil || !waited {
		t.Fatalf("change = %v, waited %v; want nil, true", err, waited)
	}
}

// TestThenLockedMarksOnlyWhatIsDurable: the mark runs under the lock after
// a durable wait, and not at all after a failed one.
func TestThenLockedMarksOnlyWhatIsDurable(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir()})
	var underLock, marked bool
	mark := func() {
		if c.mu.TryLock() { // not held: release it again
			c.mu.Unlock()
		} else {
			underLock = true
		}
		marked = true
	}
	if err := c.thenLocked(noWait, mark)(); err != nil {
		t.Fatal(err)
	}
	if !marked || !underLock {
		t.Fatalf("after a durable wait: marked %v, under the lock %v; want both", marked, underLock)
	}
	if !c.mu.TryLock() {
		t.Fatal("the lock is still held after the mark")
	}
	c.mu.Unlock()

	marked = false
	failed := errors.New("fsync failed")
	if err := c.thenLocked(func() error { return failed }, mark)(); err != failed {
		t.Fatalf("thenLocked after a failed wait = %v, want the failure", err)
	}
	if marked {
		t.Fatal("marked durable after a failed wait")
	}
}

// TestSealAfterAFailedSyncIsNotDurable: a seal whose record's fsync fails
// is refused, readers never see the segment sealed, and the container
// refuses changes from then on.
func TestSealAfterAFailedSyncIsNotDurable(t *testing.T) {
	efs := vfstest.New(vfs.Default)
	c := open(t, Config{Dir: t.TempDir(), FS: efs})
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, c, seg, "w", 1, "kept")
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpSync && strings.HasSuffix(path, ".wal") {
			return vfstest.ErrInjected
		}
		return nil
	})
	length, err := c.Seal(seg)
	expectErr(t, err, protocol.ErrContainerUnavailable)
	if length != 0 {
		t.Fatalf("Seal after a failed sync answered length %d, want 0", length)
	}
	efs.SetInjector(nil)
	info, err := c.Info(seg)
	if err != nil {
		t.Fatal(err)
	}
	if info.Sealed {
		t.Fatal("readers see the segment sealed although its seal record is not durable")
	}
	_, err = c.Truncate(seg, 0)
	expectErr(t, err, protocol.ErrContainerUnavailable)
}
