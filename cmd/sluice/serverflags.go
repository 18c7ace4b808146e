package main

import (
	"fmt"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
	"github.com/sluice-streams/sluice/node/server"
)

// serverFlags are the limits of the node's TCP server, flags of
// `sluice node` and `sluice standalone` (--max-conns...), bound to o's
// fields with server's defaults; the role's config validates them
// (embed.NodeConfig.Validate). o.Logger is the command's to set.
func serverFlags(o *server.Options) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-conns", Usage: "accept at most `N` connections at once", Value: server.DefaultMaxConnections, Destination: &o.MaxConnections},
		&cli.IntFlag{Name: "max-conns-per-peer", Usage: "close new connections from an IP address (IPv6: a /64) that already has `N` open (at most --max-conns; negative: no cap)", Value: server.DefaultMaxConnsPerPeer, Destination: &o.MaxConnsPerPeer},
		durationFlag("handshake-timeout", "close a connection that sends no complete first request within `D` (negative: never)", server.DefaultHandshakeTimeout, &o.HandshakeTimeout),
		durationFlag("idle-timeout", "close a connection with no writer and no request in flight after `D` (negative: never)", server.DefaultIdleTimeout, &o.IdleTimeout),
		durationFlag("frame-timeout", "close a connection that stops in the middle of a frame holding request memory: the rest must arrive within `D` (negative: never)", server.DefaultFrameTimeout, &o.FrameTimeout),
		durationFlag("write-timeout", "close a connection that does not read its replies within `D`, releasing its request memory (negative: never)", server.DefaultWriteTimeout, &o.WriteTimeout),
		sizeFlag("request-memory", fmt.Sprintf("hold at most `BYTES` of requests being read or waiting for their fsync, all connections together; beyond, stop reading (at least %s)", byteSize{&minRequestMemory}), server.DefaultRequestMemory, &o.RequestMemory),
		sizeFlag("peer-request-memory", "one IP address's share of --request-memory in `BYTES` (0: a quarter of it)", 0, &o.PeerRequestMemory),
	}
}

// memoryLimitFlag is --memory-limit of `sluice node` and `sluice
// standalone`, into dest (the role's NodeConfig.MemoryLimit).
func memoryLimitFlag(dest *int64) cli.Flag {
	return sizeFlag("memory-limit", "the Go runtime's soft memory limit in `BYTES`: the garbage collector works harder rather than let the process pass it "+
		"(0: --cache-size + 80MiB, unless GOMEMLIMIT is set; GOMEMLIMIT=off: none)", 0, dest)
}

// reclaimRateFlag is --reclaim-rate of `sluice node` and `sluice
// standalone`, into dest (the role's NodeConfig.ReclaimRate).
func reclaimRateFlag(value int64, dest *int64) cli.Flag {
	return sizeFlag("reclaim-rate", "give the space of removed log files and tier-2 chunks (of a local tier 2) back to the filesystem at `BYTES` a second, "+
		"1 MiB at a time, so that a filesystem with online discard does not stall the log's syncs; tier-2 chunks a minute after their removal; without pauses while over 4 GiB wait or under 1 GiB is free (0: unlink at once)", value, dest)
}

// applyProcessLimits sets the process's memory limit and GOMAXPROCS for the
// node role cfg before the role starts (its recovery is under them too)
// and returns what logs them, to call once the role serves: a role that
// fails to start prints its one error line and nothing else.
func applyProcessLimits(log logrus.FieldLogger, cfg embed.NodeConfig) (logIt func()) {
	limit, from := embed.ApplyMemoryLimit(cfg)
	procs, procsFrom := embed.ApplyProcs()
	return func() {
		log.WithFields(logrus.Fields{"limit": byteSize{&limit}.String(), "from": string(from)}).Info("node: Go memory limit")
		log.WithFields(logrus.Fields{"procs": procs, "from": string(procsFrom)}).Info("node: GOMAXPROCS")
	}
}

// minRequestMemory is server.MinRequestMemory as a variable, for --help.
var minRequestMemory int64 = server.MinRequestMemory
