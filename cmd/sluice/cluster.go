package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// clusterOptions are the flags of the `sluice cluster` commands.
type clusterOptions struct {
	Scheduler string        // --scheduler, env SLUICE_SCHEDULER: the scheduler's API URL
	Set       int           // --set: the new count (nodes, controllers, heads); unset: only list
	Timeout   time.Duration // --timeout: how long a lowering of --set is watched
	Kind      string        // --kind of `cluster heads`: hdfs, nfs or s3; "": every kind (--set: hdfs)
}

// headKinds are the values of `cluster heads --kind`.
var headKinds = map[string]plan.PodKind{"hdfs": plan.HDFSHead, "nfs": plan.NFSHead, "s3": plan.S3Head}

// clusterPoll is how often a lowering's progress is read.
const clusterPoll = 200 * time.Millisecond

func clusterCommand(g *globalOptions) *cli.Command {
	o := &clusterOptions{}
	schedFlag := &cli.StringFlag{
		Name:        "scheduler",
		Usage:       "the Mesos scheduler's API `URL` (http://HOST:PORT; on DC/OS <dcos-url>/service/<name>)",
		EnvVars:     []string{"SLUICE_SCHEDULER"},
		Destination: &o.Scheduler,
	}
	countFlags := func(what string) []cli.Flag {
		return []cli.Flag{
			schedFlag,
			&cli.IntFlag{Name: "set", Usage: "change the number of " + what + " to `N` (a lowering waits until the removed ones are drained and gone)", Destination: &o.Set},
			durationFlag("timeout", "give up watching a lowering after `TIME` (it goes on in the scheduler)", 10*time.Minute, &o.Timeout),
		}
	}
	return &cli.Command{
		Name:  "cluster",
		Usage: "operate a Sluice cluster on Mesos through its scheduler",
		Subcommands: []*cli.Command{
			{
				Name:   "status",
				Usage:  "show the deployment plan: every pod's step, task state and addresses",
				Flags:  []cli.Flag{schedFlag},
				Action: func(c *cli.Context) error { return clusterStatus(c, g, o) },
			},
			{
				Name:   "endpoints",
				Usage:  "show the controllers' REST URLs, the nodes' addresses, the heads' hdfs://, webhdfs://, nfs:// and S3 http:// URIs and ZooKeeper",
				Flags:  []cli.Flag{schedFlag},
				Action: func(c *cli.Context) error { return clusterEndpoints(c, g, o) },
			},
			{
				Name:   "nodes",
				Usage:  "list the node pods, or change their number with --set",
				Flags:  countFlags("nodes"),
				Action: func(c *cli.Context) error { return clusterCount(c, g, o, plan.Node) },
			},
			{
				Name:   "controllers",
				Usage:  "list the controller pods, or change their number with --set",
				Flags:  countFlags("controllers"),
				Action: func(c *cli.Context) error { return clusterCount(c, g, o, plan.Controller) },
			},
			{
				Name:  "heads",
				Usage: "list the head pods (HDFS, NFS, S3), or change the number of one kind with --set (0: none)",
				Flags: append(countFlags("heads of --kind (default hdfs)"),
					&cli.StringFlag{Name: "kind", Usage: "the heads' `KIND`: hdfs, nfs or s3 (default: list every kind; --set changes hdfs)", Destination: &o.Kind}),
				Action: func(c *cli.Context) error { return clusterHeads(c, g, o) },
			},
			uninstallCommand(g, o, schedFlag),
			{
				Name:  "pod",
				Usage: "restart or replace one pod",
				Subcommands: []*cli.Command{
					{
						Name:      "restart",
						Usage:     "kill the pod's task; it is relaunched in place (a node on its volume)",
						ArgsUsage: "NAME",
						Flags:     []cli.Flag{schedFlag},
						Action:    func(c *cli.Context) error { return clusterPod(c, g, o, "restart") },
					},
					{
						Name:      "replace",
						Usage:     "abandon the pod's reservation and volume and place it anew (for an agent that will not return; a node's WAL is lost)",
						ArgsUsage: "NAME",
						Flags:     []cli.Flag{schedFlag},
						Action:    func(c *cli.Context) error { return clusterPod(c, g, o, "replace") },
					},
				},
			},
			clusterRestartCommand(g, o, schedFlag),
			clusterPauseCommand(g, o, schedFlag, true),
			clusterPauseCommand(g, o, schedFlag, false),
		},
	}
}

func (o *clusterOptions) client(c *cli.Context) (*scheduler.Client, error) {
	if o.Scheduler == "" {
		return nil, fmt.Errorf("%s: no scheduler: give --scheduler URL or set SLUICE_SCHEDULER", commandName(c))
	}
	return scheduler.NewClient(o.Scheduler, nil)
}

