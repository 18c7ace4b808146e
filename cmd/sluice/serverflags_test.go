package main

import (
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/node/server"
)

func TestServerFlagsInHelp(t *testing.T) {
	for _, cmd := range []string{"node", "standalone"} {
		code, stdout, _ := runArgs(t, cmd, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		for _, want := range []string{"--max-conns", "--max-conns-per-peer", "--handshake-timeout", "--idle-timeout", "--frame-timeout", "--write-timeout", "--request-memory", "--peer-request-memory"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s help lacks %q:\n%s", cmd, want, stdout)
			}
		}
	}
}

// Limits out of range are refused with one line naming the value and its
// range, before anything is opened.
func TestServerFlagErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"node", "--data", dir, "--request-memory", "1000"}, "request memory 1000 bytes is below 16777216"},
		{[]string{"node", "--data", dir, "--max-conns", "10", "--max-conns-per-peer", "11"}, "max connections per peer 11 is above max connections 10"},
		{[]string{"node", "--data", dir, "--max-conns", "-1"}, "max connections -1 is negative"},
		{[]string{"standalone", "--data", dir, "--request-memory", "33554432", "--peer-request-memory", "67108864"},
			"request memory per peer 67108864 bytes is outside [16777216, 33554432]"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[3:], " "), func(t *testing.T) {
			code, stdout, stderr := runArgs(t, tt.args...)
			if code != 1 || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, stdout)
			}
			oneErrorLine(t, stderr, tt.want)
		})
	}
}

// Every server flag reaches its server.Options field.
func TestServerFlagsReachOptions(t *testing.T) {
	var got server.Options
	app := &cli.App{Flags: serverFlags(&got), Action: func(*cli.Context) error { return nil }}
	args := []string{"x", "--max-conns", "100", "--max-conns-per-peer", "10", "--handshake-timeout", "1s", "--idle-timeout", "2s",
		"--frame-timeout", "3s", "--write-timeout", "4s", "--request-memory", "67108864", "--peer-request-memory", "33554432"}
	if err := app.Run(args); err != nil {
		t.Fatal(err)
	}
	want := server.Options{MaxConnections: 100, MaxConnsPerPeer: 10, HandshakeTimeout: time.Second, IdleTimeout: 2 * time.Second,
		FrameTimeout: 3 * time.Second, WriteTimeout: 4 * time.Second, RequestMemory: 64 << 20, PeerRequestMemory: 32 << 20}
	if got != want {
		t.Fatalf("options %+v, want %+v", got, want)
	}
}
