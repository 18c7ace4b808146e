package noderole

import (
	"os"
	"runtime"
)

// SyncProcs is how many Ps (GOMAXPROCS) a node process runs beyond the
// runtime's default (the CPUs, or the container's CPU limit).
//
// A goroutine in a system call keeps its P until the runtime's monitor
// takes it back, at least one of the monitor's ticks later (20 µs and up),
// and only if other goroutines wait. A node spends much of its time in
// the log's fdatasync calls, each a few hundred microseconds, back to
// back under load: on a two-CPU machine one of the two Ps sat in a sync
// most of the time, and every other goroutine of the node (the
// connections' readers and writers, the flusher, tiering) queued for the
// other. Measured (BenchmarkWireAppendLatency10MBps, the wire's steps
// split, docs/BENCHMARKS.md "One P more than the CPUs"): the ack's trip
// from the node's write to the client's read fell from 76-94 µs to 47-52
// µs at p50 with one P more, and unpaced 4-writer writes through the CLI
// from 387-530 to 494-590 MB/s. The threads still share the CPUs; the
// extra P only lets a goroutine run while another waits in a sync.
const SyncProcs = 1

// ProcsSource says where the GOMAXPROCS ApplyProcs leaves comes from, for
// the log.
type ProcsSource string

const (
	// ProcsEnv: GOMAXPROCS in the environment, which the runtime applied
	// at start; ApplyProcs leaves it.
	ProcsEnv ProcsSource = "GOMAXPROCS"
	// ProcsDerived: the runtime's default and SyncProcs.
	ProcsDerived ProcsSource = "CPUs + 1 for the log's syncs"
)

// procsFor returns the Ps a node process should run, given GOMAXPROCS
// from the environment (env) and the runtime's value: the one env gave
// it, or its default.
func procsFor(env string, runtimeProcs int) (int, ProcsSource) {
	if env != "" {
		return runtimeProcs, ProcsEnv
	}
	return runtimeProcs + SyncProcs, ProcsDerived
}

// ApplyProcs sets the process's GOMAXPROCS for a node role and returns it
// and where it comes from: GOMAXPROCS if the environment sets it, else
// the runtime's default plus SyncProcs, whatever was set before (so a
// second call, as from tests that run several roles in one process,
// changes nothing). Setting it ends the runtime's own updates of
// GOMAXPROCS when a container's CPU limit changes. Like ApplyMemoryLimit,
// call it from the program that runs the role.
func ApplyProcs() (int, ProcsSource) {
	env := os.Getenv("GOMAXPROCS")
	if env == "" {
		runtime.SetDefaultGOMAXPROCS()
	}
	n, from := procsFor(env, runtime.GOMAXPROCS(0))
	if from == ProcsDerived {
		runtime.GOMAXPROCS(n)
	}
	return n, from
}
