package main

import (
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
)

// tierFlags are the tier-2 flags of `sluice standalone` and `sluice node`
// (--tier2 and --tier-*), bound to t's fields with embed's defaults.
// uriUsage is --tier2's usage: its default differs by command.
func tierFlags(t *embed.TierConfig, uriUsage string) []cli.Flag {
	d := embed.DefaultTierConfig()
	return []cli.Flag{
		&cli.StringFlag{Name: "tier2", Usage: uriUsage, Destination: &t.URI},
		durationFlag("tier-max-lag", "an event is in tier 2 within `D` of being written (while tier 2 keeps up)", d.MaxLag, &t.MaxLag),
		sizeFlag("tier-segment-bytes", "tier a segment once `BYTES` of it wait", d.SegmentBytes, &t.SegmentBytes),
		sizeFlag("tier-chunk-bytes", "a tier-2 chunk's file is at most `BYTES` (a chunk holds whole append blocks: one larger makes a chunk of its own)", d.ChunkBytes, &t.ChunkBytes),
		sizeFlag("tier-max-untiered", "refuse appends (retriably) once a container has `BYTES` waiting for tier 2", d.MaxUntiered, &t.MaxUntiered),
		&cli.BoolFlag{Name: "tier-compress", Usage: "write zlib block-compressed chunks", Destination: &t.Compress},
		durationFlag("tier-shutdown-flush", "on shutdown, tier what is durable for at most `D`", d.ShutdownFlush, &t.ShutdownFlush),
	}
}
