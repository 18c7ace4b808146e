package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
)

// streamCreateOptions are the flags of `sluice stream create`.
type streamCreateOptions struct {
	Segments      int           // --segments: a fixed number of segments
	ScaleBy       string        // --scale-by events|bytes
	Target        int64         // --target: events/s or KB/s per segment
	Factor        int           // --factor: how many segments a hot one splits into
	Min           int           // --min: the fewest segments
	RetentionTime time.Duration // --retention-time: whole days ("7d", "168h"); 0: not given
	RetentionSize string        // --retention-size: bytes ("512MiB")
	Tags          []string      // --tag k=v, repeated
	// TierMaxLag and TierSegmentBytes override the nodes' tiering policy
	// for this stream (--tier-max-lag, --tier-segment-bytes).
	TierMaxLag       time.Duration
	TierSegmentBytes int64
}

// streamScaleOptions are the flags of `sluice stream scale`.
type streamScaleOptions struct {
	Seal   string // --seal N[,N...]
	Ranges string // --ranges LOW-HIGH[,LOW-HIGH...]
}

func streamCommand(g *globalOptions) *cli.Command {
	co := &streamCreateOptions{}
	so := &streamScaleOptions{}
	var listTags []string
	var cut string
	return &cli.Command{
		Name:  "stream",
		Usage: "create, list, describe, scale, seal, truncate and delete streams",
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "create a stream",
				ArgsUsage: "SCOPE/STREAM",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "segments", Usage: "a fixed number `N` of segments", Value: 1, Destination: &co.Segments},
					&cli.StringFlag{Name: "scale-by", Usage: "scale the stream on load by `RATE`: events (events/s) or bytes (KB/s); the controller splits a segment above --target and merges cold neighbours back", Destination: &co.ScaleBy},
					&cli.Int64Flag{Name: "target", Usage: "with --scale-by: the target rate `X` per segment (events/s or KB/s)", Destination: &co.Target},
					&cli.IntFlag{Name: "factor", Usage: "with --scale-by: a hot segment splits into `F` segments", Value: 2, Destination: &co.Factor},
					&cli.IntFlag{Name: "min", Usage: "with --scale-by: create the stream with `N` segments, and never scale below N", Value: 1, Destination: &co.Min},
					&cli.GenericFlag{Name: "retention-time", Usage: "keep `D` (whole days: 7d, 168h; at most 106751d)", Value: durationValue{p: &co.RetentionTime, check: wholeDays}},
					&cli.StringFlag{Name: "retention-size", Usage: "keep `BYTES` (512MiB, 10GiB; counted in MiB)", Destination: &co.RetentionSize},
					&cli.StringSliceFlag{Name: "tag", Usage: "tag `k=v` (repeat for several)"},
					durationFlag("tier-max-lag", "events reach tier 2 within `D` (default: the nodes' setting)", 0, &co.TierMaxLag),
					sizeFlag("tier-segment-bytes", "tier a segment once `BYTES` of it wait (0: the nodes' setting)", 0, &co.TierSegmentBytes),
				},
				Action: func(c *cli.Context) error {
					co.Tags = c.StringSlice("tag")
					return streamCreate(c, g, co)
				},
			},
			{
				Name:      "list",
				Usage:     "list a scope's streams",
				ArgsUsage: "SCOPE",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "tag", Usage: "only streams tagged `k=v` (or k: any value; repeat for several)"},
				},
				Action: func(c *cli.Context) error {
					listTags = c.StringSlice("tag")
					return streamList(c, g, listTags)
				},
			},
			{
				Name:      "describe",
				Usage:     "show a stream's configuration, state, segments and head",
				ArgsUsage: "SCOPE/STREAM",
				Action:    func(c *cli.Context) error { return streamDescribe(c, g) },
			},
			{
				Name:      "scale",
				Usage:     "seal neighbouring segments and replace them by segments with the given key ranges",
				ArgsUsage: "SCOPE/STREAM",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "seal", Usage: "segment numbers `N[,N...]` to seal", Required: true, Destination: &so.Seal},
					&cli.StringFlag{Name: "ranges", Usage: "key ranges `LOW-HIGH[,...]` of the new segments (e.g. 0-0.25,0.25-0.5)", Required: true, Destination: &so.Ranges},
				},
				Action: func(c *cli.Context) error { return streamScale(c, g, so) },
			},
			{
				Name:      "seal",
				Usage:     "seal a stream: no more writes",
				ArgsUsage: "SCOPE/STREAM",
				Action:    func(c *cli.Context) error { return streamSimple(c, g, "seal") },
			},
			{
				Name:      "truncate",
				Usage:     "delete a stream's data before a stream cut",
				ArgsUsage: "SCOPE/STREAM",
				Description: "Each OFFSET must be an event boundary (where an event starts, or the segment's end), " +
					"such as a position `sluice read` printed; the node refuses any other, naming the nearest boundaries, " +
					"and nothing is truncated.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "cut", Usage: "stream cut `CUT`: scope/stream:N.#epoch.E=OFFSET,... (event boundaries)", Required: true, Destination: &cut},
				},
				Action: func(c *cli.Context) error { return streamTruncate(c, g, cut) },
			},
			{
				Name:      "delete",
				Usage:     "delete a sealed stream",
				ArgsUsage: "SCOPE/STREAM",
				Action:    func(c *cli.Context) error { return streamSimple(c, g, "delete") },
			},
			streamWatermarksCommand(g),
		},
	}
}

