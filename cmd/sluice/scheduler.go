package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/mesosauth"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// schedulerOptions are the flags of `sluice scheduler`: exactly the
// command-line contract of universe/README.md.
type schedulerOptions struct {
	Name, Role, Principal, User string
	MesosMaster                 string
	ZK, ZKRoot                  string
	APIPort                     int
	ArtifactURI                 string
	Controllers                 int
	ControllerCPUs              float64
	ControllerMem               float64
	ControllerPort              int
	Nodes                       int
	NodeCPUs, NodeMem, NodeDisk float64
	NodeDiskType                string
	NodePort                    int
	Heads                       int
	HeadCPUs, HeadMem           float64
	HeadRPCPort                 int
	HeadDataPort                int
	HeadHTTPPort                int
	NFSHeads                    int
	NFSHeadCPUs, NFSHeadMem     float64
	NFSHeadPort                 int
	S3Heads                     int
	S3HeadCPUs, S3HeadMem       float64
	S3HeadPort                  int
	S3Anonymous                 bool
	S3CredentialsSecret         string
	Containers                  int
	Tier2                       string
	HDFSConfigURL               string
	// ForgetFramework is the operator's one-off way out of a framework
	// the master removed; not part of the Marathon app's contract.
	ForgetFramework bool
	// SecretFile holds the secret of --principal, or a DC/OS service
	// account's credential JSON (package scheduler/mesosauth).
	SecretFile string
	Placement  placementOptions // --controller-placement, --node-placement, ...
	// Uninstall runs the uninstall plan (also SDK_UNINSTALL=true, as
	// Cosmos sets it).
	Uninstall bool
}

// Environment variables for tests and for agents that do not fetch
// --artifact-uri: SchedulerAPIHostEnv is the host the API listens on
// (default: every interface); TaskBinaryEnv is the sluice binary the
// tasks run (default ./sluice, the fetched artifact).
const (
	SchedulerAPIHostEnv = "SLUICE_SCHEDULER_API_HOST"
	TaskBinaryEnv       = "SLUICE_TASK_BINARY"
)

func schedulerCommand(g *globalOptions) *cli.Command {
	o := &schedulerOptions{}
	return &cli.Command{
		Name:  "scheduler",
		Usage: "run the Mesos framework scheduler: launch and keep the controller, node and head (HDFS, NFS, S3) tasks (DC/OS: see universe/)",
		Description: "S3 heads (--s3-heads) check requests against access keys (ACCESS:SECRET[,ACCESS:SECRET]).\n" +
			"With --s3-credentials-secret PATH each S3 head task's " + scheduler.S3CredentialsEnv + " is a Mesos\n" +
			"secret referring to PATH, filled in by the agent's secret resolver (DC/OS Enterprise).\n" +
			"Without it, the keys in the scheduler's environment variable " + scheduler.S3CredentialsEnv + "\n" +
			"are passed to each S3 head task as a plain environment variable, which the scheduler\n" +
			"never stores or prints but Mesos shows in its master's and agents' state endpoints.\n" +
			"Without keys S3 heads need --s3-anonymous.",
		Flags:  schedulerFlags(o),
		Action: func(c *cli.Context) error { return runScheduler(c, g, o) },
	}
}

