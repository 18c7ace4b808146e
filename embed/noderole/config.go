package noderole

import (
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/rates"
	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/node/tiering"
	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/tier2/backend"
)

// ErrInvalidConfig: a Config (or a config of package embed) holds a value
// out of its range. Every Validate error matches it (errors.Is) and says
// which field and what range.
var ErrInvalidConfig = errors.New("invalid config")

// ConfigError is a Validate error: its text names the field and its
// allowed range; it matches ErrInvalidConfig and what Err matches.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string   { return e.Err.Error() }
func (e *ConfigError) Unwrap() []error { return []error{ErrInvalidConfig, e.Err} }

// invalidf returns a ConfigError of the formatted text.
func invalidf(format string, args ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, args...)}
}

// invalid returns err (a check's own error) as a ConfigError, or nil.
func invalid(err error) error {
	if err == nil {
		return nil
	}
	return &ConfigError{Err: err}
}

// Defaults of Config (DefaultConfig), the flags' defaults of `sluice node`.
const (
	DefaultDataDir          = "./.data/node"
	DefaultListen           = "127.0.0.1:12345"
	DefaultWALFileSize      = 64 << 20
	DefaultCheckpointBytes  = 64 << 20
	DefaultZKRoot           = "/sluice"
	DefaultZKSessionTimeout = 10 * time.Second
	DefaultShutdownFlush    = 10 * time.Second
)

// Config is the node role: everything `sluice node` sets from its flags.
type Config struct {
	// DataDir holds the node's WAL and metadata, and its lock,
	// DataDir/LOCK: one process at a time.
	DataDir string
	// Listen is the data-plane address; port 0 picks a free port, which
	// Node.Addr reports.
	Listen string
	// Containers is the number of segment containers in the whole system
	// (node.DefaultContainers if not positive, as node.Open does).
	Containers int
	// CacheSize is the read cache budget in bytes (node.DefaultCacheSize
	// if not positive).
	CacheSize int64
	// MemoryLimit is the Go soft memory limit of the process that runs
	// the role (`--memory-limit`), which ApplyMemoryLimit sets; 0 derives
	// it (GoMemoryLimit: CacheSize + MemoryMargin)
	// unless GOMEMLIMIT is set. Start does not apply it.
	MemoryLimit int64
	// WALFileSize is the size in bytes at which a WAL file is cut (the
	// WAL's default if 0).
	WALFileSize int64
	// WALPreallocate zero-fills the next WAL file ahead of time so that
	// appends are synced with fdatasync.
	WALPreallocate bool
	// CheckpointBytes is how much log a container writes between two
	// checkpoints of its metadata (the container's default if 0).
	CheckpointBytes int64
	// ReclaimRate is how many bytes a second the node gives back to the
	// filesystem of the log files and tier-2 chunks (of a local tier 2)
	// it removes (package reclaim: cut down 1 MiB at a time, each step
	// synced; chunks after fs.ReadGrace); 0 unlinks them at once.
	ReclaimRate int64
	// Tier is tier 2; off if Tier.URI is empty or "none".
	Tier TierConfig
	// Server holds the TCP server's connection and memory limits; zero
	// values take server's defaults.
	Server server.Options
	// Cluster is cluster mode: with ZooKeeper servers the node starts with
	// no container and hosts what the leader controller assigns it.
	Cluster ClusterConfig
	// RateWindows are the windows over which each segment's append rates
	// are averaged for auto-scaling (node/rates), shortest first:
	// rates.DefaultWindows (2, 5, 10, 20 min) for `sluice node`,
	// StandaloneRateWindows for the standalone; the zero value means the
	// default.
	RateWindows [rates.NumWindows]time.Duration
	// Logger; nothing is logged if nil (internal/logs). It is also the server's
	// logger unless Server.Logger is set.
	Logger logrus.FieldLogger
	// OnListen, if set, is called with the bound address once the node
	// serves, before it joins its cluster: `sluice node` prints the port
	// there, so scripts see it even while ZooKeeper is slow.
	OnListen func(addr string)

	// Later features (security, metrics, heads) get their field group
	// here, each with its own Validate check and its place in Start.
}

// TierConfig is tier 2 and the policy of the storage writers.
type TierConfig struct {
	// URI is the tier-2 storage: a directory, file:///DIR,
	// hdfs://HOST:PORT/DIR or hdfs://NAMESERVICE/DIR (an HA nameservice
	// of $HADOOP_CONF_DIR's hdfs-site.xml); "" or "none" is no tier 2.
	URI string
	// MaxLag bounds how long an event waits for tier 2.
	MaxLag time.Duration
	// SegmentBytes tiers a segment once this much of it waits.
	SegmentBytes int64
	// ChunkBytes bounds a chunk.
	ChunkBytes int64
	// MaxUntiered bounds a container's bytes waiting for tier 2 before
	// appends are refused (node.DefaultMaxUntieredBytes if 0, unbounded
	// if negative).
	MaxUntiered int64
	// Compress writes zlib block-compressed chunks.
	Compress bool
	// ShutdownFlush bounds the tiering of what is durable when the node
	// stops (0: no time for it, logged as a warning; the logs keep all).
	ShutdownFlush time.Duration
}