// streamArg returns the command's one argument SCOPE/STREAM.
func streamArg(c *cli.Context) (scope, stream string, err error) {
	a, err := args(c, "SCOPE/STREAM")
	if err != nil {
		return "", "", err
	}
	scope, stream, ok := strings.Cut(a[0], "/")
	if !ok || scope == "" || stream == "" || strings.Contains(stream, "/") {
		return "", "", usageErr{fmt.Errorf("%s: %q is not SCOPE/STREAM", commandName(c), a[0])}
	}
	return scope, stream, nil
}

// streamAndPrinter returns the command's one argument SCOPE/STREAM and the
// printer --output asks for.
func streamAndPrinter(c *cli.Context, g *globalOptions) (scope, stream string, p *printer, err error) {
	if scope, stream, err = streamArg(c); err != nil {
		return "", "", nil, err
	}
	if p, err = newPrinter(c.App.Writer, g.Output); err != nil {
		return "", "", nil, err
	}
	return scope, stream, p, nil
}

// scalingPolicy builds the policy the create flags ask for.
func (o *streamCreateOptions) scalingPolicy(c *cli.Context) (api.ScalingPolicy, error) {
	if o.ScaleBy == "" {
		for _, f := range []string{"target", "factor", "min"} {
			if c.IsSet(f) {
				return api.ScalingPolicy{}, fmt.Errorf("--%s needs --scale-by", f)
			}
		}
		if o.Segments < 1 || o.Segments > math.MaxInt32 {
			return api.ScalingPolicy{}, fmt.Errorf("--segments %d: want at least 1", o.Segments)
		}
		return api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: int32(o.Segments)}, nil
	}
	p := api.ScalingPolicy{TargetRate: o.Target}
	switch o.ScaleBy {
	case "events":
		p.Type = api.ByRateInEventsPerSec
	case "bytes":
		p.Type = api.ByRateInKBytesPerSec
	default:
		return p, fmt.Errorf("--scale-by %q: want events or bytes", o.ScaleBy)
	}
	if c.IsSet("segments") {
		return p, fmt.Errorf("--segments is a fixed number of segments; with --scale-by, use --min")
	}
	if !c.IsSet("target") || o.Target < 1 {
		return p, fmt.Errorf("--scale-by needs --target, a rate of at least 1")
	}
	if o.Factor < 2 || o.Factor > math.MaxInt32 {
		return p, fmt.Errorf("--factor %d: want at least 2", o.Factor)
	}
	if o.Min < 1 || o.Min > math.MaxInt32 {
		return p, fmt.Errorf("--min %d: want at least 1", o.Min)
	}
	p.ScaleFactor, p.MinSegments = int32(o.Factor), int32(o.Min)
	return p, nil
}

