package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/urfave/cli/v2"
)

// pprofFlag is --pprof-addr of `sluice standalone`: where to serve the Go
// runtime's profiles (off by default).
func pprofFlag(dest *string) cli.Flag {
	return &cli.StringFlag{Name: "pprof-addr", Usage: "serve the Go runtime's profiles (net/http/pprof: /debug/pprof/) on `ADDR` for go tool pprof and `sluice bench --server-pprof` (port 0: pick a free one; default: off)", Destination: dest}
}

// servePprof serves /debug/pprof/ on addr until the returned stop is
// called, and prints "pprof listening on ADDR". addr "": nothing.
func servePprof(c *cli.Context, addr string) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(c.App.ErrWriter, "pprof: %v\n", err)
		}
	}()
	fmt.Fprintf(c.App.Writer, "pprof listening on %s\n", l.Addr())
	return func() {
		srv.Close()
		<-done
	}, nil
}
