package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
	"github.com/sluice-streams/sluice/s3gateway"
	"github.com/sluice-streams/sluice/scheduler"
)

func s3GatewayCommand(g *globalOptions) *cli.Command {
	cfg := embed.DefaultS3Config()
	var keys s3Keys
	return &cli.Command{
		Name:  "s3-gateway",
		Usage: "serve tier 2 read-only over the S3 API (boto3, the AWS CLI, DuckDB, Spark s3a://)",
		Description: "The S3 head shows each scope of the controller (--controller) as a bucket\n" +
			"whose keys are STREAM/segment=N/FIRST_OFFSET.seq, the chunks of tier 2\n" +
			"(Hadoop SequenceFiles). Requests must be signed (AWS Signature Version 4)\n" +
			"with one of the access keys given, unless --anonymous; every write is\n" +
			"refused with AccessDenied.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "listen", Usage: "serve S3 on `ADDR` (port 0: pick a free one)", Value: embed.DefaultS3Listen, Destination: &cfg.Listen},
			&cli.StringFlag{Name: "tier2", Usage: "serve the tier 2 at `URI` (default: the controller's)", Destination: &cfg.Tier2},
			&cli.BoolFlag{Name: "anonymous", Usage: "serve unsigned requests too: anyone who reaches ADDR reads every scope", Destination: &cfg.Anonymous},
		}, s3Flags("", &cfg, &keys)...),
		Action: func(c *cli.Context) error {
			if _, err := args(c); err != nil {
				return err
			}
			var err error
			if cfg.Credentials, err = keys.load(); err != nil {
				return err
			}
			log := newLogger(g, c.App.ErrWriter)
			cfg.Controller, cfg.Logger, cfg.API = g.Controller, log, apiConfig()
			return serveRole(c, "s3 head", log, func(ctx context.Context) (role, error) {
				h, err := embed.StartS3(ctx, cfg)
				if err != nil {
					return nil, err
				}
				printS3Addr(c, h)
				return h, nil
			})
		},
	}
}

// s3Keys are the access keys the flags name, loaded once they are parsed.
type s3Keys struct {
	prefix       string // of the flags' names
	inline, file string
}

// s3Flags are the S3 head's credential and addressing flags, named with
// prefix ("s3-" in the standalone).
func s3Flags(prefix string, cfg *embed.S3Config, keys *s3Keys) []cli.Flag {
	keys.prefix = prefix
	return []cli.Flag{
		&cli.StringFlag{Name: prefix + "credentials", Usage: "serve requests signed with these access keys: `ACCESS:SECRET[,ACCESS:SECRET...]`",
			EnvVars: []string{scheduler.S3CredentialsEnv}, Destination: &keys.inline},
		&cli.StringFlag{Name: prefix + "credentials-file", Usage: "read access keys from `FILE`: one ACCESS:SECRET a line, # comments", Destination: &keys.file},
		&cli.StringFlag{Name: prefix + "region", Usage: "the `REGION` requests are signed for", Value: embed.DefaultS3Region, Destination: &cfg.Region},
		&cli.StringFlag{Name: prefix + "domain", Usage: "serve virtual-hosted-style requests to BUCKET.`DOMAIN` too (path-style is always served)", Destination: &cfg.Domain},
		&cli.GenericFlag{Name: prefix + "allowed-hosts", Usage: "serve unsigned requests whose Host is one of these `NAME[,NAME...]` too " +
			"(IP addresses, localhost, this machine's name and the domain always may; other names are refused against DNS rebinding); * allows any Host, turning that guard off",
			Value: (*hostList)(&cfg.AllowedHosts)},
	}
}

// hostList is a flag of comma-separated host names, appended to a slice
// (given twice, the flag adds both lists).
type hostList []string

func (l *hostList) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			*l = append(*l, name)
		}
	}
	return nil
}

func (l *hostList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// load returns the access keys of --credentials (or the environment)
// and --credentials-file (none if neither is given); a key given twice
// is an error.
func (k s3Keys) load() (map[string]string, error) {
	creds := map[string]string{}
	add := func(from, text string) error {
		m, err := s3gateway.ParseCredentials(text)
		if err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
		for key, secret := range m {
			if _, ok := creds[key]; ok {
				// Not named: it might be a secret written where the
				// key belongs, as s3keys never shows one either.
				// (Only the file's keys can meet keys already read.)
				return fmt.Errorf("%s: an access key is given in --%scredentials (or %s) too", from, k.prefix, scheduler.S3CredentialsEnv)
			}
			creds[key] = secret
		}
		return nil
	}
	if k.inline != "" {
		if err := add(fmt.Sprintf("--%scredentials (or %s)", k.prefix, scheduler.S3CredentialsEnv), k.inline); err != nil {
			return nil, err
		}
	}
	if k.file != "" {
		b, err := os.ReadFile(k.file)
		if err != nil {
			return nil, fmt.Errorf("--%scredentials-file: %w", k.prefix, err)
		}
		if err := add("--"+k.prefix+"credentials-file "+k.file, string(b)); err != nil {
			return nil, err
		}
	}
	return creds, nil
}

// printS3Addr prints the line scripts and tests wait for, and says so when
// the head serves unsigned requests.
func printS3Addr(c *cli.Context, h *embed.S3Head) {
	fmt.Fprintf(c.App.Writer, "s3 head listening on %s\n", h.Addr())
	if h.Anonymous() {
		fmt.Fprintf(c.App.ErrWriter, "s3 head: serving unsigned requests: anyone who reaches %s reads every scope\n", h.Addr())
	}
}