// schedulerFlags are the flags of `sluice scheduler`, into o.
func schedulerFlags(o *schedulerOptions) []cli.Flag {
	str := func(name, usage, value string, dst *string) cli.Flag {
		return &cli.StringFlag{Name: name, Usage: usage, Value: value, Destination: dst}
	}
	num := func(name, usage string, value float64, dst *float64) cli.Flag {
		return &cli.Float64Flag{Name: name, Usage: usage, Value: value, Destination: dst}
	}
	integer := func(name, usage string, value int, dst *int) cli.Flag {
		return &cli.IntFlag{Name: name, Usage: usage, Value: value, Destination: dst}
	}
	return append([]cli.Flag{
		str("name", "service `NAME` = Mesos framework name", "sluice", &o.Name),
		str("role", "Mesos `ROLE` the resources are reserved to (default: from --name, as DC/OS services derive it: /prod/sluice -> prod__sluice-role); fixed at install", "", &o.Role),
		str("principal", "Mesos `PRINCIPAL` (may be empty)", "", &o.Principal),
		str("user", "`USER` the tasks run as", "nobody", &o.User),
		str("mesos-master", "Mesos master HTTP API `URL`", "http://leader.mesos:5050", &o.MesosMaster),
		str("zk", "ZooKeeper `HOSTS` (host:port,...)", "master.mesos:2181", &o.ZK),
		str("zk-root", "root `ZNODE` of this service's keys (default /dcos-service-NAME)", "", &o.ZKRoot),
		integer("api-port", "serve the scheduler's HTTP API on `PORT` (0: pick one and print it)", 0, &o.APIPort),
		str("artifact-uri", "`URI` of the sluice tarball the tasks fetch", "", &o.ArtifactURI),
		integer("controllers", "number of controllers `N`", 1, &o.Controllers),
		num("controller-cpus", "`CPUS` per controller", 1, &o.ControllerCPUs),
		num("controller-mem", "memory per controller, `MIB`", 1024, &o.ControllerMem),
		integer("controller-port", "controller REST `PORT` (0: a port from the offer)", 10080, &o.ControllerPort),
		integer("nodes", "number of nodes `N`", 3, &o.Nodes),
		num("node-cpus", "`CPUS` per node", 2, &o.NodeCPUs),
		num("node-mem", "memory per node, `MIB`", 4096, &o.NodeMem),
		num("node-disk", "persistent volume per node (its WAL), `MIB`", 10240, &o.NodeDisk),
		str("node-disk-type", "`TYPE` of disk the nodes' volumes are made on: ROOT (the agent's root disk), PATH (a PATH disk of the agent, --node-disk MiB of it) or MOUNT (a whole MOUNT disk of at least --node-disk MiB); fixed at install", "ROOT", &o.NodeDiskType),
		integer("node-port", "node data `PORT` (0: a port from the offer)", 12345, &o.NodePort),
		integer("heads", "number of HDFS heads `N` (sluice hdfs-gateway: tier 2 read-only over hdfs:// and webhdfs://; 0: none)", 1, &o.Heads),
		num("head-cpus", "`CPUS` per HDFS head", 1, &o.HeadCPUs),
		num("head-mem", "memory per HDFS head, `MIB`", 1024, &o.HeadMem),
		integer("head-rpc-port", "HDFS head NameNode RPC `PORT` (0: a port from the offer)", 8020, &o.HeadRPCPort),
		integer("head-data-port", "HDFS head DataNode transfer `PORT` (0: a port from the offer)", 9866, &o.HeadDataPort),
		integer("head-http-port", "HDFS head WebHDFS `PORT` (0: a port from the offer)", 9870, &o.HeadHTTPPort),
		integer("nfs-heads", "number of NFS heads `N` (sluice nfs-export: tier 2 read-only over NFSv3; 0: none)", 0, &o.NFSHeads),
		num("nfs-head-cpus", "`CPUS` per NFS head", 1, &o.NFSHeadCPUs),
		num("nfs-head-mem", "memory per NFS head, `MIB`", 1024, &o.NFSHeadMem),
		integer("nfs-head-port", "NFS head NFSv3 and MOUNT `PORT` (0: a port from the offer)", 12049, &o.NFSHeadPort),
		integer("s3-heads", "number of S3 heads `N` (sluice s3-gateway: tier 2 read-only over the S3 API; 0: none)", 0, &o.S3Heads),
		num("s3-head-cpus", "`CPUS` per S3 head", 1, &o.S3HeadCPUs),
		num("s3-head-mem", "memory per S3 head, `MIB`", 1024, &o.S3HeadMem),
		integer("s3-head-port", "S3 head HTTP `PORT` (0: a port from the offer)", 9000, &o.S3HeadPort),
		&cli.StringFlag{Name: "s3-credentials-secret", Usage: "the S3 heads' access keys (ACCESS:SECRET[,ACCESS:SECRET]) are the secret at `PATH` in the agents' secret store (DC/OS Enterprise): each S3 head task's " + scheduler.S3CredentialsEnv + " refers to it and the agent fills it in; the keys never pass through the scheduler nor show in Mesos' state endpoints", Destination: &o.S3CredentialsSecret},
		&cli.BoolFlag{Name: "s3-anonymous", Usage: "the S3 heads also serve unsigned requests (needed for S3 heads when " + scheduler.S3CredentialsEnv + " is not set)", Destination: &o.S3Anonymous},
		integer("containers", "segment containers `N` of the whole cluster; fixed at install", 4, &o.Containers),
		str("tier2", "tier-2 `URI` of every node: file:///DIR, hdfs://HOST:PORT/DIR or hdfs://NAMESERVICE/DIR (resolved through the hdfs-site.xml of --hdfs-config-url)", "", &o.Tier2),
		str("hdfs-config-url", "`URL` the tasks fetch hdfs-site.xml and core-site.xml from (may be empty)", "", &o.HDFSConfigURL),
		str("secret-file", "authenticate to the Mesos master with the credential in `FILE`: the secret of --principal (HTTP Basic), or a DC/OS service account's credential JSON (strict mode; its uid is the principal). Without it: "+mesosauth.ServiceAccountEnv+" (the JSON, or a file holding it), then "+mesosauth.SecretEnv+" (the secret of --principal). Never give a secret on the command line", "", &o.SecretFile),
		&cli.BoolFlag{Name: "uninstall", EnvVars: []string{scheduler.UninstallEnv}, Usage: "uninstall the service: kill every task, destroy every volume and unreserve every reservation it made, tear the framework down and delete its ZooKeeper state; GET /v1/plan then reports COMPLETE and the scheduler waits to be stopped. Cannot be cancelled: THE DATA ON THE VOLUMES IS LOST", Destination: &o.Uninstall},
		&cli.BoolFlag{Name: "forget-framework", Usage: "drop the framework id stored under --zk-root and register as a new Mesos framework (after the master removed the old one: \"Framework has been removed\"); the pods' reservations and volumes are adopted. Give it for one start only", Destination: &o.ForgetFramework},
	}, o.Placement.flags()...)
}