// DefaultTierConfig returns tier 2 off, with the default policy.
func DefaultTierConfig() TierConfig {
	return TierConfig{
		MaxLag: tiering.DefaultMaxLag, SegmentBytes: tiering.DefaultSegmentBytes,
		ChunkBytes: tiering.DefaultChunkBytes, MaxUntiered: node.DefaultMaxUntieredBytes,
		ShutdownFlush: DefaultShutdownFlush,
	}
}

// Off reports whether the config turns tier 2 off.
func (t TierConfig) Off() bool { return t.URI == "" || t.URI == "none" }

// ClusterConfig is the ZooKeeper side of a role in cluster mode.
type ClusterConfig struct {
	// Servers is the ZooKeeper ensemble (host:port each); none: not in a
	// cluster.
	Servers []string
	// Root is the root znode of the cluster's keys.
	Root string
	// SessionTimeout is the ZooKeeper session timeout: how long the role
	// may be cut off before the cluster counts it dead.
	SessionTimeout time.Duration
	// ID is the role's id in the cluster (a node: the host name if empty,
	// and it must stay the same across restarts on one data directory; a
	// controller: the advertised address if empty).
	ID string
	// Advertise is the address other processes reach the role at; the
	// listener's address if empty.
	Advertise string
}

// Enabled reports whether the role runs in a cluster.
func (c ClusterConfig) Enabled() bool { return len(c.Servers) > 0 }

// DefaultClusterConfig returns no cluster, with the default root and
// session timeout for when servers are given.
func DefaultClusterConfig() ClusterConfig {
	return ClusterConfig{Root: DefaultZKRoot, SessionTimeout: DefaultZKSessionTimeout}
}

// Validate checks the fields that are used when Servers are given.
func (c ClusterConfig) Validate() error {
	if !c.Enabled() {
		return nil
	}
	if c.Root == "" || c.Root[0] != '/' {
		return invalidf("cluster root %q: want an absolute znode path", c.Root)
	}
	if c.SessionTimeout <= 0 {
		return invalidf("cluster session timeout %s: want more than 0", c.SessionTimeout)
	}
	for _, s := range c.Servers {
		if s == "" {
			return invalidf("cluster servers %q: want host:port each, none empty", c.Servers)
		}
	}
	return nil
}

// DefaultConfig returns the defaults of `sluice node`: four containers,
// a 256 MiB cache, 64 MiB WAL files, preallocated, no tier 2, no cluster.
func DefaultConfig() Config {
	return Config{
		DataDir: DefaultDataDir, Listen: DefaultListen,
		Containers: node.DefaultContainers, CacheSize: node.DefaultCacheSize,
		WALFileSize: DefaultWALFileSize, WALPreallocate: true, CheckpointBytes: DefaultCheckpointBytes,
		ReclaimRate: reclaim.DefaultRate,
		Tier:        DefaultTierConfig(), Cluster: DefaultClusterConfig(),
		RateWindows: rates.DefaultWindows,
	}
}

// StandaloneRateWindows are the standalone's rate windows (5, 15, 30 and
// 60 s): with the standalone controller's auto-scaling defaults a segment
// written at 10 times its target splits within seconds and a quiet
// stream merges back within a few minutes.
var StandaloneRateWindows = [rates.NumWindows]time.Duration{5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute}

// rates returns the node's rate measuring configuration.
func (c Config) rates() rates.Config {
	if c.RateWindows == ([rates.NumWindows]time.Duration{}) {
		return rates.DefaultConfig()
	}
	return rates.ConfigFor(c.RateWindows)
}

// Validate returns an error naming the first field out of its range, or
// nil. Start calls it first.
func (c Config) Validate() error {
	if c.DataDir == "" {
		return invalidf("data directory: want a path")
	}
	if c.Listen == "" {
		return invalidf("listen address: want host:port")
	}
	if c.ReclaimRate < 0 {
		return invalidf("reclaim rate %d bytes/s: want 0 (at once) or more", c.ReclaimRate)
	}
	if c.MemoryLimit < 0 {
		return invalidf("memory limit %d bytes: want 0 (derived) or more", c.MemoryLimit)
	}
	if err := c.Server.Validate(); err != nil {
		return invalid(err)
	}
	if err := c.rates().Validate(); err != nil {
		return invalidf("rate windows %v: %w", c.RateWindows, err)
	}
	if !c.Tier.Off() {
		if _, err := backend.URI(c.Tier.URI); err != nil {
			return invalid(err)
		}
	}
	return c.Cluster.Validate()
}
