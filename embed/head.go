package embed

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	"github.com/sluice-streams/sluice/hdfsgateway/datanode"
	"github.com/sluice-streams/sluice/hdfsgateway/namenode"
	"github.com/sluice-streams/sluice/hdfsgateway/webhdfs"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/view"
)

// Defaults of HDFSConfig: Hadoop's own ports.
const (
	DefaultHDFSRPCListen  = "127.0.0.1:8020" // NameNode RPC
	DefaultHDFSDataListen = "127.0.0.1:9866" // DataNode data transfer
	DefaultHDFSHTTPListen = "127.0.0.1:9870" // WebHDFS
)

// HDFSConfig is the HDFS head: tier 2 served read-only over Hadoop's
// NameNode RPC and data-transfer protocols and WebHDFS (package
// hdfsgateway). Everything `sluice hdfs-gateway` sets from its flags; the
// standalone's head is the same with the standalone's controller.
type HDFSConfig struct {
	// Controller is the controller's URL: its scopes and streams are the
	// tree the head serves, and its tier-2 URI where the chunks are.
	Controller string
	// Tier2 is the tier-2 URI to serve; the controller's (GET /v1/tier2)
	// if empty.
	Tier2 string
	// RPCListen, DataListen and HTTPListen are the three servers'
	// addresses; port 0 picks a free one, which Head reports.
	RPCListen, DataListen, HTTPListen string
	// Advertise is the host clients reach the data-transfer server at
	// (block locations name it); DataListen's host if empty, or this
	// machine's host name if that is a wildcard address.
	Advertise string
	// BlockSize splits chunks into HDFS blocks (blocks.DefaultSize if 0).
	BlockSize int64
	// CatalogTTL is how long the head reuses the controller's scope and
	// stream names (view.DefaultCatalogTTL if 0).
	CatalogTTL time.Duration
	// API bounds the WebHDFS server, as the controller's REST API.
	API APIConfig
	// Logger; nothing is logged if nil.
	Logger logrus.FieldLogger
	// OnListen, if set, is called with each server's name ("hdfs head
	// (rpc)", "hdfs head (data)", "webhdfs") and bound address once all
	// three listen.
	OnListen func(name, addr string)

	// Later features (security: SASL and block tokens; metrics) get their
	// field group here.
}

// DefaultHDFSConfig returns the defaults of `sluice hdfs-gateway`.
func DefaultHDFSConfig() HDFSConfig {
	return HDFSConfig{
		Controller: "http://127.0.0.1:10080",
		RPCListen:  DefaultHDFSRPCListen, DataListen: DefaultHDFSDataListen, HTTPListen: DefaultHDFSHTTPListen,
		BlockSize: blocks.DefaultSize, CatalogTTL: view.DefaultCatalogTTL, API: DefaultAPIConfig(),
	}
}

// Validate returns an error naming the first field out of its range.
func (c HDFSConfig) Validate() error {
	for _, a := range []struct{ name, v string }{{"head RPC", c.RPCListen}, {"head data", c.DataListen}, {"WebHDFS", c.HTTPListen}} {
		if _, _, err := net.SplitHostPort(a.v); err != nil {
			return invalidf("%s listen address %q: want host:port", a.name, a.v)
		}
	}
	if c.Controller == "" && c.Tier2 == "" {
		return invalidf("head: want a controller URL")
	}
	if c.BlockSize < 0 || c.BlockSize%blocks.BytesPerChecksum != 0 {
		return invalidf("head block size %d: want a positive multiple of %d (0: %d)", c.BlockSize, blocks.BytesPerChecksum, blocks.DefaultSize)
	}
	if c.Tier2 != "" {
		if _, err := backend.URI(c.Tier2); err != nil {
			return invalidf("head tier 2 URI: %v", err)
		}
	}
	return c.API.Validate()
}

// HDFSHead is a running HDFS head.
type HDFSHead struct {
	cfg  HDFSConfig
	log  logrus.FieldLogger
	st   tier2.Storage
	rpc  *namenode.Server
	data *datanode.Server
	web  *http.Server
	ls   [3]net.Listener // rpc, data, http
	*servers

	stopOnce sync.Once
	stopErr  error
	requests sync.WaitGroup // WebHDFS requests being answered
}