// schedulerConfig turns the flags into the driver's configuration.
func schedulerConfig(o *schedulerOptions, log logrus.FieldLogger) (scheduler.Config, error) {
	switch t := plan.DiskType(o.NodeDiskType); t {
	case plan.DiskRoot, plan.DiskPath, plan.DiskMount:
	default:
		return scheduler.Config{}, fmt.Errorf("scheduler: --node-disk-type %q: want ROOT, PATH or MOUNT", o.NodeDiskType)
	}
	for _, p := range []struct {
		flag string
		v    int
	}{{"api-port", o.APIPort}, {"controller-port", o.ControllerPort}, {"node-port", o.NodePort},
		{"head-rpc-port", o.HeadRPCPort}, {"head-data-port", o.HeadDataPort}, {"head-http-port", o.HeadHTTPPort},
		{"nfs-head-port", o.NFSHeadPort}, {"s3-head-port", o.S3HeadPort}} {
		if p.v < 0 || p.v > 65535 {
			return scheduler.Config{}, fmt.Errorf("scheduler: --%s %d: not a port", p.flag, p.v)
		}
	}
	for _, c := range []struct {
		flag string
		v    int
	}{{"heads", o.Heads}, {"nfs-heads", o.NFSHeads}, {"s3-heads", o.S3Heads}} {
		if c.v < 0 {
			return scheduler.Config{}, fmt.Errorf("scheduler: --%s %d: want 0 or more", c.flag, c.v)
		}
	}
	creds := os.Getenv(scheduler.S3CredentialsEnv)
	if o.S3Heads > 0 && creds == "" && o.S3CredentialsSecret == "" && !o.S3Anonymous {
		return scheduler.Config{}, fmt.Errorf("scheduler: --s3-heads %d: S3 heads need access keys (--s3-credentials-secret, or %s=ACCESS:SECRET[,ACCESS:SECRET] in the scheduler's environment) or --s3-anonymous", o.S3Heads, scheduler.S3CredentialsEnv)
	}
	auth, err := mesosauth.Load(mesosauth.Source{Principal: o.Principal, SecretFile: o.SecretFile})
	if err != nil {
		return scheduler.Config{}, err
	}
	root := o.ZKRoot
	if root == "" {
		root = "/dcos-service-" + strings.ReplaceAll(strings.Trim(o.Name, "/"), "/", "__")
	}
	var zk []string
	for _, h := range strings.Split(o.ZK, ",") {
		if h = strings.TrimSpace(h); h != "" {
			zk = append(zk, h)
		}
	}
	role, derived := o.Role, o.Role == ""
	if derived {
		role = scheduler.RoleFor(o.Name)
	}
	if err := scheduler.ValidRole(role); err != nil {
		return scheduler.Config{}, fmt.Errorf("scheduler: --role: %w (give a valid --role)", err)
	}
	cfg := scheduler.Config{
		Name: o.Name, Role: role, RoleDerived: derived, Principal: o.Principal, User: o.User, Uninstall: o.Uninstall,
		Master: o.MesosMaster, Auth: auth, ZK: zk, ZKRoot: root,
		Spec: plan.Spec{
			Controllers: o.Controllers, Nodes: o.Nodes,
			Controller:   plan.Resources{CPUs: o.ControllerCPUs, MemMB: o.ControllerMem},
			Node:         plan.Resources{CPUs: o.NodeCPUs, MemMB: o.NodeMem, DiskMB: o.NodeDisk},
			NodeDiskType: plan.DiskType(o.NodeDiskType),
			Heads:        o.Heads,
			Head:         plan.Resources{CPUs: o.HeadCPUs, MemMB: o.HeadMem},
			NFSHeads:     plan.HeadSpec{Count: o.NFSHeads, Resources: plan.Resources{CPUs: o.NFSHeadCPUs, MemMB: o.NFSHeadMem}},
			S3Heads:      plan.HeadSpec{Count: o.S3Heads, Resources: plan.Resources{CPUs: o.S3HeadCPUs, MemMB: o.S3HeadMem}},
		},
		Binary:      os.Getenv(TaskBinaryEnv),
		ArtifactURI: o.ArtifactURI, HDFSConfigURL: o.HDFSConfigURL,
		Containers: o.Containers, Tier2: o.Tier2,
		ControllerPort: o.ControllerPort, NodePort: o.NodePort,
		HeadRPCPort: o.HeadRPCPort, HeadDataPort: o.HeadDataPort, HeadHTTPPort: o.HeadHTTPPort,
		NFSHeadPort: o.NFSHeadPort, S3HeadPort: o.S3HeadPort,
		S3Credentials: creds, S3CredentialsSecret: o.S3CredentialsSecret, S3Anonymous: o.S3Anonymous,
		ForgetFramework: o.ForgetFramework,
		Logger:          log,
	}
	cfg.Spec.Placement = o.Placement.spec()
	return cfg, nil
}

