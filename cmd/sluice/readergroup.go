package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client"
)

// readerGroupCreateOptions are the flags of `sluice readergroup create`.
type readerGroupCreateOptions struct {
	Stream string // --stream SCOPE/STREAM
	From   string // --from head|tail|CUT
	To     string // --to CUT: the group's end cut
}

func readerGroupCommand(g *globalOptions) *cli.Command {
	co := &readerGroupCreateOptions{}
	return &cli.Command{
		Name:  "readergroup",
		Usage: "create, describe, show the lag of, checkpoint, reset and delete reader groups",
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "create a reader group of a stream",
				ArgsUsage: "SCOPE/GROUP",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "stream", Usage: "the group's stream `SCOPE/STREAM`", Required: true, Destination: &co.Stream},
					&cli.StringFlag{Name: "from", Usage: "start at `WHERE`: head, tail, or a stream cut", Value: "head", Destination: &co.From},
					&cli.StringFlag{Name: "to", Usage: "end at `CUT`: the group's readers read up to this stream cut and stop there", Destination: &co.To},
				},
				Action: func(c *cli.Context) error { return readerGroupCreate(c, g, co) },
			},
			{
				Name:      "describe",
				Usage:     "show a group's readers, their segments and positions",
				ArgsUsage: "SCOPE/GROUP",
				Action:    func(c *cli.Context) error { return readerGroupDescribe(c, g) },
			},
			{
				Name:  "lag",
				Usage: "show how many bytes each reader is behind its segments' ends, and the total",
				Description: "Bytes only (segment length minus position); events are not counted, which would mean reading\n" +
					"the data. Segments not started yet (successors of segments being read) are not counted.",
				ArgsUsage: "SCOPE/GROUP",
				Action:    func(c *cli.Context) error { return readerGroupLag(c, g) },
			},
			readerGroupCheckpointCommand(g),
			readerGroupResetCommand(g),
			{
				Name:      "delete",
				Usage:     "delete a reader group",
				ArgsUsage: "SCOPE/GROUP",
				Action:    func(c *cli.Context) error { return readerGroupDelete(c, g) },
			},
		},
	}
}

// groupArg parses SCOPE/GROUP (the same shape as SCOPE/STREAM).
func groupArg(c *cli.Context) (scope, group string, err error) {
	a, err := args(c, "SCOPE/GROUP")
	if err != nil {
		return "", "", err
	}
	return splitGroup(c, a[0])
}

// splitGroup parses the argument a as SCOPE/GROUP.
func splitGroup(c *cli.Context, a string) (scope, group string, err error) {
	scope, group, ok := strings.Cut(a, "/")
	if !ok || scope == "" || group == "" || strings.Contains(group, "/") {
		return "", "", usageErr{fmt.Errorf("%s: %q is not SCOPE/GROUP", commandName(c), a)}
	}
	return scope, group, nil
}

// openGroup connects to the controller and opens the reader group
// scope/group; the caller closes the client.
func openGroup(c *cli.Context, g *globalOptions, scope, group string) (*client.Client, *client.ReaderGroup, error) {
	cl, err := client.New(c.Context, g.Controller)
	if err != nil {
		return nil, nil, err
	}
	rg, err := cl.ReaderGroup(scope, group)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, rg, nil
}

func readerGroupCreate(c *cli.Context, g *globalOptions, o *readerGroupCreateOptions) error {
	scope, group, err := groupArg(c)
	if err != nil {
		return err
	}
	sscope, stream, ok := strings.Cut(o.Stream, "/")
	if !ok || sscope != scope || stream == "" {
		return fmt.Errorf("--stream %q: want SCOPE/STREAM in the group's scope %s", o.Stream, scope)
	}
	start, err := readStart(o.From)
	if err != nil {
		return err
	}
	opts := []client.GroupOption{client.GroupFrom(start)}
	if o.To != "" {
		end, err := readEnd(o.To)
		if err != nil {
			return err
		}
		opts = append(opts, client.GroupTo(end))
	}
	cl, err := client.New(c.Context, g.Controller)
	if err != nil {
		return err
	}
	defer cl.Close()
	rg, err := cl.NewReaderGroup(c.Context, scope, group, stream, opts...)
	if err != nil {
		return fmt.Errorf("readergroup create %s/%s: %w", scope, group, err)
	}
	if g.Output == formatJSON {
		// The group as describe shows it.
		st, gstream, _, err := rg.State(c.Context)
		if err != nil {
			return fmt.Errorf("readergroup create %s/%s: created, but: %w", scope, group, err)
		}
		return printGroup(c, scope+"/"+group, gstream, st)
	}
	_, err = fmt.Fprintf(c.App.Writer, "created reader group %s/%s of %s\n", scope, group, o.Stream)
	return err
}

// groupDescription is the JSON of `readergroup describe` and `create`.
type groupDescription struct {
	Group  string             `json:"group"`
	Stream string             `json:"stream"`
	State  *client.GroupState `json:"state"`
}

// printGroup prints a group's description as JSON.
func printGroup(c *cli.Context, group, stream string, st *client.GroupState) error {
	p, err := newPrinter(c.App.Writer, formatJSON)
	if err != nil {
		return err
	}
	return p.Print(output{JSON: groupDescription{Group: group, Stream: stream, State: st}})
}