// retentionPolicy builds the policy the create flags ask for (nil: keep
// everything).
func (o *streamCreateOptions) retentionPolicy() (*api.RetentionPolicy, error) {
	switch {
	case o.RetentionTime != 0 && o.RetentionSize != "":
		return nil, fmt.Errorf("--retention-time and --retention-size exclude each other")
	case o.RetentionTime != 0:
		// The flag took whole days only, at most 106751 (292 years: the
		// longest duration); the REST API takes more
		// (api.RangeRetentionValue), which no one needs from the CLI.
		return &api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: int64(o.RetentionTime / day)}, nil
	case o.RetentionSize != "":
		b, err := parseBytes(o.RetentionSize)
		if err != nil {
			return nil, fmt.Errorf("--retention-size %q: %v", o.RetentionSize, err)
		}
		mib := b >> 20 // rounded up below; b + 1<<20 - 1 could overflow
		if b&(1<<20-1) != 0 {
			mib++
		}
		if max := api.RangeRetentionValue.Max; mib > max {
			return nil, fmt.Errorf("--retention-size %q: %d MiB, want at most %d", o.RetentionSize, mib, max)
		}
		return &api.RetentionPolicy{Type: api.RetentionLimitedSizeMB, Value: mib}, nil
	}
	return nil, nil
}

// parseBytes parses a size: an integer with an optional binary unit (B,
// K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB; all powers of 1024).
func parseBytes(s string) (int64, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	shift, ok := map[string]uint{"": 0, "B": 0, "K": 10, "KB": 10, "KiB": 10, "M": 20, "MB": 20, "MiB": 20,
		"G": 30, "GB": 30, "GiB": 30, "T": 40, "TB": 40, "TiB": 40}[s[i:]]
	if err != nil || !ok || n < 1 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("want a positive size in bytes, such as 1048576, 512MiB or 10GiB")
	}
	return n << shift, nil
}

// parseTags parses k=v flags; with anyValue, a bare k means any value.
func parseTags(flags []string, anyValue bool) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	tags := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if k == "" || !ok && !anyValue {
			return nil, fmt.Errorf("--tag %q: want k=v", f)
		}
		tags[k] = v
	}
	return tags, nil
}

func streamCreate(c *cli.Context, g *globalOptions, o *streamCreateOptions) error {
	scope, stream, p, err := streamAndPrinter(c, g)
	if err != nil {
		return err
	}
	cfg := api.StreamConfig{ScopeName: scope, StreamName: stream}
	if cfg.ScalingPolicy, err = o.scalingPolicy(c); err != nil {
		return err
	}
	if cfg.RetentionPolicy, err = o.retentionPolicy(); err != nil {
		return err
	}
	if cfg.Tags, err = parseTags(o.Tags, false); err != nil {
		return err
	}
	if o.TierMaxLag < 0 || o.TierSegmentBytes < 0 {
		return fmt.Errorf("--tier-max-lag and --tier-segment-bytes must not be negative")
	}
	if o.TierMaxLag > 0 || o.TierSegmentBytes > 0 {
		cfg.TieringPolicy = &api.TieringPolicy{MaxLagMillis: o.TierMaxLag.Milliseconds(), SegmentBytes: o.TierSegmentBytes}
	}
	cl := apiClient(g)
	info, err := cl.CreateStream(c.Context, cfg)
	if err != nil {
		return err
	}
	if g.Output == formatJSON {
		// The stream as describe shows it.
		d, err := describeStream(c.Context, cl, scope, stream)
		if err != nil {
			return fmt.Errorf("stream create %s/%s: created, but: %w", scope, stream, err)
		}
		return p.Print(output{JSON: d})
	}
	return p.Print(streamOutput([]api.StreamInfo{info}, info))
}

