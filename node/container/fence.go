package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/protocol"
)

// EpochFile is the name of the file, in a container's directory, that holds
// the highest assignment epoch the container was opened under, in decimal.
// It is written whole (vfs.WriteFileAtomic) before the log is replayed, so a
// node given the container under a newer epoch leaves a mark that every
// older assignment's open trips over.
const EpochFile = "epoch"

// ErrStaleEpoch: the container's directory holds a higher epoch than the
// one it is being opened under; another assignment owns it now.
var ErrStaleEpoch = errors.New("container: stale epoch")

// ErrRemovalPending: a segment made again under the name of a deleted one
// whose tier-2 chunks are still being removed cannot commit chunks yet
// (CommitChunk).
var ErrRemovalPending = errors.New("container: a deleted segment of that name still has tier-2 chunks to remove")

// ReadEpoch returns the epoch recorded in a container directory, 0 if none.
func ReadEpoch(fs vfs.FS, dir string) (int64, error) {
	if fs == nil {
		fs = vfs.Default
	}
	name := filepath.Join(dir, EpochFile)
	b, err := vfs.ReadFile(fs, name)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	e, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || e < 0 {
		return 0, fmt.Errorf("%s holds %q, not an epoch", name, b)
	}
	return e, nil
}

// claimEpoch refuses a directory that records an epoch above epoch and
// records epoch if it is higher than what is there.
func claimEpoch(fs vfs.FS, id int, dir string, epoch int64) error {
	have, err := ReadEpoch(fs, dir)
	if err != nil {
		return fmt.Errorf("container %d: %w", id, err)
	}
	if have > epoch {
		return fmt.Errorf("container %d: %w: %s records epoch %d, the assignment gives %d; a newer owner holds it",
			id, ErrStaleEpoch, dir, have, epoch)
	}
	if epoch > have {
		name := filepath.Join(dir, EpochFile)
		if err := vfs.WriteFileAtomic(fs, name, []byte(strconv.FormatInt(epoch, 10)+"\n"), 0o644); err != nil {
			return fmt.Errorf("container %d: record epoch %d in %s: %w", id, epoch, name, err)
		}
	}
	return nil
}

// Epoch is the assignment epoch the container was opened under.
func (c *Container) Epoch() int64 { return c.cfg.Epoch }

// Fence makes every later change (Create, Append, Seal, Truncate, Delete,
// Merge, attribute updates, SetupAppend) fail with protocol.ErrWrongHost:
// the assignment has moved on. It takes effect at once, without I/O; a
// change already logged completes. There is no way back: reopen the
// container under the new epoch.
func (c *Container) Fence() { c.fenced.Store(true) }

// Fenced reports whether Fence was called.
func (c *Container) Fenced() bool { return c.fenced.Load() }

func (c *Container) fenceErr() error {
	if c.fenced.Load() {
		return fmt.Errorf("container %d: %w: fenced, epoch %d is no longer this node's", c.cfg.ID, protocol.ErrWrongHost, c.cfg.Epoch)
	}
	return nil
}
