package node

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/protocol"
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
	// Hosted lists the containers this node runs; all of them if nil.
	Hosted []int
	// CacheSize bounds the block cache shared by the containers.
	CacheSize int64
	// WALFileSize, WALPreallocate and CheckpointBytes are passed to every
	// container.
	WALFileSize     int64
	WALPreallocate  bool
	CheckpointBytes int64
	// FS is the filesystem (vfs.Default if nil).
	FS     vfs.FS
	Logger logrus.FieldLogger
}

// Node hosts containers.
type Node struct {
	cfg        Config
	cache      *cache.Cache
	containers map[int]*container.Container
}

// Open opens (recovering as needed) every hosted container. If one fails
// to open, the others are closed and the error names it.
func Open(cfg Config) (*Node, error) {
	if cfg.Containers <= 0 {
		cfg.Containers = DefaultContainers
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.Logger == nil {
		cfg.Logger = logrus.StandardLogger()
	}
	if cfg.Hosted == nil {
		for i := 0; i < cfg.Containers; i++ {
			cfg.Hosted = append(cfg.Hosted, i)
		}
	}
	fs := cfg.FS
	if fs == nil {
		fs = vfs.Default
	}
	if err := fs.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("node: create data directory %s: %w", cfg.Dir, err)
	}
	n := &Node{cfg: cfg, cache: cache.New(cfg.CacheSize), containers: map[int]*container.Container{}}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, id := range cfg.Hosted {
		if id < 0 || id >= cfg.Containers {
			return nil, fmt.Errorf("node: container %d is outside [0, %d)", id, cfg.Containers)
		}
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			c, err := container.Open(container.Config{
				ID: id, Dir: filepath.Join(cfg.Dir, fmt.Sprintf("container-%04d", id)), FS: cfg.FS,
				WALFileSize: cfg.WALFileSize, WALPreallocate: cfg.WALPreallocate, CheckpointBytes: cfg.CheckpointBytes,
				Cache: n.cache, Logger: cfg.Logger,
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			n.containers[id] = c
		}(id)
	}
	wg.Wait()
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

// ContainerFor returns the container that owns a segment, or an error
// wrapping protocol.ErrWrongHost if this node does not host it.
func (n *Node) ContainerFor(segment string) (*container.Container, error) {
	id := protocol.ContainerOf(segment, n.cfg.Containers)
	c, ok := n.containers[id]
	if !ok {
		return nil, fmt.Errorf("node: segment %q belongs to container %d: %w", segment, id, protocol.ErrWrongHost)
	}
	return c, nil
}

// Containers returns the hosted containers, by id.
func (n *Node) Containers() []*container.Container {
	out := make([]*container.Container, 0, len(n.containers))
	for _, c := range n.containers {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// Cache is the node's block cache.
func (n *Node) Cache() *cache.Cache { return n.cache }

// Close closes every container, each writing a last checkpoint.
func (n *Node) Close() error {
	var errs []error
	for _, c := range n.Containers() {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
