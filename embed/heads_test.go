package embed_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/embed"
	"github.com/sluice-streams/sluice/tier2"
)

// TestStandaloneStartsEveryHead: a standalone with tier 2 runs the HDFS,
// NFS and S3 heads (the S3 head anonymous, having no credentials); each
// can be turned off alone, and with no tier 2 there is none.
func TestStandaloneStartsEveryHead(t *testing.T) {
	type heads struct{ hdfs, nfs, s3 bool }
	for name, tt := range map[string]struct {
		change func(*embed.StandaloneConfig)
		want   heads
	}{
		"defaults":  {func(*embed.StandaloneConfig) {}, heads{true, true, true}},
		"no nfs":    {func(c *embed.StandaloneConfig) { c.NoNFS = true }, heads{true, false, true}},
		"no s3":     {func(c *embed.StandaloneConfig) { c.NoS3 = true }, heads{true, true, false}},
		"no hdfs":   {func(c *embed.StandaloneConfig) { c.NoHDFS = true }, heads{false, true, true}},
		"no tier 2": {func(c *embed.StandaloneConfig) { c.Node.Tier.URI = "none" }, heads{}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := standaloneConfig(t.TempDir())
			tt.change(&cfg)
			s, err := embed.StartStandalone(ctxT(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop(context.Background())
			got := heads{s.HDFS() != nil, s.NFS() != nil, s.S3() != nil}
			if got != tt.want {
				t.Fatalf("heads %+v, want %+v", got, tt.want)
			}
			if s.S3() != nil && !s.S3().Anonymous() {
				t.Fatal("a standalone's S3 head without credentials is not anonymous")
			}
		})
	}
}

// TestS3AndNFSAsTheirOwnRoles: StartS3 and StartNFS against a controller
// (a standalone's, its heads off) serve the controller's tier 2; the S3
// head refuses unsigned requests unless anonymous; a port in use fails
// the start with the address; Stop is idempotent and leaves Err nil.
func TestS3AndNFSAsTheirOwnRoles(t *testing.T) {
	cfg := standaloneConfig(t.TempDir())
	cfg.NoHDFS, cfg.NoNFS, cfg.NoS3 = true, true, true
	s, err := embed.StartStandalone(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	createStream(ctxT(t), t, ctlclient.NewClient(s.URL()), "rl")
	putChunk(t, strings.TrimPrefix(s.Node().TierURI(), "file://"), tier2.ChunkPath("rl", "events", 0, 0), "chunk bytes")

	s3cfg := embed.DefaultS3Config()
	s3cfg.Controller, s3cfg.Listen, s3cfg.Logger = s.URL(), "127.0.0.1:0", quiet()
	s3cfg.Credentials = map[string]string{"AKEXAMPLE": "secret"}
	signed, err := embed.StartS3(ctxT(t), s3cfg)
	if err != nil {
		t.Fatal(err)
	}
	if status := get(t, signed.URL()+"/"); status != http.StatusForbidden {
		t.Fatalf("an unsigned request to a head with keys: %d, want 403", status)
	}
	s3cfg.Credentials, s3cfg.Anonymous, s3cfg.AllowedHosts = nil, true, []string{"nas.lan"}
	anon, err := embed.StartS3(ctxT(t), s3cfg)
	if err != nil {
		t.Fatal(err)
	}
	if status := get(t, anon.URL()+"/rl/events/segment=0/"+lastName(tier2.ChunkPath("rl", "events", 0, 0))); status != http.StatusOK {
		t.Fatalf("an anonymous GET of the chunk: %d, want 200", status)
	}
	// Unsigned requests may name the head by this machine's name (as
	// clients of a head on a Mesos agent name the agent) and by the names
	// AllowedHosts lists; a name a web page might own is refused.
	hosts := map[string]int{"nas.lan": http.StatusOK, "attacker.example": http.StatusForbidden}
	if name, err := os.Hostname(); err == nil && name != "" {
		hosts[name] = http.StatusOK
		short, _, _ := strings.Cut(name, ".")
		hosts[short] = http.StatusOK
	}
	for host, want := range hosts {
		if status := getHost(t, anon.URL()+"/rl?list-type=2", host); status != want {
			t.Errorf("an anonymous list with Host %q: %d, want %d", host, status, want)
		}
	}

	ncfg := embed.DefaultNFSConfig()
	ncfg.Controller, ncfg.Listen, ncfg.Logger = s.URL(), "127.0.0.1:0", quiet()
	nfs, err := embed.StartNFS(ctxT(t), ncfg)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", nfs.Addr()); err != nil {
		t.Fatalf("the NFS head does not take connections: %v", err)
	} else {
		c.Close()
	}

	busy := ncfg
	busy.Listen = nfs.Addr()
	if _, err := embed.StartNFS(ctxT(t), busy); err == nil || !strings.Contains(err.Error(), "listen "+nfs.Addr()) {
		t.Fatalf("an NFS head on a taken port: %v", err)
	}
	busyS3 := s3cfg
	busyS3.Listen = anon.Addr()
	if _, err := embed.StartS3(ctxT(t), busyS3); err == nil || !strings.Contains(err.Error(), "listen "+anon.Addr()) {
		t.Fatalf("an S3 head on a taken port: %v", err)
	}

	for name, h := range map[string]interface {
		Stop(context.Context) error
		Done() <-chan struct{}
		Err() error
	}{"signed s3": signed, "anonymous s3": anon, "nfs": nfs} {
		for i := 0; i < 2; i++ {
			if err := h.Stop(context.Background()); err != nil {
				t.Fatalf("%s: Stop %d: %v", name, i+1, err)
			}
		}
		select {
		case <-h.Done():
		default:
			t.Fatalf("%s: Done not closed after Stop", name)
		}
		if err := h.Err(); err != nil {
			t.Fatalf("%s: Err after Stop: %v", name, err)
		}
	}
	if _, err := net.Dial("tcp", nfs.Addr()); err == nil {
		t.Fatal("the NFS head still takes connections after Stop")
	}
}

// get returns the status of a GET of url.
func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// getHost returns the status of a GET of url with Host host.
func getHost(t *testing.T, url, host string) int {
	t.Helper()
	r, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Host = host
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// lastName is the base name of a slash-separated path.
func lastName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

func TestNFSAndS3ConfigsAreChecked(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{func() error { c := embed.DefaultNFSConfig(); c.Listen = "12049"; return c.Validate() }(), "NFS listen address"},
		{func() error { c := embed.DefaultNFSConfig(); c.Controller = ""; return c.Validate() }(), "controller URL"},
		{func() error { c := embed.DefaultNFSConfig(); c.Tier2 = "ftp://x"; return c.Validate() }(), "tier 2 URI"},
		{embed.DefaultS3Config().Validate(), "no credentials"},
		{func() error { c := embed.DefaultS3Config(); c.Anonymous, c.Listen = true, "x"; return c.Validate() }(), "S3 listen address"},
		{func() error {
			c := embed.DefaultS3Config()
			c.Credentials = map[string]string{"AK": ""}
			return c.Validate()
		}(), "empty access key or secret key"},
		{func() error {
			c := embed.DefaultS3Config()
			c.Anonymous, c.API.ReadTimeout = true, 0
			return c.Validate()
		}(), "API read timeout"},
		{func() error {
			c := embed.DefaultS3Config()
			c.Anonymous, c.Region = true, "bad region/x"
			return c.Validate()
		}(), `region "bad region/x"`},
		{func() error {
			c := embed.DefaultS3Config()
			c.Anonymous, c.Domain = true, "s3.example.com:9000"
			return c.Validate()
		}(), "want a host name without port"},
		{func() error {
			c := embed.DefaultS3Config()
			c.Anonymous, c.AllowedHosts = true, []string{"nas.lan:9000"}
			return c.Validate()
		}(), `allowed host "nas.lan:9000"`},
	} {
		if !errors.Is(tt.err, embed.ErrInvalidConfig) || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("Validate: %v; want ErrInvalidConfig saying %q", tt.err, tt.want)
		}
	}
	if err := embed.DefaultNFSConfig().Validate(); err != nil {
		t.Fatalf("NFS defaults: %v", err)
	}
}
