package node

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/internal/dirlock"
)

// TestSecondOpenOfDirRefused: a second node on a data directory in use is
// refused with ErrLocked naming the holder, whether or not it would open
// any container, and gets in once the first has closed. (Across processes:
// internal/dirlock's tests and tests/e2e.)
func TestSecondOpenOfDirRefused(t *testing.T) {
	dir := t.TempDir()
	n, err := Open(Config{Dir: dir, Containers: 2, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	for _, hosted := range [][]int{nil, {}} {
		n2, err := Open(Config{Dir: dir, Containers: 2, Hosted: hosted, Logger: quiet()})
		if err == nil {
			n2.Close()
			t.Fatalf("second node (hosted %v) opened a data directory in use", hosted)
		}
		if !errors.Is(err, dirlock.ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
			t.Fatalf("second node (hosted %v): %v, want ErrLocked naming pid %d", hosted, err, os.Getpid())
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, err = Open(Config{Dir: dir, Containers: 2, Logger: quiet()})
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	n.Close()
}