func streamList(c *cli.Context, g *globalOptions, tagFlags []string) error {
	a, err := args(c, "SCOPE")
	if err != nil {
		return err
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	tags, err := parseTags(tagFlags, true)
	if err != nil {
		return err
	}
	streams, err := apiClient(g).ListStreams(c.Context, a[0], tags)
	if err != nil {
		return err
	}
	if streams == nil {
		streams = []api.StreamInfo{}
	}
	return p.Print(streamOutput(streams, streams))
}

// streamDescription is the JSON of `sluice stream describe`.
type streamDescription struct {
	Stream   api.StreamInfo     `json:"stream"`
	Segments []api.SegmentRange `json:"segments"`
	Head     api.StreamCut      `json:"head"`
	// Tier is the tier-2 state of the stream's segments; TierError says
	// why it is missing (a node down).
	Tier      *api.StreamTier `json:"tier,omitempty"`
	TierError string          `json:"tierError,omitempty"`
	// ScalingHistory is every epoch, oldest first, with why it began.
	ScalingHistory []api.EpochInfo `json:"scalingHistory"`
}

func streamDescribe(c *cli.Context, g *globalOptions) error {
	scope, stream, p, err := streamAndPrinter(c, g)
	if err != nil {
		return err
	}
	d, err := describeStream(c.Context, apiClient(g), scope, stream)
	if err != nil {
		return err
	}
	if g.Output == formatJSON {
		return p.Print(output{JSON: d})
	}
	info := d.Stream
	if err := p.Print(output{Rows: [][]string{
		{"STREAM", info.ScopeName + "/" + info.StreamName},
		{"STATE", state(info)},
		{"EPOCH", strconv.FormatInt(info.Epoch, 10)},
		{"SCALING", scaling(info.ScalingPolicy)},
		{"RETENTION", retention(info.RetentionPolicy)},
		{"TIERING", tieringPolicy(info.TieringPolicy)},
		{"TAGS", tagText(info.Tags)},
		{"CREATED", time.UnixMilli(info.CreationTime).UTC().Format(time.RFC3339)},
		{"HEAD", d.Head.String()},
		{"TIER 2", tierSummary(d)},
	}}); err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer)
	if err := p.Print(segmentOutput(d.Segments)); err != nil {
		return err
	}
	if err := printScalingHistory(c.App.Writer, p, d.ScalingHistory); err != nil {
		return err
	}
	if d.Tier == nil || len(d.Tier.Segments) == 0 {
		return nil
	}
	fmt.Fprintln(c.App.Writer)
	return p.Print(tierOutput(d.Tier.Segments))
}

// describeStream reads what `stream describe` shows of a stream.
func describeStream(ctx context.Context, cl *ctlclient.Client, scope, stream string) (streamDescription, error) {
	var d streamDescription
	var err error
	if d.Stream, err = cl.GetStream(ctx, scope, stream); err != nil {
		return d, err
	}
	if d.Segments, err = cl.CurrentSegments(ctx, scope, stream); err != nil {
		return d, err
	}
	if d.Head, err = cl.HeadCut(ctx, scope, stream); err != nil {
		return d, err
	}
	if d.ScalingHistory, err = cl.Epochs(ctx, scope, stream); err != nil {
		return d, err
	}
	if t, err := cl.StreamTier(ctx, scope, stream); err != nil {
		d.TierError = err.Error()
	} else {
		d.Tier = &t
	}
	return d, nil
}

func tieringPolicy(t *api.TieringPolicy) string {
	if t == nil || (t.MaxLagMillis == 0 && t.SegmentBytes == 0) {
		return "the nodes' policy"
	}
	var parts []string
	if t.MaxLagMillis > 0 {
		parts = append(parts, "max lag "+(time.Duration(t.MaxLagMillis)*time.Millisecond).String())
	}
	if t.SegmentBytes > 0 {
		parts = append(parts, fmt.Sprintf("tier every %d bytes", t.SegmentBytes))
	}
	return strings.Join(parts, ", ")
}

func tierSummary(d streamDescription) string {
	if d.Tier == nil {
		return "unknown: " + d.TierError
	}
	return fmt.Sprintf("%d bytes tiered, %d waiting, lag %v", d.Tier.TieredBytes, d.Tier.UntieredBytes,
		time.Duration(d.Tier.LagMillis)*time.Millisecond)
}

// tierOutput is the per-segment tier-2 table of `stream describe`.
func tierOutput(segs []api.SegmentTier) output {
	o := output{Columns: []string{"SEGMENT", "START", "LENGTH", "TIERED TO", "WAITING", "LAG", "TIER-2 ERROR"}, JSON: segs}
	for _, s := range segs {
		errText := s.Tier2Error
		if errText == "" {
			errText = "-"
		}
		o.Rows = append(o.Rows, []string{s.Segment, strconv.FormatInt(s.StartOffset, 10), strconv.FormatInt(s.Length, 10),
			strconv.FormatInt(s.TieredOffset, 10), strconv.FormatInt(s.UntieredBytes, 10),
			(time.Duration(s.LagMillis) * time.Millisecond).String(), errText})
	}
	return o
}

func streamScale(c *cli.Context, g *globalOptions, o *streamScaleOptions) error {
	scope, stream, p, err := streamAndPrinter(c, g)
	if err != nil {
		return err
	}
	var req api.ScaleRequest
	for _, s := range strings.Split(o.Seal, ",") {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("--seal %q: %q is not a segment number", o.Seal, s)
		}
		req.SealedSegments = append(req.SealedSegments, n)
	}
	for _, r := range strings.Split(o.Ranges, ",") {
		lo, hi, ok := strings.Cut(r, "-")
		low, err1 := strconv.ParseFloat(lo, 64)
		high, err2 := strconv.ParseFloat(hi, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("--ranges %q: %q is not LOW-HIGH", o.Ranges, r)
		}
		req.NewRanges = append(req.NewRanges, api.KeyRange{Low: low, High: high})
	}
	segs, err := apiClient(g).Scale(c.Context, scope, stream, req)
	if err != nil {
		return err
	}
	return p.Print(segmentOutput(segs))
}

