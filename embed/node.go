package embed

import (
	"context"
	"fmt"

	"github.com/sluice-streams/sluice/embed/noderole"
)

// The node role is assembled in package embed/noderole (see its doc for
// why it is a package of its own); these names make it part of embed.
type (
	// NodeConfig is the node role (noderole.Config).
	NodeConfig = noderole.Config
	// Node is a running node role (noderole.Node).
	Node = noderole.Node
	// TierConfig is a node's tier 2 (noderole.TierConfig).
	TierConfig = noderole.TierConfig
	// ClusterConfig is a role's ZooKeeper side (noderole.ClusterConfig).
	ClusterConfig = noderole.ClusterConfig
)

// ErrInvalidConfig: a config holds a value out of its range; every
// Validate error matches it (errors.Is) and names the field.
var ErrInvalidConfig = noderole.ErrInvalidConfig

// ConfigError is a Validate error (noderole.ConfigError).
type ConfigError = noderole.ConfigError

// invalidf returns a ConfigError of the formatted text.
func invalidf(format string, args ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, args...)}
}

// ApplyMemoryLimit sets the process's Go soft memory limit for the node
// role cfg (noderole.ApplyMemoryLimit) and returns it and its source.
func ApplyMemoryLimit(cfg NodeConfig) (int64, noderole.MemoryLimitSource) {
	return noderole.ApplyMemoryLimit(cfg)
}

// ApplyProcs sets the process's GOMAXPROCS for a node role
// (noderole.ApplyProcs) and returns it and its source.
func ApplyProcs() (int, noderole.ProcsSource) { return noderole.ApplyProcs() }

// DefaultNodeConfig returns the defaults of `sluice node`.
func DefaultNodeConfig() NodeConfig { return noderole.DefaultConfig() }

// DefaultTierConfig returns tier 2 off, with the default policy.
func DefaultTierConfig() TierConfig { return noderole.DefaultTierConfig() }

// DefaultClusterConfig returns no cluster, with the default root and
// session timeout for when servers are given.
func DefaultClusterConfig() ClusterConfig { return noderole.DefaultClusterConfig() }

// StartNode starts a node role (noderole.Start): it returns once the node
// serves (and, in cluster mode, follows the assignment), or the error,
// having closed what it opened.
func StartNode(ctx context.Context, cfg NodeConfig) (*Node, error) { return noderole.Start(ctx, cfg) }
