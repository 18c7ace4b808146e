package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/dirlock"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/node/rates"
	"github.com/sluice-streams/sluice/node/tiering"
	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// Defaults for Config.
const (
	DefaultContainers = 4
	DefaultCacheSize  = 256 << 20
)

// Config configures a node.
type Config struct {
	// Dir holds one directory per hosted container.
	Dir string
	// Containers is the number of containers in the whole system (every
	// node must agree on it: it decides where a segment lives).
	Containers int
	// Hosted lists the containers this node opens under epoch 0; all of
	// them if nil (standalone). Cluster mode passes an empty, non-nil
	// slice and adds containers with Host as the assignment gives them.
	Hosted []int
	// CacheSize bounds the block cache shared by the containers.
	CacheSize int64
	// WALFileSize, WALPreallocate and CheckpointBytes are passed to every
	// container.
	WALFileSize     int64
	WALPreallocate  bool
	CheckpointBytes int64
	// Reclaim frees the files the containers' logs remove in the
	// background (package reclaim); nil unlinks them. The caller owns it.
	Reclaim *reclaim.Reclaimer
	// FS is the filesystem (vfs.Default if nil).
	FS vfs.FS
	// Logger is handed to the containers and storage writers (discarded
	// if nil).
	Logger logrus.FieldLogger
	// Tier2 is the long-term storage; nil means none (the logs keep
	// everything). With it, each hosted container gets a storage writer
	// (package node/tiering) that tiers by TierPolicy.
	Tier2 tier2.Storage
	// TierPolicy is the storage writers' policy; a zero PressureBytes
	// becomes half of a container's share of the cache.
	TierPolicy      tiering.Policy
	TierCompression seqfile.Compression
	// MaxUntieredBytes bounds each container's bytes waiting for tier 2
	// (container.Config.MaxUntieredBytes); DefaultMaxUntieredBytes if 0
	// with Tier2 set, unbounded if negative.
	MaxUntieredBytes int64
	// Rates are the windows over which each segment's append rates are
	// measured for auto-scaling (package node/rates); rates.DefaultConfig()
	// if zero.
	Rates rates.Config
}

// DefaultMaxUntieredBytes is a container's default bound on the bytes
// waiting for tier 2 before appends are refused.
const DefaultMaxUntieredBytes = 1 << 30

// Node hosts containers. The set it hosts may change at run time (Host,
// Unhost): in cluster mode the node starts with none and follows the
// published assignment (package node/membership).
type Node struct {
	cfg   Config
	cache *cache.Cache
	parts *container.PartPool // shared by the containers, like the cache

	// mu serialises changes of the routing table (Host, Unhost, Close)
	// and guards closed and lock; the table itself is read without it.
	mu     sync.Mutex
	closed bool
	lock   *dirlock.Lock  // on cfg.Dir; Close releases it
	busyWG sync.WaitGroup // Host and Unhost calls opening or closing a container, for Close
	routes atomic.Pointer[routes]

	tiersMu sync.Mutex
	tiers   map[int]*tiering.Writer // the storage writer of each open container
}

// routes is an immutable routing table, replaced whole on every change so
// that ContainerFor takes no lock.
type routes struct {
	hosted map[int]*container.Container
	// busy holds containers being opened or closed: Host and Unhost
	// refuse them, and ContainerFor answers as busyState.routeErr says.
	busy map[int]busyState
}

// busyState is what a container in routes.busy is doing.
type busyState int

const (
	// opening: Host is opening the container; it is served here once
	// open, so clients retry here (protocol.ErrContainerUnavailable).
	opening busyState = iota + 1
	// closing: Unhost fenced the container and is closing it; this node
	// has given it up, so clients ask the controller for its owner
	// (protocol.ErrWrongHost), as they do once it is gone.
	closing
)

func (b busyState) String() string {
	switch b {
	case opening:
		return "opening"
	case closing:
		return "closing"
	}
	return fmt.Sprintf("busyState(%d)", int(b))
}

// routeErr is the sentinel a client's request for a container in state b
// gets.
func (b busyState) routeErr() error {
	if b == closing {
		return protocol.ErrWrongHost
	}
	return protocol.ErrContainerUnavailable
}

func (r *routes) clone() *routes {
	out := &routes{hosted: make(map[int]*container.Container, len(r.hosted)+1), busy: make(map[int]busyState, len(r.busy)+1)}
	for id, c := range r.hosted {
		out.hosted[id] = c
	}
	for id, s := range r.busy {
		out.busy[id] = s
	}
	return out
}