// StartHDFS validates cfg, finds tier 2 (asking the controller, retrying
// until it answers or ctx ends), opens it, listens on the three addresses
// and serves. On any failure it closes what it opened and returns the
// error.
func StartHDFS(ctx context.Context, cfg HDFSConfig) (_ *HDFSHead, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("hdfs head: %w", err)
	}
	h := &HDFSHead{cfg: cfg, log: logs.OrDiscard(cfg.Logger), servers: newServers("hdfs head")}
	defer func() {
		if err != nil {
			h.close(context.Background())
		}
	}()
	var v *view.View
	var uri string
	if h.st, v, uri, err = openView(ctx, "hdfs head", cfg.Controller, cfg.Tier2, cfg.CatalogTTL, h.log); err != nil {
		return nil, err
	}
	for i, a := range []string{cfg.RPCListen, cfg.DataListen, cfg.HTTPListen} {
		if h.ls[i], err = net.Listen("tcp", a); err != nil {
			return nil, fmt.Errorf("hdfs head: listen %s: %w", a, err)
		}
	}
	dataAddr, err := advertised(cfg.Advertise, h.ls[1].Addr().String())
	if err != nil {
		return nil, err
	}
	h.data = datanode.New(v, datanode.Config{BlockSize: cfg.BlockSize, Logger: h.log})
	h.rpc = namenode.New(v, namenode.Config{DataAddr: func() string { return dataAddr }, BlockSize: cfg.BlockSize, Logger: h.log})
	h.web = NewAPIServer(tracked{webhdfs.NewHandler(v, webhdfs.Config{BlockSize: cfg.BlockSize, Logger: h.log}), &h.requests}, cfg.API)
	h.serve("rpc", func() error { return h.rpc.Serve(h.ls[0]) }, namenode.ErrClosed)
	h.serve("data", func() error { return h.data.Serve(h.ls[1]) }, datanode.ErrClosed)
	h.serve("webhdfs", func() error { return h.web.Serve(h.ls[2]) }, http.ErrServerClosed)
	if cfg.OnListen != nil {
		cfg.OnListen("hdfs head (rpc)", h.RPCAddr())
		cfg.OnListen("hdfs head (data)", h.DataAddr())
		cfg.OnListen("webhdfs", h.HTTPAddr())
	}
	h.log.WithFields(logrus.Fields{"rpc": h.RPCAddr(), "data": h.DataAddr(), "advertise": dataAddr,
		"webhdfs": h.HTTPAddr(), "tier2": uri}).Info("hdfs head: serving")
	return h, nil
}

// advertised is the data-transfer address block locations name.
func advertised(host, listen string) (string, error) {
	lh, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", err
	}
	if host == "" {
		host = lh
		if ip := net.ParseIP(lh); ip == nil || ip.IsUnspecified() {
			if host, err = os.Hostname(); err != nil {
				return "", fmt.Errorf("hdfs head: no advertise host and no host name: %w", err)
			}
		}
	}
	return net.JoinHostPort(host, port), nil
}

// RPCAddr, DataAddr and HTTPAddr are the bound addresses.
func (h *HDFSHead) RPCAddr() string  { return h.ls[0].Addr().String() }
func (h *HDFSHead) DataAddr() string { return h.ls[1].Addr().String() }
func (h *HDFSHead) HTTPAddr() string { return h.ls[2].Addr().String() }

// Stop shuts the head down: WebHDFS requests in flight finish (within
// API.ShutdownTimeout and ctx; the rest are cut off), the RPC and data
// servers close every connection, then tier 2 is closed once no request
// reads it. Calling it again returns the same.
func (h *HDFSHead) Stop(ctx context.Context) error {
	h.stopOnce.Do(func() { h.stopErr = h.close(ctx) })
	return h.stopErr
}

// close closes whatever StartHDFS opened, in reverse order.
func (h *HDFSHead) close(ctx context.Context) error {
	h.stop()
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if h.web != nil {
		shutdownHTTP(ctx, h.web, h.cfg.API.ShutdownTimeout, h.log, "hdfs head: WebHDFS")
	}
	if h.rpc != nil {
		keep(h.rpc.Close())
	}
	if h.data != nil {
		keep(h.data.Close())
	}
	for _, l := range h.ls {
		if l != nil {
			l.Close()
		}
	}
	h.wait()
	h.requests.Wait()
	if h.st != nil {
		keep(h.st.Close())
	}
	if first != nil {
		return fmt.Errorf("hdfs head: %w", first)
	}
	return nil
}
