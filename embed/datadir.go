package embed

import (
	"fmt"
	"os"

	"github.com/sluice-streams/sluice/internal/dirlock"
)

// lockDataDir creates dir if needed and locks it for this process (package
// internal/dirlock), so a second role started on it fails with one line
// naming the process that holds it. The caller releases the lock when it
// stops; the kernel releases it if the process dies.
func lockDataDir(dir string) (*dirlock.Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	return dirlock.Acquire(dir)
}