// Open locks cfg.Dir for this process (package internal/dirlock: a second
// node on a directory in use fails with an error that matches
// dirlock.ErrLocked and names the holder's pid) and opens (recovering as
// needed) every container of cfg.Hosted (all of them if nil, under epoch
// 0: standalone). If one fails to open, the others are closed, the lock is
// released and the error names it.
func Open(cfg Config) (*Node, error) {
	if cfg.Containers <= 0 {
		cfg.Containers = DefaultContainers
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	cfg.Logger = logs.OrDiscard(cfg.Logger)
	if cfg.Hosted == nil {
		for i := 0; i < cfg.Containers; i++ {
			cfg.Hosted = append(cfg.Hosted, i)
		}
	}
	if cfg.Rates == (rates.Config{}) {
		cfg.Rates = rates.DefaultConfig()
	}
	if err := cfg.Rates.Validate(); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	fs := cfg.FS
	if fs == nil {
		fs = vfs.Default
	}
	if err := fs.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("node: create data directory %s: %w", cfg.Dir, err)
	}
	lock, err := dirlock.Acquire(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	if cfg.Tier2 != nil && cfg.MaxUntieredBytes == 0 {
		cfg.MaxUntieredBytes = DefaultMaxUntieredBytes
	}
	n := &Node{cfg: cfg, lock: lock, cache: cache.New(cfg.CacheSize), parts: container.NewPartPool(partPoolBuffers(cfg.CacheSize)), tiers: map[int]*tiering.Writer{}}
	for _, id := range cfg.Hosted {
		if err := n.checkID(id); err != nil {
			lock.Release()
			return nil, err
		}
	}
	var (
		mu     sync.Mutex
		errs   []error
		wg     sync.WaitGroup
		opened = map[int]*container.Container{}
	)
	for _, id := range cfg.Hosted {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			c, err := n.openContainer(id, 0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			opened[id] = c
		}(id)
	}
	wg.Wait()
	n.routes.Store(&routes{hosted: opened, busy: map[int]busyState{}})
	if len(errs) > 0 {
		n.Close()
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		if len(errs) == 1 {
			return nil, fmt.Errorf("node: %w", errs[0])
		}
		for _, err := range errs[1:] {
			cfg.Logger.WithError(err).Error("node: container failed to open")
		}
		return nil, fmt.Errorf("node: %d of %d containers failed to open; the first: %w", len(errs), len(cfg.Hosted), errs[0])
	}
	return n, nil
}

func (n *Node) checkID(id int) error {
	if id < 0 || id >= n.cfg.Containers {
		return fmt.Errorf("node: container %d is outside [0, %d)", id, n.cfg.Containers)
	}
	return nil
}

// ContainerDir is the directory of container id under the node's data
// directory.
func (n *Node) ContainerDir(id int) string {
	return filepath.Join(n.cfg.Dir, fmt.Sprintf("container-%04d", id))
}

// PartPool is the pool the node's containers load tier-2 chunk parts
// into.
func (n *Node) PartPool() *container.PartPool { return n.parts }

func (n *Node) containerConfig(id int, epoch int64) container.Config {
	cfg := container.Config{
		ID: id, Dir: n.ContainerDir(id), FS: n.cfg.FS, Epoch: epoch,
		WALFileSize: n.cfg.WALFileSize, WALPreallocate: n.cfg.WALPreallocate, CheckpointBytes: n.cfg.CheckpointBytes,
		Reclaim: n.cfg.Reclaim,
		Cache:   n.cache, Parts: n.parts, Logger: n.cfg.Logger, Rates: &n.cfg.Rates,
	}
	if n.cfg.Tier2 != nil {
		cfg.Chunks = tiering.Reader{Store: n.cfg.Tier2}
		cfg.MaxUntieredBytes = max(n.cfg.MaxUntieredBytes, 0)
	}
	return cfg
}

// openContainer opens a container and starts its storage writer. A
// container whose directory holds no state of its own (the node's disk
// was lost) is rebuilt from tier 2 first (restore.go).
func (n *Node) openContainer(id int, epoch int64) (*container.Container, error) {
	c, err := n.restoreContainer(id, epoch, -1)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if c, err = container.Open(n.containerConfig(id, epoch)); err != nil {
			return nil, err
		}
	}
	n.startTiering(c)
	return c, nil
}

// startTiering starts a container's storage writer, if the node has tier 2.
func (n *Node) startTiering(c *container.Container) {
	if n.cfg.Tier2 == nil {
		return
	}
	policy := n.cfg.TierPolicy
	if policy.PressureBytes == 0 {
		// Past half a container's share of the cache, untiered blocks
		// start to fall out of it and catch-up reads go to the log.
		policy.PressureBytes = n.cfg.CacheSize / int64(2*n.cfg.Containers)
	}
	w := tiering.New(tiering.Config{Container: c, Store: n.cfg.Tier2, Policy: policy,
		Compression: n.cfg.TierCompression, Logger: n.cfg.Logger})
	n.tiersMu.Lock()
	n.tiers[c.ID()] = w
	n.tiersMu.Unlock()
	w.Start()
}

