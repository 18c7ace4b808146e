package noderole

import (
	"os"
	"runtime/debug"

	"github.com/sluice-streams/sluice/node"
)

// The node's memory is its block cache and a margin for the rest; the Go
// runtime is told that sum as its soft memory limit
// (runtime/debug.SetMemoryLimit), so that the garbage collector runs
// before the heap's garbage takes it past the sum instead of letting the
// heap grow to twice what is live (GOGC=100): with a 256 MiB cache full,
// that was 590-660 MiB of RSS for under 300 MB live.

// MemoryMargin is the Go memory a node holds beside its cache (80 MiB):
// the WAL's write slabs (28-32 MiB measured under load for four
// containers; node/wal keeps up to 32 idle 1 MiB slabs per log), the idle
// buffers of the catch-up part pool (at most an eighth of the cache, or
// two buffers, package node), request bytes outside the cache (an append
// is cached once it is logged, so bytes waiting for their fsync are
// mostly the cache's; those still being read are not), tiering's reads,
// goroutine stacks and the runtime's own. The limit does not cover memory
// outside Go's (the binary's code and data, about 16-20 MB of RSS): the
// process's RSS measured the cache plus 94-116 MiB under heavy writes.
// Request memory held outside the cache beyond about 32 MiB (many peers
// stalled mid-frame) goes past the limit: a node that must stay within
// the cache plus 128 MiB under any load sets --request-memory to 32 MiB.
const MemoryMargin = 80 << 20

// GoMemoryLimit is the Go soft memory limit for a process running this
// node role: Config.MemoryLimit if positive, else CacheSize plus
// MemoryMargin.
func (c Config) GoMemoryLimit() int64 {
	if c.MemoryLimit > 0 {
		return c.MemoryLimit
	}
	cache := c.CacheSize
	if cache <= 0 {
		cache = node.DefaultCacheSize
	}
	return cache + MemoryMargin
}

// MemoryLimitSource says where the limit ApplyMemoryLimit sets comes
// from, for the log.
type MemoryLimitSource string

const (
	// MemoryLimitFlag: Config.MemoryLimit (`--memory-limit`).
	MemoryLimitFlag MemoryLimitSource = "--memory-limit"
	// MemoryLimitEnv: GOMEMLIMIT in the environment, which the runtime
	// applied at start; ApplyMemoryLimit leaves it.
	MemoryLimitEnv MemoryLimitSource = "GOMEMLIMIT"
	// MemoryLimitDerived: the cache and MemoryMargin.
	MemoryLimitDerived MemoryLimitSource = "cache + margin"
)

// ApplyMemoryLimit sets the process's Go soft memory limit for a node
// role of cfg and returns the limit in force and where it comes from:
// Config.MemoryLimit if positive; else GOMEMLIMIT, if the environment
// sets it (GOMEMLIMIT=off turns the limit off); else cfg.GoMemoryLimit().
// The limit is the process's: call it once, from the program that runs
// the role (`sluice node`, `sluice standalone`), not from Start, which
// tests call for many nodes in one process.
func ApplyMemoryLimit(cfg Config) (int64, MemoryLimitSource) {
	if cfg.MemoryLimit <= 0 {
		if os.Getenv("GOMEMLIMIT") != "" {
			return debug.SetMemoryLimit(-1), MemoryLimitEnv
		}
	}
	limit, from := cfg.GoMemoryLimit(), MemoryLimitDerived
	if cfg.MemoryLimit > 0 {
		from = MemoryLimitFlag
	}
	debug.SetMemoryLimit(limit)
	return limit, from
}
