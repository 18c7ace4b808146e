package cpustat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Path is the kernel's CPU accounting file.
const Path = "/proc/stat"

// Times is one sample of the CPU time counters of all CPUs together, in
// the kernel's clock ticks (USER_HZ). Guest time is already counted in
// User and Nice by the kernel, so it has no field of its own.
type Times struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Total is the sum of the counters: all CPU time the sample covers.
func (t Times) Total() uint64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.IRQ + t.SoftIRQ + t.Steal
}

// busy is the time spent running work.
func (t Times) busy() uint64 { return t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ }

// Read samples Path.
func Read() (Times, error) {
	data, err := os.ReadFile(Path)
	if err != nil {
		return Times{}, fmt.Errorf("cpustat: %w", err)
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	t, err := Parse(string(line))
	if err != nil {
		return Times{}, fmt.Errorf("cpustat: %s: %w", Path, err)
	}
	return t, nil
}

// ErrNotCPULine is returned by Parse for a line that is not /proc/stat's
// "cpu" line.
var ErrNotCPULine = errors.New("not the aggregate \"cpu\" line")

// Parse reads /proc/stat's first line, "cpu  USER NICE SYSTEM IDLE IOWAIT
// IRQ SOFTIRQ STEAL [GUEST GUEST_NICE]". Kernels before 2.6.11 have no
// steal field; it is then 0. At least the first four fields are needed.
func Parse(line string) (Times, error) {
	f := bytes.Fields([]byte(line))
	if len(f) == 0 || string(f[0]) != "cpu" {
		return Times{}, fmt.Errorf("%w: %.40q", ErrNotCPULine, line)
	}
	f = f[1:]
	if len(f) < 4 {
		return Times{}, fmt.Errorf("%d counters in %.60q, want at least 4", len(f), line)
	}
	var v [8]uint64
	for i := 0; i < len(v) && i < len(f); i++ {
		n, err := strconv.ParseUint(string(f[i]), 10, 64)
		if err != nil {
			return Times{}, fmt.Errorf("counter %d of %.60q: %w", i+1, line, err)
		}
		v[i] = n
	}
	return Times{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
}

// Shares are fractions (0 to 1) of the CPU time between two samples; they
// add up to 1 when any time passed, and are all 0 when none did.
type Shares struct {
	Busy   float64 // running work: user, nice, system, interrupts
	Idle   float64
	IOWait float64 // idle with I/O outstanding
	Steal  float64 // taken by the host (virtual machines)
}

// Between gives the shares of the CPU time from sample a to a later
// sample b. A counter that went backwards (it does not, but a hot-plugged
// CPU's counters leave the sum) counts as 0.
func Between(a, b Times) Shares {
	d := func(x, y uint64) float64 {
		if y < x {
			return 0
		}
		return float64(y - x)
	}
	busy, idle, iowait, steal := d(a.busy(), b.busy()), d(a.Idle, b.Idle), d(a.IOWait, b.IOWait), d(a.Steal, b.Steal)
	total := busy + idle + iowait + steal
	if total == 0 {
		return Shares{}
	}
	return Shares{Busy: busy / total, Idle: idle / total, IOWait: iowait / total, Steal: steal / total}
}
