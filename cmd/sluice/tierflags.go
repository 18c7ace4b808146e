package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
)

// tierOptions are the tier-2 flags of `sluice standalone` and `sluice node`.
type tierOptions struct {
	// URI is the tier-2 storage (--tier2): a directory, file:///dir or
	// hdfs://namenode:port/dir; "none" turns tiering off.
	URI string
	// MaxLag bounds how long an event waits for tier 2 (--tier-max-lag).
	MaxLag time.Duration
	// SegmentBytes tiers a segment once this much waits (--tier-segment-bytes).
	SegmentBytes int64
	// ChunkBytes bounds a chunk (--tier-chunk-bytes).
	ChunkBytes int64
	// MaxUntiered bounds a container's bytes waiting for tier 2 before
	// appends are refused (--tier-max-untiered).
	MaxUntiered int64
	// Compress writes block-compressed (zlib) chunks (--tier-compress).
	Compress bool
	// ShutdownFlush bounds the tiering of what is durable when the node
	// stops (--tier-shutdown-flush).
	ShutdownFlush time.Duration
}

func (o *tierOptions) flags(uriUsage, uriDefault string) []cli.Flag {
	d := embed.DefaultTierConfig()
	return []cli.Flag{
		&cli.StringFlag{Name: "tier2", Usage: uriUsage, Value: uriDefault, Destination: &o.URI},
		durationFlag("tier-max-lag", "an event is in tier 2 within `D` of being written (while tier 2 keeps up)", d.MaxLag, &o.MaxLag),
		sizeFlag("tier-segment-bytes", "tier a segment once `BYTES` of it wait", d.SegmentBytes, &o.SegmentBytes),
		sizeFlag("tier-chunk-bytes", "a tier-2 chunk holds at most about `BYTES`", d.ChunkBytes, &o.ChunkBytes),
		sizeFlag("tier-max-untiered", "refuse appends (retriably) once a container has `BYTES` waiting for tier 2", d.MaxUntiered, &o.MaxUntiered),
		&cli.BoolFlag{Name: "tier-compress", Usage: "write zlib block-compressed chunks", Destination: &o.Compress},
		durationFlag("tier-shutdown-flush", "on shutdown, tier what is durable for at most `D`", d.ShutdownFlush, &o.ShutdownFlush),
	}
}

// config maps the flags into the node's tier-2 config.
func (o *tierOptions) config() embed.TierConfig {
	return embed.TierConfig{URI: o.URI, MaxLag: o.MaxLag, SegmentBytes: o.SegmentBytes, ChunkBytes: o.ChunkBytes,
		MaxUntiered: o.MaxUntiered, Compress: o.Compress, ShutdownFlush: o.ShutdownFlush}
}
