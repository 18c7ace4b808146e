package container

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// partBuffer is memory a tier-2 chunk part is loaded into. It counts its
// holders (cache.Ref): the cache while the part is cached, and each read
// result that returned a slice of it until its Release. When the count
// falls to zero the buffer goes back to its pool for the next load, which
// then needs no fresh memory: a catch-up reader's loads otherwise spend
// as long faulting in and zeroing new memory as reading the file.
type partBuffer struct {
	pool *PartPool
	buf  []byte
	refs atomic.Int32
}

func (b *partBuffer) Retain() {
	if b.refs.Add(1) <= 1 {
		panic("container: retained a chunk part buffer that nobody held")
	}
}

func (b *partBuffer) Release() {
	switch n := b.refs.Add(-1); {
	case n == 0:
		b.pool.put(b)
	case n < 0:
		panic("container: a chunk part buffer released more often than held")
	}
}

// PartPool keeps up to max buffers no part holds, for reuse. Containers
// may share one (Config.Parts), which bounds the idle memory per node.
type PartPool struct {
	max  int
	made atomic.Int64 // buffers allocated
	mu   struct {
		sync.Mutex
		free []*partBuffer
	}
}

// DefaultPartPoolBuffers is how many idle buffers a pool keeps: the parts
// catch-up readers have in flight (the ones read and read ahead) turn over
// through them. At 8 MiB parts, at most about 34 MiB stay idle.
const DefaultPartPoolBuffers = 2 * readAheadSlots

// NewPartPool makes a pool that keeps up to maxBuffers idle buffers
// (DefaultPartPoolBuffers if not positive).
func NewPartPool(maxBuffers int) *PartPool {
	if maxBuffers <= 0 {
		maxBuffers = DefaultPartPoolBuffers
	}
	return &PartPool{max: maxBuffers}
}

// partPoolMaxBuffer is the largest buffer kept: parts are about
// tiering's DefaultPartBytes (MaxReadSize) of events plus their records'
// framing; larger ones (a chunk of one huge block, or read whole) are
// left to the garbage collector.
const partPoolMaxBuffer = 2 * MaxReadSize

// get returns a buffer of at least n bytes, held once by the caller.
func (p *PartPool) get(n int) *partBuffer {
	p.mu.Lock()
	for i, b := range p.mu.free {
		if cap(b.buf) >= n {
			last := len(p.mu.free) - 1
			p.mu.free[i], p.mu.free[last] = p.mu.free[last], nil
			p.mu.free = p.mu.free[:last]
			p.mu.Unlock()
			b.buf = b.buf[:n]
			b.refs.Store(1)
			return b
		}
	}
	p.mu.Unlock()
	// Room for parts a little larger than this one (one more event).
	p.made.Add(1)
	b := &partBuffer{pool: p, buf: make([]byte, n, n+n/16)}
	adviseHugePages(b.buf[:cap(b.buf)])
	b.refs.Store(1)
	return b
}

// Made is how many buffers the pool has allocated: loads beyond it reused
// one.
func (p *PartPool) Made() int64 { return p.made.Load() }

func (p *PartPool) put(b *partBuffer) {
	if cap(b.buf) > partPoolMaxBuffer {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.mu.free) < p.max {
		p.mu.free = append(p.mu.free, b)
	}
}

// hugePage is the size of an x86-64 or arm64 transparent huge page.
const hugePage = 2 << 20

// adviseHugePages asks the kernel to back the whole 2 MiB pages inside
// buf, memory not yet touched, with transparent huge pages
// (madvise(MADV_HUGEPAGE); the kernel's default policy, "madvise", uses
// them only where asked). A part buffer is filled whole at once by the
// file's read, so the fault of each 2 MiB page replaces 512 faults of 4
// KiB pages: the first reads after a start, whose buffers are all new
// memory, measured 73-75 % of the disk without and 81-84 % with
// (docs/BENCHMARKS.md). It is advice only: where the kernel declines (no
// huge page free, THP disabled) the memory is ordinary.
func adviseHugePages(buf []byte) {
	if len(buf) < hugePage {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	skip := int((base+hugePage-1)&^(hugePage-1) - base)
	if n := (len(buf) - skip) &^ (hugePage - 1); skip < len(buf) && n > 0 {
		_ = unix.Madvise(buf[skip:skip+n], unix.MADV_HUGEPAGE)
	}
}