// runScheduler serves the API and runs the driver until SIGINT or
// SIGTERM (or the end of c.Context). The line "scheduler API listening
// on ADDR" on stdout tells scripts and tests the port.
func runScheduler(c *cli.Context, g *globalOptions, o *schedulerOptions) error {
	if _, err := args(c); err != nil {
		return err
	}
	log := newLogger(g, c.App.ErrWriter)
	cfg, err := schedulerConfig(o, log)
	if err != nil {
		return err
	}
	d, err := scheduler.New(cfg)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(os.Getenv(SchedulerAPIHostEnv), strconv.Itoa(o.APIPort))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("scheduler: listen on %s: %w", addr, err)
	}
	srv := newAPIServer(d.Handler())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	fmt.Fprintf(c.App.Writer, "scheduler API listening on %s\n", l.Addr())
	fields := logrus.Fields{"api": l.Addr().String(), "master": cfg.Master, "zk": o.ZK, "root": cfg.ZKRoot}
	if cfg.Auth != nil {
		fields["auth"], fields["principal"] = cfg.Auth.Scheme(), cfg.Auth.Principal()
	}
	log.WithFields(fields).Info("scheduler: starting")

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	runErr := d.Run(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && runErr == nil {
		runErr = fmt.Errorf("scheduler: shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) && runErr == nil {
		runErr = fmt.Errorf("scheduler: serve: %w", err)
	}
	return runErr
}
