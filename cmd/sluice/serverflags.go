package main

import (
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/node/server"
)

// serverOptions are the limits of the node's TCP server, flags of
// `sluice node` and `sluice standalone` (see server.Options).
type serverOptions struct {
	// MaxConns bounds the open connections (--max-conns).
	MaxConns int
	// MaxConnsPerPeer bounds the open connections of one remote IP
	// address (--max-conns-per-peer).
	MaxConnsPerPeer int
	// HandshakeTimeout closes a connection with no complete first frame
	// (--handshake-timeout).
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection with no writer and nothing in flight
	// (--idle-timeout).
	IdleTimeout time.Duration
	// FrameTimeout closes a connection whose frame, once begun and granted
	// its memory, does not arrive whole in time (--frame-timeout).
	FrameTimeout time.Duration
	// WriteTimeout closes a connection that does not read its replies in
	// time (--write-timeout).
	WriteTimeout time.Duration
	// RequestMemory bounds the bytes held for requests, node-wide
	// (--request-memory).
	RequestMemory int64
	// PeerRequestMemory is one remote IP address's share of it
	// (--peer-request-memory).
	PeerRequestMemory int64
}

func (o *serverOptions) flags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-conns", Usage: "accept at most `N` connections at once", Value: server.DefaultMaxConnections, Destination: &o.MaxConns},
		&cli.IntFlag{Name: "max-conns-per-peer", Usage: "close new connections from an IP address (IPv6: a /64) that already has `N` open (at most --max-conns; negative: no cap)", Value: server.DefaultMaxConnsPerPeer, Destination: &o.MaxConnsPerPeer},
		durationFlag("handshake-timeout", "close a connection that sends no complete first request within `D` (negative: never)", server.DefaultHandshakeTimeout, &o.HandshakeTimeout),
		durationFlag("idle-timeout", "close a connection with no writer and no request in flight after `D` (negative: never)", server.DefaultIdleTimeout, &o.IdleTimeout),
		durationFlag("frame-timeout", "close a connection that stops in the middle of a frame holding request memory: the rest must arrive within `D` (negative: never)", server.DefaultFrameTimeout, &o.FrameTimeout),
		durationFlag("write-timeout", "close a connection that does not read its replies within `D`, releasing its request memory (negative: never)", server.DefaultWriteTimeout, &o.WriteTimeout),
		sizeFlag("request-memory", fmt.Sprintf("hold at most `BYTES` of requests being read or waiting for their fsync, all connections together; beyond, stop reading (at least %s)", byteSize{&minRequestMemory}), server.DefaultRequestMemory, &o.RequestMemory),
		sizeFlag("peer-request-memory", "one IP address's share of --request-memory in `BYTES` (0: a quarter of it)", 0, &o.PeerRequestMemory),
	}
}

// options maps the flags into the server options; the role's config
// validates them (embed.NodeConfig.Validate).
func (o *serverOptions) options(log logrus.FieldLogger) server.Options {
	return server.Options{Logger: log, MaxConnections: o.MaxConns, MaxConnsPerPeer: o.MaxConnsPerPeer,
		HandshakeTimeout: o.HandshakeTimeout, IdleTimeout: o.IdleTimeout,
		FrameTimeout: o.FrameTimeout, WriteTimeout: o.WriteTimeout,
		RequestMemory: o.RequestMemory, PeerRequestMemory: o.PeerRequestMemory}
}

// minRequestMemory is server.MinRequestMemory as a variable, for --help.
var minRequestMemory int64 = server.MinRequestMemory
