package scheduler

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// Endpoint is where a launched task listens: the agent's hostname and
// the port given on its command line.
type Endpoint struct {
	TaskID string `json:"task"`
	Host   string `json:"host"`
	Port   int    `json:"port"`
}

// Addr is "host:port".
func (e Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// TaskBuilder makes the TaskInfo of a LAUNCH: res are the task's
// resources (reserved ones labelled, the volume, the port); the driver
// sets the task and agent ids.
type TaskBuilder func(op plan.Op, ep Endpoint, res mesos.Resources) mesos.TaskInfo

// RoleArgs returns the command line of the pod's role, as the executor
// runs it after "--": `controller ...` or `node ...` in cluster mode.
// volumePath is the node's persistent volume (the data directory).
func (c Config) RoleArgs(op plan.Op, ep Endpoint, volumePath string) []string {
	port := strconv.Itoa(ep.Port)
	args := []string{string(op.PodKind)}
	if op.PodKind == plan.Node {
		args = append(args, "--data", volumePath)
	}
	args = append(args,
		"--zk", strings.Join(c.ZK, ","),
		"--zk-root", c.ClusterRoot(),
		"--id", op.Pod,
		"--listen", "0.0.0.0:"+port,
		"--advertise", ep.Addr(),
		"--containers", strconv.Itoa(c.Containers),
	)
	if c.Tier2 != "" {
		args = append(args, "--tier2", c.Tier2)
	}
	return args
}

// TaskCommand is the CommandInfo of a pod's executor: `<binary> executor
// --role ROLE -- <RoleArgs>`, run by the shell in the sandbox (so that
// $MESOS_SANDBOX names the node's volume), with the artifact and the
// HDFS configuration fetched first.
func (c Config) TaskCommand(op plan.Op, ep Endpoint) mesos.CommandInfo {
	volume := `"$MESOS_SANDBOX"/` + shellQuote(c.volumePath(op))
	words := []string{shellQuote(c.Binary), "executor", "--role", string(op.PodKind), "--"}
	const volumeMark = "\x00volume"
	for _, a := range c.RoleArgs(op, ep, volumeMark) {
		if a == volumeMark {
			words = append(words, volume) // expanded by the shell
			continue
		}
		words = append(words, shellQuote(a))
	}
	value := strings.Join(words, " ")
	shell := true
	ci := mesos.CommandInfo{Shell: &shell, Value: &value}
	t := true
	if c.ArtifactURI != "" {
		ci.URIs = append(ci.URIs, mesos.CommandInfo_URI{Value: c.ArtifactURI, Extract: &t})
	}
	if c.HDFSConfigURL != "" {
		f := false
		base := strings.TrimSuffix(c.HDFSConfigURL, "/")
		for _, name := range []string{"hdfs-site.xml", "core-site.xml"} {
			ci.URIs = append(ci.URIs, mesos.CommandInfo_URI{Value: base + "/" + name, Extract: &f})
		}
		sandbox := "."
		ci.Environment = &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "HADOOP_CONF_DIR", Value: &sandbox}}}
	}
	return ci
}

func (c Config) volumePath(op plan.Op) string {
	if op.Volume != nil && op.Volume.ContainerPath != "" {
		return op.Volume.ContainerPath
	}
	return "wal"
}

// executorTask is the default TaskBuilder: the task runs under its own
// custom executor (id = task id) whose command is TaskCommand.
func (c Config) executorTask(op plan.Op, ep Endpoint, res mesos.Resources) mesos.TaskInfo {
	cmd := c.TaskCommand(op, ep)
	name := "sluice-" + string(op.PodKind) + " " + op.Pod
	custom := mesos.ExecutorInfo_CUSTOM
	return mesos.TaskInfo{
		Name:      op.Pod,
		Resources: res,
		Executor: &mesos.ExecutorInfo{
			Type:       custom,
			ExecutorID: mesos.ExecutorID{Value: op.TaskID},
			Name:       &name,
			Command:    &cmd,
		},
	}
}

// shellQuote quotes s for sh unless it is made of safe characters only.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=@+", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// portFrom takes a port for a task from an offer's unreserved "ports"
// resource: want itself if offered, or for want 0 the lowest offered
// port not in used. It returns the port and the resource to add to the
// task (nil if the port is not in the offer).
func portFrom(o *mesos.Offer, want int, used map[int]bool) (int, *mesos.Resource) {
	if o != nil {
		for _, r := range o.Resources {
			if r.Name != "ports" || r.Ranges == nil || !r.IsUnreserved() {
				continue
			}
			for _, rg := range r.Ranges.Range {
				for p := rg.Begin; p <= rg.End; p++ {
					if (want != 0 && int(p) != want) || used[int(p)] {
						continue
					}
					used[int(p)] = true
					t := mesos.RANGES
					res := mesos.Resource{Name: "ports", Type: &t, Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: p, End: p}}}}
					if r.Role != nil {
						res.Role = r.Role
					}
					return int(p), &res
				}
			}
		}
	}
	return want, nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return fmt.Sprintf("scheduler-%d", os.Getpid())
	}
	return h
}
