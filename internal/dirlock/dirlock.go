package dirlock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// FileName is the lock file's name in a locked directory.
const FileName = "LOCK"

// maxPIDBytes bounds what is read of a lock file for the holder's pid;
// a pid is at most 10 digits.
const maxPIDBytes = 32

// ErrLocked: another open file (in practice, another process) holds the
// directory's lock. The error Acquire returns is a *LockedError.
var ErrLocked = errors.New("dirlock: directory in use")

// LockedError is Acquire's error for a directory another holder has
// locked. It matches ErrLocked with errors.Is.
type LockedError struct {
	Dir  string // the directory
	Path string // its lock file
	PID  int    // the holder's pid as its lock file says, 0 if unknown
}

func (e *LockedError) Error() string {
	holder := "an unknown process"
	if e.PID > 0 {
		holder = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("data directory %s is in use by %s (lock file %s); stop that process first", e.Dir, holder, e.Path)
}

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Lock is a held directory lock.
type Lock struct {
	dir string
	f   *os.File
}

// Acquire locks dir, which must exist, for this process and writes the
// process id into dir/LOCK. It never waits: if the lock is held it returns
// a *LockedError (errors.Is ErrLocked) naming the holder's pid.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("dirlock: open lock file: %w", err)
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockedError{Dir: dir, Path: path, PID: readPID(f)}
		}
		return nil, fmt.Errorf("dirlock: lock %s: %w", path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("dirlock: write pid into %s: %w", path, err)
	}
	if _, err := f.WriteAt(pid, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("dirlock: write pid into %s: %w", path, err)
	}
	return &Lock{dir: dir, f: f}, nil
}

// flock is flock(2), retried when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// readPID returns the pid written in a lock file, 0 if there is none.
func readPID(f *os.File) int {
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, 0, maxPIDBytes), maxPIDBytes))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Dir returns the locked directory.
func (l *Lock) Dir() string { return l.dir }

// Release empties the lock file and releases the lock. A second Release
// returns nil.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	// Empty first, while still holding the lock, so the next holder's
	// refusals never name this process.
	terr := f.Truncate(0)
	if err := f.Close(); err != nil {
		return fmt.Errorf("dirlock: release %s: %w", l.dir, err)
	}
	if terr != nil {
		return fmt.Errorf("dirlock: release %s: empty lock file: %w", l.dir, terr)
	}
	return nil
}