func clusterStatus(c *cli.Context, g *globalOptions, o *clusterOptions) error {
	cl, err := o.prepare(c)
	if err != nil {
		return err
	}
	prog, err := cl.Plan(c.Context)
	if err != nil {
		return err
	}
	return printPlan(c.App.Writer, g, prog)
}

func printProgress(w io.Writer, g *globalOptions, prog scheduler.PlanView) error {
	p, err := newPrinter(w, g.Output)
	if err != nil {
		return err
	}
	out := output{Columns: []string{"PHASE", "POD", "STATUS", "STATE", "TASK", "AGENT", "ADDRESS", "WAITING"}, JSON: prog}
	for _, ph := range prog.Phases {
		out.Rows = append(out.Rows, []string{ph.Name, "", string(ph.Status), "", "", "", "", ""})
		for _, s := range ph.Steps {
			out.Rows = append(out.Rows, []string{"", s.Pod, string(s.Status), dash(string(s.State)), dash(s.TaskID), dash(s.AgentID), dash(strings.Join(s.Addresses, " ")), dash(s.Waiting)})
		}
	}
	return p.Print(out)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (o *clusterOptions) prepare(c *cli.Context) (*scheduler.Client, error) {
	if _, err := args(c); err != nil {
		return nil, err
	}
	return o.client(c)
}

func clusterEndpoints(c *cli.Context, g *globalOptions, o *clusterOptions) error {
	cl, err := o.prepare(c)
	if err != nil {
		return err
	}
	eps, err := cl.Endpoints(c.Context)
	if err != nil {
		return err
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	out := output{Columns: []string{"KIND", "ADDRESS"}, JSON: eps}
	for _, u := range eps.Controllers {
		out.Rows = append(out.Rows, []string{"controller", u})
	}
	for _, a := range eps.Nodes {
		out.Rows = append(out.Rows, []string{"node", a})
	}
	for _, u := range eps.HDFS {
		out.Rows = append(out.Rows, []string{"hdfs", u})
	}
	for _, u := range eps.WebHDFS {
		out.Rows = append(out.Rows, []string{"webhdfs", u})
	}
	for _, u := range eps.NFS {
		out.Rows = append(out.Rows, []string{"nfs", u})
	}
	for _, u := range eps.S3 {
		out.Rows = append(out.Rows, []string{"s3", u})
	}
	out.Rows = append(out.Rows, []string{"zookeeper", eps.ZooKeeper + eps.ZKRoot})
	return p.Print(out)
}

func printPods(w io.Writer, g *globalOptions, pods []scheduler.PodInfo) error {
	p, err := newPrinter(w, g.Output)
	if err != nil {
		return err
	}
	out := output{Columns: []string{"NAME", "GOAL", "STATE", "TASK", "AGENT", "ENDPOINT"}, JSON: pods}
	for _, pd := range pods {
		goal := string(pd.Goal)
		if pd.Draining {
			goal += " (draining)"
		}
		out.Rows = append(out.Rows, []string{pd.Name, goal, dash(string(pd.State)), dash(pd.TaskID), dash(pd.AgentID), dash(strings.Join(pd.Addresses(), " "))})
	}
	return p.Print(out)
}

func podsOf(pods []scheduler.PodInfo, kinds ...plan.PodKind) []scheduler.PodInfo {
	out := []scheduler.PodInfo{}
	for _, p := range pods {
		for _, k := range kinds {
			if p.Kind == k {
				out = append(out, p)
			}
		}
	}
	return out
}

// clusterHeads is `cluster heads`: without --kind it lists every head;
// --kind hdfs|nfs|s3 picks one kind, the one --set changes (default
// hdfs, as before there were other heads).
func clusterHeads(c *cli.Context, g *globalOptions, o *clusterOptions) error {
	kind := plan.HDFSHead
	if o.Kind != "" {
		k, ok := headKinds[o.Kind]
		if !ok {
			return fmt.Errorf("%s: --kind %q: want hdfs, nfs or s3", commandName(c), o.Kind)
		}
		kind = k
	}
	if o.Kind == "" && !c.IsSet("set") {
		cl, err := o.prepare(c)
		if err != nil {
			return err
		}
		pods, err := cl.Pods(c.Context)
		if err != nil {
			return err
		}
		return printPods(c.App.Writer, g, podsOf(pods, plan.HeadKinds...))
	}
	return clusterCount(c, g, o, kind)
}

// clusterCount lists the pods of kind, or with --set changes their
// number; a lowering is watched until the removed pods are gone.
func clusterCount(c *cli.Context, g *globalOptions, o *clusterOptions, kind plan.PodKind) error {
	cl, err := o.prepare(c)
	if err != nil {
		return err
	}
	if !c.IsSet("set") {
		pods, err := cl.Pods(c.Context)
		if err != nil {
			return err
		}
		return printPods(c.App.Writer, g, podsOf(pods, kind))
	}
	req := scheduler.CountsRequest{Nodes: &o.Set}
	switch {
	case kind.IsHead() && o.Set < 0:
		return fmt.Errorf("%s: --set %d: want 0 or more", commandName(c), o.Set)
	case kind == plan.HDFSHead:
		req = scheduler.CountsRequest{Heads: &o.Set}
	case kind == plan.NFSHead:
		req = scheduler.CountsRequest{NFSHeads: &o.Set}
	case kind == plan.S3Head:
		req = scheduler.CountsRequest{S3Heads: &o.Set}
	case o.Set < 1:
		return fmt.Errorf("%s: --set %d: want at least 1", commandName(c), o.Set)
	case kind == plan.Controller:
		req = scheduler.CountsRequest{Controllers: &o.Set}
	}
	if _, err := cl.SetCounts(c.Context, req); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, o.Timeout)
	defer cancel()
	pods, err := waitRemoved(ctx, cl, kind, g.Output == formatTable, c.App.Writer)
	if err != nil {
		return fmt.Errorf("%s: %w (the scheduler goes on; see 'sluice cluster status')", commandName(c), err)
	}
	if g.Output == formatJSON {
		prog, err := cl.Plan(c.Context)
		if err != nil {
			return err
		}
		return printProgress(c.App.Writer, g, prog)
	}
	noun := string(kind) + "s"
	switch kind {
	case plan.HDFSHead:
		noun = "heads"
	case plan.NFSHead:
		noun = "nfs heads"
	case plan.S3Head:
		noun = "s3 heads"
	}
	fmt.Fprintf(c.App.Writer, "%s: %d\n", noun, o.Set)
	return printPods(c.App.Writer, g, pods)
}

// waitRemoved polls the pods until none of kind is being decommissioned,
// printing each change of the decommissioned pods' progress (when
// show), and returns the pods of kind.
func waitRemoved(ctx context.Context, cl *scheduler.Client, kind plan.PodKind, show bool, w io.Writer) ([]scheduler.PodInfo, error) {
	last := map[string]string{}
	t := time.NewTicker(clusterPoll)
	defer t.Stop()
	for {
		pods, err := cl.Pods(ctx)
		if err != nil {
			return nil, err
		}
		mine := podsOf(pods, kind)
		now := map[string]string{}
		for _, p := range mine {
			if p.Goal != plan.GoalDecommission {
				continue
			}
			switch {
			case p.Draining:
				now[p.Name] = "draining: handing its containers over to the other nodes"
			case p.State == "" || p.State.Terminal():
				now[p.Name] = "stopped; releasing its resources"
			default:
				now[p.Name] = "stopping (" + string(p.State) + ")"
			}
		}
		for name := range last {
			if _, ok := now[name]; !ok && show {
				fmt.Fprintf(w, "%s: removed\n", name)
			}
		}
		for name, s := range now {
			if last[name] != s && show {
				fmt.Fprintf(w, "%s: %s\n", name, s)
			}
		}
		last = now
		if len(now) == 0 {
			return mine, nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			left := make([]string, 0, len(now))
			for name := range now {
				left = append(left, name)
			}
			return nil, fmt.Errorf("still removing %s: %w", strings.Join(left, ", "), ctx.Err())
		}
	}
}

func clusterPod(c *cli.Context, g *globalOptions, o *clusterOptions, action string) error {
	a, err := args(c, "NAME")
	if err != nil {
		return err
	}
	cl, err := o.client(c)
	if err != nil {
		return err
	}
	var pod scheduler.PodInfo
	if action == "restart" {
		pod, err = cl.Restart(c.Context, a[0])
	} else {
		pod, err = cl.Replace(c.Context, a[0])
	}
	if err != nil {
		return err
	}
	if g.Output == formatJSON {
		p, err := newPrinter(c.App.Writer, g.Output)
		if err != nil {
			return err
		}
		return p.Print(output{JSON: pod}) // the pod, changed
	}
	fmt.Fprintf(c.App.Writer, "%s: %s requested (task %s); 'sluice cluster status' shows its relaunch\n", pod.Name, action, dash(pod.TaskID))
	return nil
}
