//go:build !linux

package latency

import (
	"errors"
	"time"
)

type timerFile struct{}

func newTimerFile() (*timerFile, error) { return nil, errors.New("latency: no fine timer here") }

func (*timerFile) wait(time.Duration) error { return nil }

func (*timerFile) close() error { return nil }
