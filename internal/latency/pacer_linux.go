package latency

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerFile is a one-shot CLOCK_MONOTONIC timerfd, non-blocking, read
// through an os.File so that a wait parks the goroutine in the runtime's
// poller instead of blocking a thread.
type timerFile struct {
	f   *os.File
	fd  int
	buf [8]byte
}

func newTimerFile() (*timerFile, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("latency: timerfd_create: %w", err)
	}
	return &timerFile{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}, nil
}

// wait arms the timer to fire once after d and reads its expiration.
func (t *timerFile) wait(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(t.fd, 0, &spec, nil); err != nil {
		return fmt.Errorf("latency: timerfd_settime: %w", err)
	}
	if _, err := t.f.Read(t.buf[:]); err != nil {
		return fmt.Errorf("latency: reading the timerfd: %w", err)
	}
	return nil
}

func (t *timerFile) close() error { return t.f.Close() }