func streamTruncate(c *cli.Context, g *globalOptions, text string) error {
	scope, stream, err := streamArg(c)
	if err != nil {
		return err
	}
	cut, err := api.ParseStreamCut(text)
	if err != nil {
		return fmt.Errorf("--cut: %v", strings.TrimPrefix(err.Error(), api.ErrInvalid.Error()+": "))
	}
	if len(cut) == 0 {
		return fmt.Errorf("--cut: empty")
	}
	prefix := scope + "/" + stream + "/"
	for seg := range cut {
		if !strings.HasPrefix(seg, prefix) {
			return fmt.Errorf("--cut: segment %s is not of stream %s/%s", seg, scope, stream)
		}
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	if err := apiClient(g).TruncateStream(c.Context, scope, stream, cut); err != nil {
		return err
	}
	name := scope + "/" + stream
	return p.done("truncated stream "+name, map[string]any{"stream": name, "truncated": true, "cut": cut})
}

// streamSimple runs seal and delete, which take SCOPE/STREAM and say
// what they did.
func streamSimple(c *cli.Context, g *globalOptions, what string) error {
	scope, stream, p, err := streamAndPrinter(c, g)
	if err != nil {
		return err
	}
	cl := apiClient(g)
	done := "sealed"
	if what == "seal" {
		err = cl.SealStream(c.Context, scope, stream)
	} else {
		done = "deleted"
		err = cl.DeleteStream(c.Context, scope, stream)
	}
	if err != nil {
		return err
	}
	name := scope + "/" + stream
	return p.done(done+" stream "+name, map[string]any{"stream": name, done: true})
}

func streamOutput(streams []api.StreamInfo, json any) output {
	o := output{Columns: []string{"STREAM", "STATE", "EPOCH", "SCALING", "RETENTION", "TAGS"}, JSON: json}
	for _, s := range streams {
		o.Rows = append(o.Rows, []string{s.ScopeName + "/" + s.StreamName, state(s), strconv.FormatInt(s.Epoch, 10),
			scaling(s.ScalingPolicy), retention(s.RetentionPolicy), tagText(s.Tags)})
	}
	return o
}

func segmentOutput(segs []api.SegmentRange) output {
	if segs == nil {
		segs = []api.SegmentRange{}
	}
	o := output{Columns: []string{"SEGMENT", "NUMBER", "EPOCH", "KEYS"}, JSON: segs}
	for _, s := range segs {
		o.Rows = append(o.Rows, []string{s.Segment, strconv.FormatInt(s.Number, 10), strconv.FormatInt(s.Epoch, 10),
			fmt.Sprintf("[%v, %v)", s.KeyLow, s.KeyHigh)})
	}
	return o
}

func state(s api.StreamInfo) string {
	if s.Sealed {
		return "sealed"
	}
	return "open"
}

func scaling(p api.ScalingPolicy) string {
	switch p.Type {
	case api.FixedNumSegments:
		return fmt.Sprintf("fixed %d", p.MinSegments)
	case api.ByRateInEventsPerSec:
		return fmt.Sprintf("events %d/s x%d min %d", p.TargetRate, p.ScaleFactor, p.MinSegments)
	case api.ByRateInKBytesPerSec:
		return fmt.Sprintf("bytes %dKB/s x%d min %d", p.TargetRate, p.ScaleFactor, p.MinSegments)
	}
	return p.Type
}

func retention(r *api.RetentionPolicy) string {
	switch {
	case r == nil:
		return "-"
	case r.Type == api.RetentionLimitedDays:
		return fmt.Sprintf("%dd", r.Value)
	case r.Type == api.RetentionLimitedSizeMB:
		return fmt.Sprintf("%dMiB", r.Value)
	}
	return fmt.Sprintf("%s %d", r.Type, r.Value)
}

func tagText(tags map[string]string) string {
	if len(tags) == 0 {
		return "-"
	}
	out := make([]string, 0, len(tags))
	for k, v := range tags {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