// groupState reads the group named by the argument; it returns the
// client, the group's state and stream, and the group's name SCOPE/GROUP.
func groupState(c *cli.Context, g *globalOptions) (*client.Client, *client.GroupState, string, string, error) {
	scope, group, err := groupArg(c)
	if err != nil {
		return nil, nil, "", "", err
	}
	cl, rg, err := openGroup(c, g, scope, group)
	if err != nil {
		return nil, nil, "", "", err
	}
	st, stream, _, err := rg.State(c.Context)
	if err != nil {
		cl.Close()
		return nil, nil, "", "", fmt.Errorf("%s %s/%s: %w", commandName(c), scope, group, err)
	}
	return cl, st, stream, scope + "/" + group, nil
}

// groupRow is one segment of a group: who reads it and where.
type groupRow struct {
	Reader   string `json:"reader"`
	Segment  string `json:"segment"`
	Position int64  `json:"position"`
	Length   int64  `json:"length,omitempty"`
	Behind   int64  `json:"bytesBehind,omitempty"`
}

// rows lists every segment of the state: readers' (sorted by reader),
// then unassigned, then ended ones waiting for their successors.
func rows(st *client.GroupState) []groupRow {
	var out []groupRow
	ids := make([]string, 0, len(st.Readers))
	for id := range st.Readers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	add := func(reader string, m map[string]int64) {
		segs := make([]string, 0, len(m))
		for s := range m {
			segs = append(segs, s)
		}
		sort.Strings(segs)
		for _, s := range segs {
			out = append(out, groupRow{Reader: reader, Segment: s, Position: m[s]})
		}
	}
	for _, id := range ids {
		add(id, st.Readers[id].Segments)
		if len(st.Readers[id].Segments) == 0 {
			out = append(out, groupRow{Reader: id, Segment: "-", Position: 0})
		}
	}
	add("(unassigned)", st.Unassigned)
	ended := map[string]int64{}
	for s, e := range st.Ended {
		ended[s] = e.End
	}
	add("(ended)", ended)
	return out
}

func readerGroupDescribe(c *cli.Context, g *globalOptions) error {
	cl, st, stream, name, err := groupState(c, g)
	if err != nil {
		return err
	}
	defer cl.Close()
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	out := output{Columns: []string{"READER", "SEGMENT", "POSITION", "LAST_SEEN"}}
	for _, r := range rows(st) {
		seen := ""
		if m := st.Readers[r.Reader]; m != nil {
			seen = time.UnixMilli(m.LastSeen).UTC().Format(time.RFC3339Nano)
		}
		out.Rows = append(out.Rows, []string{r.Reader, r.Segment, strconv.FormatInt(r.Position, 10), seen})
	}
	if g.Output == formatJSON {
		return printGroup(c, name, stream, st)
	}
	if st.Checkpoint != nil {
		defer fmt.Fprintf(c.App.ErrWriter, "checkpoint %s in progress, waiting for %s\n", st.Checkpoint.Name, strings.Join(st.Checkpoint.Pending, ", "))
	}
	defer describeCheckpoints(c.App.ErrWriter, st)
	return p.Print(out)
}

func readerGroupLag(c *cli.Context, g *globalOptions) error {
	cl, st, _, _, err := groupState(c, g)
	if err != nil {
		return err
	}
	defer cl.Close()
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	var rs []groupRow
	var total int64
	perReader := map[string]int64{}
	for _, r := range rows(st) {
		if r.Segment == "-" || r.Reader == "(ended)" {
			continue
		}
		conn, err := cl.SegmentConn(c.Context, r.Segment)
		if err != nil {
			return fmt.Errorf("readergroup lag: %s: %w", r.Segment, err)
		}
		info, err := conn.GetSegmentInfo(c.Context, r.Segment)
		if err != nil {
			return fmt.Errorf("readergroup lag: %s: %w", r.Segment, err)
		}
		r.Length = info.Length
		r.Behind = max(info.Length-r.Position, 0)
		total += r.Behind
		perReader[r.Reader] += r.Behind
		rs = append(rs, r)
	}
	out := output{Columns: []string{"READER", "SEGMENT", "POSITION", "LENGTH", "BYTES_BEHIND"}}
	for _, r := range rs {
		out.Rows = append(out.Rows, []string{r.Reader, r.Segment, strconv.FormatInt(r.Position, 10),
			strconv.FormatInt(r.Length, 10), strconv.FormatInt(r.Behind, 10)})
	}
	out.Rows = append(out.Rows, []string{"TOTAL", "", "", "", strconv.FormatInt(total, 10)})
	out.JSON = map[string]any{"segments": nonNilRows(rs), "readers": perReader, "totalBytesBehind": total}
	return p.Print(out)
}

func nonNilRows(r []groupRow) []groupRow {
	if r == nil {
		return []groupRow{}
	}
	return r
}

func readerGroupDelete(c *cli.Context, g *globalOptions) error {
	scope, group, err := groupArg(c)
	if err != nil {
		return err
	}
	cl, rg, err := openGroup(c, g, scope, group)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := rg.Delete(c.Context); err != nil {
		return fmt.Errorf("readergroup delete %s/%s: %w", scope, group, err)
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	return p.done("deleted reader group "+scope+"/"+group, map[string]any{"group": scope + "/" + group, "deleted": true})
}

// groupReaderID names the reader `sluice read --group` joins as.
func groupReaderID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "sluice"
	}
	return fmt.Sprintf("%s-%d", h, os.Getpid())
}

var errGroupStream = errors.New("the group reads another stream")
