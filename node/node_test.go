package node

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
	"github.com/sluice-streams/sluice/protocol"
)

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// segmentIn returns a segment name that belongs to container id.
func segmentIn(t *testing.T, id, containers int) string {
	t.Helper()
	for i := int64(0); i < 10000; i++ {
		s := protocol.SegmentName("sc", "st", i, 0)
		if protocol.ContainerOf(s, containers) == id {
			return s
		}
	}
	t.Fatalf("no segment for container %d", id)
	return ""
}

func TestStandaloneHostsAllUnderEpochZero(t *testing.T) {
	n, err := Open(Config{Dir: t.TempDir(), Containers: 3, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	h := n.Hosted()
	if len(h) != 3 {
		t.Fatalf("Hosted = %v", h)
	}
	for i, x := range h {
		if x != (Hosting{ID: i}) {
			t.Fatalf("Hosted[%d] = %+v", i, x)
		}
		if _, err := n.ContainerFor(segmentIn(t, i, 3)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHostUnhostFence(t *testing.T) {
	dir := t.TempDir()
	n, err := Open(Config{Dir: dir, Containers: 4, Hosted: []int{}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	seg := segmentIn(t, 2, 4)
	if _, err := n.ContainerFor(seg); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("ContainerFor before Host = %v, want ErrWrongHost", err)
	}
	if err := n.Host(2, 3); err != nil {
		t.Fatal(err)
	}
	if err := n.Host(2, 3); err != nil {
		t.Fatalf("Host again under the same epoch: %v", err)
	}
	if err := n.Host(2, 4); err == nil {
		t.Fatal("Host under another epoch while hosted: no error")
	}
	if err := n.Host(4, 1); err == nil {
		t.Fatal("Host of container 4 of 4: no error")
	}
	c, err := n.ContainerFor(seg)
	if err != nil || c.ID() != 2 || c.Epoch() != 3 {
		t.Fatalf("ContainerFor = %v, %v", c, err)
	}
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := container.ReadEpoch(nil, n.ContainerDir(2)); got != 3 {
		t.Fatalf("epoch file holds %d, want 3", got)
	}
	if !n.Fence(2) || n.Fence(1) {
		t.Fatal("Fence reported the wrong containers hosted")
	}
	if err := c.Create(protocol.SegmentName("other", "st", 0, 0), nil); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("Create on a fenced container = %v, want ErrWrongHost", err)
	}
	if _, err := n.ContainerFor(seg); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("ContainerFor of a fenced container = %v, want ErrWrongHost", err)
	}
	if h := n.Hosted(); len(h) != 1 || h[0] != (Hosting{ID: 2, Epoch: 3, Fenced: true}) {
		t.Fatalf("Hosted = %+v", h)
	}
	if err := n.Unhost(2); err != nil {
		t.Fatal(err)
	}
	if err := n.Unhost(2); err != nil {
		t.Fatalf("second Unhost: %v", err)
	}
	if len(n.Hosted()) != 0 {
		t.Fatalf("Hosted after Unhost = %+v", n.Hosted())
	}
	// An older epoch is refused, naming the directory; a newer one opens
	// with the data.
	err = n.Host(2, 2)
	if !errors.Is(err, container.ErrStaleEpoch) || !strings.Contains(err.Error(), n.ContainerDir(2)) {
		t.Fatalf("Host under an older epoch = %v, want ErrStaleEpoch naming the directory", err)
	}
	if _, err := n.ContainerFor(seg); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("ContainerFor after a refused Host = %v", err)
	}
	if err := n.Host(2, 5); err != nil {
		t.Fatal(err)
	}
	c, err = n.ContainerFor(seg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Info(seg); err != nil {
		t.Fatalf("segment lost across Unhost/Host: %v", err)
	}
}

func TestBusyContainerUnavailable(t *testing.T) {
	n, err := Open(Config{Dir: t.TempDir(), Containers: 2, Hosted: []int{}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	// A container being opened: mark it busy as Host does, and check the
	// answers without racing a real open.
	n.mu.Lock()
	r := n.routes.Load().clone()
	r.busy[1] = opening
	n.routes.Store(r)
	n.mu.Unlock()
	if _, err := n.ContainerFor(segmentIn(t, 1, 2)); !errors.Is(err, protocol.ErrContainerUnavailable) {
		t.Fatalf("ContainerFor while opening = %v, want ErrContainerUnavailable", err)
	}
	if err := n.Host(1, 1); !errors.Is(err, protocol.ErrContainerUnavailable) {
		t.Fatalf("Host while opening = %v, want ErrContainerUnavailable", err)
	}
}

// TestUnhostingContainerIsWrongHost holds a real Unhost in the middle of
// closing its container (its last checkpoint's rename blocks) and checks
// what clients see meanwhile: ErrWrongHost, the retriable answer that
// sends them to the controller for the container's new owner, never
// ErrContainerUnavailable ("closing"), which says the container will be
// back here. Host is still refused until the close is done.
func TestUnhostingContainerIsWrongHost(t *testing.T) {
	efs := vfstest.New(vfs.Default)
	n, err := Open(Config{Dir: t.TempDir(), Containers: 2, Hosted: []int{}, FS: efs, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Host(0, 1); err != nil {
		t.Fatal(err)
	}
	seg := segmentIn(t, 0, 2)
	c, err := n.ContainerFor(seg)
	if err != nil {
		t.Fatal(err)
	}
	// Something to checkpoint, so that closing writes a checkpoint.
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpRename && strings.Contains(filepath.Base(path), "checkpoint-") {
			once.Do(func() { close(held) })
			<-release
		}
		return nil
	})
	unhosted := make(chan error, 1)
	go func() { unhosted <- n.Unhost(0) }()
	<-held // Unhost is closing the container now
	_, err = n.ContainerFor(seg)
	if !errors.Is(err, protocol.ErrWrongHost) || errors.Is(err, protocol.ErrContainerUnavailable) {
		t.Errorf("ContainerFor while closing = %v, want ErrWrongHost", err)
	}
	if err := n.Host(0, 2); !errors.Is(err, protocol.ErrContainerUnavailable) {
		t.Errorf("Host while closing = %v, want ErrContainerUnavailable", err)
	}
	close(release)
	if err := <-unhosted; err != nil {
		t.Fatal(err)
	}
	if _, err := n.ContainerFor(seg); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("ContainerFor after Unhost = %v, want ErrWrongHost", err)
	}
}

func TestCloseThenHost(t *testing.T) {
	n, err := Open(Config{Dir: t.TempDir(), Containers: 2, Hosted: []int{}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Host(0, 1); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Host(1, 1); !errors.Is(err, protocol.ErrContainerUnavailable) {
		t.Fatalf("Host after Close = %v", err)
	}
	if len(n.Hosted()) != 0 {
		t.Fatalf("Hosted after Close = %v", n.Hosted())
	}
}