// closeContainer stops a container's storage writer and closes it.
func (n *Node) closeContainer(c *container.Container) error {
	n.tiersMu.Lock()
	w := n.tiers[c.ID()]
	delete(n.tiers, c.ID())
	n.tiersMu.Unlock()
	if w != nil {
		w.Stop()
	}
	return c.Close()
}

// FlushTier has every storage writer tier what is durable now (see
// tiering.Writer.Flush), one container after another, until done or ctx
// ends; it returns the first failure.
func (n *Node) FlushTier(ctx context.Context) error {
	var errs []error
	for _, c := range n.Containers() {
		if w := n.TierWriter(c.ID()); w != nil {
			if err := w.Flush(ctx); err != nil {
				errs = append(errs, fmt.Errorf("container %d: %w", c.ID(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// HasTier2 reports whether the node has tier 2 (and so can hand
// containers over).
func (n *Node) HasTier2() bool { return n.cfg.Tier2 != nil }

// TierWriter returns the storage writer of container id, nil if the
// container is not open or the node has no tier 2.
func (n *Node) TierWriter(id int) *tiering.Writer {
	n.tiersMu.Lock()
	defer n.tiersMu.Unlock()
	return n.tiers[id]
}

// TierStats returns each open container's storage writer counters.
func (n *Node) TierStats() map[int]tiering.Stats {
	n.tiersMu.Lock()
	ws := make(map[int]*tiering.Writer, len(n.tiers))
	for id, w := range n.tiers {
		ws[id] = w
	}
	n.tiersMu.Unlock()
	out := make(map[int]tiering.Stats, len(ws))
	for id, w := range ws {
		out[id] = w.Stats()
	}
	return out
}

// RatesConfig is the windows over which segments' append rates are
// measured (Config.Rates with its default applied).
func (n *Node) RatesConfig() rates.Config { return n.cfg.Rates }

// NumContainers is the number of containers in the whole system.
func (n *Node) NumContainers() int { return n.cfg.Containers }

// ContainerFor returns the container that owns a segment, or an error
// wrapping protocol.ErrWrongHost if this node does not host it (or hosts it
// fenced, or is closing it: the assignment has moved on), or
// protocol.ErrContainerUnavailable while it is being opened.
func (n *Node) ContainerFor(segment string) (*container.Container, error) {
	id := protocol.ContainerOf(segment, n.cfg.Containers)
	r := n.routes.Load()
	if c, ok := r.hosted[id]; ok && !c.Fenced() {
		return c, nil
	}
	if what, ok := r.busy[id]; ok {
		return nil, fmt.Errorf("node: segment %q belongs to container %d: %w: %v", segment, id, what.routeErr(), what)
	}
	return nil, fmt.Errorf("node: segment %q belongs to container %d: %w", segment, id, protocol.ErrWrongHost)
}

// Host opens container id under epoch, recovering it from its directory,
// and serves it once open (meanwhile ContainerFor answers
// protocol.ErrContainerUnavailable for it). The container refuses to open if
// its directory records a higher epoch (container.ErrStaleEpoch), and
// records epoch there before replaying its log. Hosting a container already
// hosted under the same epoch and not fenced does nothing; under another
// epoch, or fenced, it is an error: Unhost it first.
func (n *Node) Host(id int, epoch int64) error { return n.HostFrom(id, epoch, 0) }

// HostFrom is Host for a container handed over to this node: unless its
// directory already holds epoch, it is built from the hand-over its
// previous owner left in tier 2 under fromEpoch (see Release). fromEpoch
// 0 is Host.
func (n *Node) HostFrom(id int, epoch, fromEpoch int64) error {
	if err := n.checkID(id); err != nil {
		return err
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("node: host container %d: %w: node closed", id, protocol.ErrContainerUnavailable)
	}
	r := n.routes.Load()
	if c, ok := r.hosted[id]; ok {
		n.mu.Unlock()
		if c.Epoch() == epoch && !c.Fenced() {
			return nil
		}
		return fmt.Errorf("node: host container %d under epoch %d: already hosted under epoch %d (fenced: %v); unhost it first",
			id, epoch, c.Epoch(), c.Fenced())
	}
	if what, ok := r.busy[id]; ok {
		n.mu.Unlock()
		return fmt.Errorf("node: host container %d: %w: %v", id, protocol.ErrContainerUnavailable, what)
	}
	r = r.clone()
	r.busy[id] = opening
	n.routes.Store(r)
	n.busyWG.Add(1)
	n.mu.Unlock()
	defer n.busyWG.Done()

	var c *container.Container
	var err error
	if fromEpoch > 0 {
		c, err = n.importContainer(id, epoch, fromEpoch)
	} else {
		c, err = n.openContainer(id, epoch)
	}

	n.mu.Lock()
	defer n.mu.Unlock()
	r = n.routes.Load().clone()
	delete(r.busy, id)
	if err == nil && n.closed {
		n.closeContainer(c)
		err = fmt.Errorf("%w: node closed", protocol.ErrContainerUnavailable)
	}
	if err == nil {
		r.hosted[id] = c
	}
	n.routes.Store(r)
	if err != nil {
		return fmt.Errorf("node: host container %d under epoch %d: %w", id, epoch, err)
	}
	n.cfg.Logger.WithFields(logrus.Fields{"container": id, "epoch": epoch}).Info("node: hosting container")
	return nil
}

// Unhost fences container id (its changes fail with protocol.ErrWrongHost
// from now on), stops routing to it and closes it (appends in flight
// complete, a last checkpoint is written). While it closes, ContainerFor
// answers ErrWrongHost for it too, and Host refuses it. Unhosting a
// container that is not hosted does nothing.
func (n *Node) Unhost(id int) error {
	n.mu.Lock()
	if n.closed { // Close closes it
		n.mu.Unlock()
		return nil
	}
	r := n.routes.Load()
	c, ok := r.hosted[id]
	if !ok {
		n.mu.Unlock()
		if what, busy := r.busy[id]; busy {
			return fmt.Errorf("node: unhost container %d: %w: %v", id, protocol.ErrContainerUnavailable, what)
		}
		return nil
	}
	c.Fence()
	r = r.clone()
	delete(r.hosted, id)
	r.busy[id] = closing
	n.routes.Store(r)
	n.busyWG.Add(1)
	n.mu.Unlock()
	defer n.busyWG.Done()

	err := n.closeContainer(c)

	n.mu.Lock()
	r = n.routes.Load().clone()
	delete(r.busy, id)
	n.routes.Store(r)
	n.mu.Unlock()
	if err != nil {
		return fmt.Errorf("node: unhost container %d: %w", id, err)
	}
	n.cfg.Logger.WithFields(logrus.Fields{"container": id, "epoch": c.Epoch()}).Info("node: container unhosted")
	return nil
}

// Fence fences container id, if hosted: from now on its changes fail with
// protocol.ErrWrongHost and ContainerFor answers ErrWrongHost for it. It
// does no I/O; Unhost closes it. It reports whether the container was
// hosted.
func (n *Node) Fence(id int) bool {
	c, ok := n.routes.Load().hosted[id]
	if ok {
		c.Fence()
	}
	return ok
}

// FenceAll fences every hosted container (see Fence): the node serves no
// more changes until containers are hosted again.
func (n *Node) FenceAll() {
	for _, c := range n.routes.Load().hosted {
		c.Fence()
	}
}

// Hosting is a container the node hosts, its epoch and whether it is
// fenced.
type Hosting struct {
	ID     int
	Epoch  int64
	Fenced bool
}

// Hosted returns the containers the node hosts, by id (not those being
// opened or closed).
func (n *Node) Hosted() []Hosting {
	var out []Hosting
	for _, c := range n.Containers() {
		out = append(out, Hosting{ID: c.ID(), Epoch: c.Epoch(), Fenced: c.Fenced()})
	}
	return out
}

// Containers returns the hosted containers, by id.
func (n *Node) Containers() []*container.Container {
	r := n.routes.Load()
	out := make([]*container.Container, 0, len(r.hosted))
	for _, c := range r.hosted {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// Cache is the node's block cache.
func (n *Node) Cache() *cache.Cache { return n.cache }

// Close closes every container, each writing a last checkpoint, after
// waiting for containers being opened (Host) or closed (Unhost), then
// releases the data directory's lock. A second Close closes nothing.
func (n *Node) Close() error {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	n.busyWG.Wait()
	n.mu.Lock()
	cs := n.Containers()
	n.routes.Store(&routes{hosted: map[int]*container.Container{}, busy: n.routes.Load().busy})
	n.mu.Unlock()
	var errs []error
	for _, c := range cs {
		if err := n.closeContainer(c); err != nil {
			errs = append(errs, err)
		}
	}
	n.mu.Lock()
	lock := n.lock
	n.lock = nil
	n.mu.Unlock()
	if err := lock.Release(); err != nil {
		errs = append(errs, fmt.Errorf("node: %w", err))
	}
	return errors.Join(errs...)
}
