package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/tiering"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/seqfile"
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
	return []cli.Flag{
		&cli.StringFlag{Name: "tier2", Usage: uriUsage, Value: uriDefault, Destination: &o.URI},
		durationFlag("tier-max-lag", "an event is in tier 2 within `D` of being written (while tier 2 keeps up)", tiering.DefaultMaxLag, &o.MaxLag),
		sizeFlag("tier-segment-bytes", "tier a segment once `BYTES` of it wait", tiering.DefaultSegmentBytes, &o.SegmentBytes),
		sizeFlag("tier-chunk-bytes", "a tier-2 chunk holds at most about `BYTES`", tiering.DefaultChunkBytes, &o.ChunkBytes),
		sizeFlag("tier-max-untiered", "refuse appends (retriably) once a container has `BYTES` waiting for tier 2", node.DefaultMaxUntieredBytes, &o.MaxUntiered),
		&cli.BoolFlag{Name: "tier-compress", Usage: "write zlib block-compressed chunks", Destination: &o.Compress},
		durationFlag("tier-shutdown-flush", "on shutdown, tier what is durable for at most `D`", 10*time.Second, &o.ShutdownFlush),
	}
}

// open opens the tier-2 storage and sets it in cfg; it returns the
// storage's canonical URI ("" if tiering is off) and the storage to close
// after the node.
func (o *tierOptions) open(cfg *node.Config) (string, tier2.Storage, error) {
	if o.URI == "" || o.URI == "none" {
		return "", nil, nil
	}
	uri, err := backend.URI(o.URI)
	if err != nil {
		return "", nil, err
	}
	st, err := backend.Open(uri)
	if err != nil {
		return "", nil, fmt.Errorf("tier 2: %w", err)
	}
	cfg.Tier2 = st
	cfg.TierPolicy = tiering.Policy{MaxLag: o.MaxLag, SegmentBytes: o.SegmentBytes, ChunkBytes: o.ChunkBytes}
	cfg.MaxUntieredBytes = o.MaxUntiered
	if o.Compress {
		cfg.TierCompression = seqfile.Block
	}
	return uri, st, nil
}
