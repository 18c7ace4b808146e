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
// the port given on its command line. An HDFS head listens on three
// ports (Port is its NameNode RPC port); an NFS or S3 head on one. Every
// head was given one controller's URL; the other kinds leave it empty.
type Endpoint struct {
	TaskID string `json:"task"`
	Host   string `json:"host"`
	Port   int    `json:"port"`
	// DataPort (DataNode transfer) and HTTPPort (WebHDFS) of a head.
	DataPort int `json:"dataPort,omitempty"`
	HTTPPort int `json:"httpPort,omitempty"`
	// Controller is the REST URL a head was launched with (--controller).
	Controller string `json:"controller,omitempty"`
}

// Addr is "host:port".
func (e Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// TaskBuilder makes the TaskInfo of a LAUNCH: res are the task's
// resources (reserved ones labelled, the volume, the port); the driver
// sets the task and agent ids.
type TaskBuilder func(op plan.Op, ep Endpoint, res mesos.Resources) mesos.TaskInfo

// S3CredentialsEnv is the environment variable that holds the S3
// heads' access keys, "ACCESS:SECRET[,ACCESS:SECRET...]": read by
// `sluice scheduler` from its own environment and set in each S3 head
// task's, where `sluice s3-gateway` reads it.
const S3CredentialsEnv = "SLUICE_S3_CREDENTIALS"

// RoleCommand is the sluice command (and the executor's --role) a pod
// kind runs: "controller", "node", "hdfs-gateway", "nfs-export" or
// "s3-gateway".
func RoleCommand(kind plan.PodKind) string {
	switch kind {
	case plan.HDFSHead:
		return "hdfs-gateway"
	case plan.NFSHead:
		return "nfs-export"
	case plan.S3Head:
		return "s3-gateway"
	}
	return string(kind)
}

// RoleArgs returns the command line of the pod's role, as the executor
// runs it after "--": `controller ...` or `node ...` in cluster mode,
// `hdfs-gateway ...`, `nfs-export ...` or `s3-gateway ...` for a head.
// volumePath is the node's persistent volume (the data directory).
func (c Config) RoleArgs(op plan.Op, ep Endpoint, volumePath string) []string {
	switch op.PodKind {
	case plan.HDFSHead:
		return headArgs(ep)
	case plan.NFSHead, plan.S3Head:
		return c.listenHeadArgs(op.PodKind, ep)
	}
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

// headArgs is an HDFS head's command line: it reads tier 2 through the
// controller it is given (the head is stateless), listens on every
// interface and gives clients the agent's hostname.
func headArgs(ep Endpoint) []string {
	all := func(port int) string { return "0.0.0.0:" + strconv.Itoa(port) }
	args := []string{"hdfs-gateway"}
	if ep.Controller != "" {
		args = append(args, "--controller", ep.Controller)
	}
	return append(args,
		"--rpc-addr", all(ep.Port),
		"--data-addr", all(ep.DataPort),
		"--http-addr", all(ep.HTTPPort),
		"--advertise", ep.Host,
	)
}

// listenHeadArgs is an NFS or S3 head's command line: like an HDFS
// head it reads tier 2 through the controller it is given, and it
// listens on one port on every interface (neither protocol sends
// clients elsewhere, so there is nothing to advertise). An S3 head gets
// --anonymous when Config.S3Anonymous; its access keys come in the
// environment (TaskCommand), never on the command line.
func (c Config) listenHeadArgs(kind plan.PodKind, ep Endpoint) []string {
	args := []string{RoleCommand(kind)}
	if ep.Controller != "" {
		args = append(args, "--controller", ep.Controller)
	}
	args = append(args, "--listen", "0.0.0.0:"+strconv.Itoa(ep.Port))
	if kind == plan.S3Head && c.S3Anonymous {
		args = append(args, "--anonymous")
	}
	return args
}

// TaskCommand is the CommandInfo of a pod's executor: `<binary> executor
// --role ROLE -- <RoleArgs>`, run by the shell in the sandbox (so that
// $MESOS_SANDBOX names the node's volume), with the artifact and the
// HDFS configuration fetched first. A head's executor probes its port
// (an HDFS head's RPC port; --health-addr 127.0.0.1:PORT): a TCP
// connection accepted. An S3 head's environment has S3CredentialsEnv:
// a SECRET variable referring to Config.S3CredentialsSecret, resolved
// by the agent, or else the plain value of Config.S3Credentials when
// they are given.
func (c Config) TaskCommand(op plan.Op, ep Endpoint) mesos.CommandInfo {
	volume := `"$MESOS_SANDBOX"/` + shellQuote(c.volumePath(op))
	words := []string{shellQuote(c.Binary), "executor", "--role", RoleCommand(op.PodKind)}
	if op.PodKind.IsHead() {
		words = append(words, "--health-addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(ep.Port)))
	}
	words = append(words, "--")
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
	if v, ok := c.s3CredentialsVar(); ok && op.PodKind == plan.S3Head {
		if ci.Environment == nil {
			ci.Environment = &mesos.Environment{}
		}
		ci.Environment.Variables = append(ci.Environment.Variables, v)
	}
	return ci
}

// s3CredentialsVar is an S3 head's S3CredentialsEnv: with
// S3CredentialsSecret, a variable of type SECRET whose Secret is a
// REFERENCE to it (Mesos' docs/secrets.md, "Environment-based Secrets"),
// which only the agent's secret resolver turns into the keys and which
// Mesos' endpoints show as the reference; else the plain value of
// S3Credentials, if any.
func (c Config) s3CredentialsVar() (mesos.Environment_Variable, bool) {
	switch {
	case c.S3CredentialsSecret != "":
		secretType := mesos.Environment_Variable_SECRET
		return mesos.Environment_Variable{Name: S3CredentialsEnv, Type: &secretType, Secret: &mesos.Secret{
			Type: mesos.Secret_REFERENCE, Reference: &mesos.Secret_Reference{Name: c.S3CredentialsSecret},
		}}, true
	case c.S3Credentials != "":
		creds := c.S3Credentials
		return mesos.Environment_Variable{Name: S3CredentialsEnv, Value: &creds}, true
	}
	return mesos.Environment_Variable{}, false
}

func (c Config) volumePath(op plan.Op) string {
	if op.Volume != nil && op.Volume.ContainerPath != "" {
		return op.Volume.ContainerPath
	}
	return "wal"
}

// executorTask is the default TaskBuilder: the task runs under its own
// custom executor (id = task id) whose command is TaskCommand. The
// executor gets Config.ExecutorShare of the pod's cpus and mem (from
// the pod's reservation for a node), the task the rest.
func (c Config) executorTask(op plan.Op, ep Endpoint, res mesos.Resources) mesos.TaskInfo {
	cmd := c.TaskCommand(op, ep)
	name := "sluice-" + RoleCommand(op.PodKind) + " " + op.Pod
	custom := mesos.ExecutorInfo_CUSTOM
	task, exec := splitExecutor(res, c.ExecutorShare)
	return mesos.TaskInfo{
		Name:      op.Pod,
		Resources: task,
		Executor: &mesos.ExecutorInfo{
			Type:       custom,
			ExecutorID: mesos.ExecutorID{Value: op.TaskID},
			Name:       &name,
			Command:    &cmd,
			Resources:  exec,
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
