package scheduler

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/s3keys"
	"github.com/sluice-streams/sluice/scheduler/mesosauth"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// Config is what Run needs. Zero durations take the defaults noted.
type Config struct {
	// Framework identity (FrameworkInfo): Name is also the plan's
	// reservation label; Principal may be empty.
	Name, Role, Principal, User string
	// RoleDerived says Role was derived from Name (RoleFor), not given:
	// a stored plan's role then wins over it. A given Role that differs
	// from the stored plan's is refused (ErrConfig).
	RoleDerived bool
	// Uninstall runs the uninstall plan (`sluice scheduler --uninstall`,
	// or SDK_UNINSTALL=true): kill every task, release every reservation
	// and volume, tear the framework down, delete the ZooKeeper state.
	Uninstall bool
	// Master is the Mesos master's URL; a URL without a path gets
	// /api/v1/scheduler.
	Master string
	// Auth authenticates every call to the master (mesosauth.Load:
	// Basic, or a DC/OS service account); nil sends no credentials. Its
	// principal is the framework's: Principal empty takes it, another
	// one is refused.
	Auth *mesosauth.Auth
	// ZK is the ensemble ("host:port" each), ZKRoot this service's root
	// znode, ZKSessionTimeout the session timeout (default 10s).
	ZK               []string
	ZKRoot           string
	ZKSessionTimeout time.Duration
	// OpenSession opens the session the election and the stored state
	// live in (tests give an in-memory one); nil opens a ZooKeeper
	// session on ZK under ZKRoot. Run closes it.
	OpenSession func(ctx context.Context) (cluster.Session, error)
	// ID is this scheduler's id in the election (default: host name).
	ID string

	// Spec is the desired state on first start; once a plan is stored
	// in ZooKeeper, the stored one wins (counts change through the API).
	Spec plan.Spec

	// The tasks' command lines (TaskCommand).
	Binary         string // the sluice binary in the sandbox, default "./sluice"
	ArtifactURI    string // fetched into each task's sandbox (extracted)
	HDFSConfigURL  string // base URL of hdfs-site.xml and core-site.xml; may be empty
	Containers     int    // --containers of every task
	Tier2          string // --tier2 of every task; may be empty
	ControllerPort int    // 0: a port from the offer
	NodePort       int    // 0: a port from the offer
	// An HDFS head's NameNode RPC, DataNode transfer and WebHDFS ports;
	// 0: a port from the offer.
	HeadRPCPort, HeadDataPort, HeadHTTPPort int
	// NFSHeadPort is an NFS head's port (NFSv3 and MOUNT), S3HeadPort an
	// S3 head's; 0: a port from the offer.
	NFSHeadPort, S3HeadPort int
	// S3CredentialsSecret names a secret in the agents' secret store
	// (DC/OS: its path, e.g. "sluice/s3-credentials") that holds the S3
	// heads' access keys, "ACCESS:SECRET[,ACCESS:SECRET...]": each S3
	// head task's S3CredentialsEnv is an environment variable of type
	// SECRET referring to it, which the agent's secret resolver fills
	// when it starts the executor. The keys never pass through the
	// scheduler, and Mesos does not show them in its state endpoints.
	S3CredentialsSecret string
	// S3Credentials are the S3 heads' access keys themselves, for Mesos
	// without a secret resolver: given to each S3 head task as a plain
	// environment variable (S3CredentialsEnv), which Mesos shows in the
	// master's and agents' state endpoints and checkpoints to the agent's
	// disk; never stored in ZooKeeper nor logged by the scheduler. At most
	// one of S3CredentialsSecret and S3Credentials may be set.
	// S3Anonymous has the S3 heads serve unsigned requests too
	// (--anonymous). S3 heads need keys or anonymous access.
	S3Credentials string
	S3Anonymous   bool
	// Build overrides the TaskInfo builder (tests use stand-in
	// commands); nil builds the executor task of TaskCommand.
	Build TaskBuilder
	// ExecutorShare is the part of every pod's cpus and mem that its
	// executor gets (ExecutorInfo.resources) when Build is nil; the task
	// gets the rest. Zero: DefaultExecutorShare.
	ExecutorShare plan.Resources

	// FailoverTimeout is the framework's failover timeout (default a week).
	FailoverTimeout time.Duration
	// ForgetFramework drops the stored framework id before subscribing,
	// so that the scheduler registers as a new framework: the way out
	// of ErrFrameworkRemoved (`sluice scheduler --forget-framework`).
	// The stored plan is kept: its pods' reservations and volumes, which
	// Mesos keeps for the role, are adopted again.
	ForgetFramework bool
	// BackoffMin and BackoffMax bound the re-subscription backoff
	// (default 250ms and 15s).
	BackoffMin, BackoffMax time.Duration
	// Tick is the period of plan.OnTick and the heartbeat check
	// (default 1s). DrainPoll is the period of the drain watcher's calls
	// to the controller (default 1s).
	Tick, DrainPoll time.Duration
	// HTTPClient calls the controllers (default: a client with a 10s timeout).
	HTTPClient *http.Client
	// Logger receives the scheduler's events (discarded if nil).
	Logger logrus.FieldLogger
}

// ClusterRoot is the --zk-root given to the controller and node tasks.
func (c Config) ClusterRoot() string { return strings.TrimSuffix(c.ZKRoot, "/") + "/cluster" }

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Name == "" || c.Role == "" || c.User == "":
		return c, fmt.Errorf("%w: name, role and user are required", ErrConfig)
	case ValidRole(c.Role) != nil:
		return c, ValidRole(c.Role)
	case c.Master == "":
		return c, fmt.Errorf("%w: no Mesos master", ErrConfig)
	case (len(c.ZK) == 0 && c.OpenSession == nil) || c.ZKRoot == "":
		return c, fmt.Errorf("%w: no ZooKeeper", ErrConfig)
	case c.Spec.Controllers < 1 || c.Spec.Nodes < 1:
		return c, fmt.Errorf("%w: want at least 1 controller and 1 node (have %d and %d)", ErrConfig, c.Spec.Controllers, c.Spec.Nodes)
	case c.Containers < 1:
		return c, fmt.Errorf("%w: containers %d: want at least 1", ErrConfig, c.Containers)
	case !validDiskType(c.Spec.NodeDiskType):
		return c, fmt.Errorf("%w: node disk type %q: want ROOT, PATH or MOUNT", ErrConfig, c.Spec.NodeDiskType)
	}
	for _, k := range plan.HeadKinds {
		h := c.Spec.HeadSpec(k)
		switch {
		case h.Count < 0:
			return c, fmt.Errorf("%w: %s count %d: want 0 or more", ErrConfig, headNoun(k), h.Count)
		case h.Count > 0 && (h.Resources.CPUs <= 0 || h.Resources.MemMB <= 0):
			return c, fmt.Errorf("%w: %s need cpus and mem (have %s)", ErrConfig, headNoun(k), h.Resources)
		}
	}
	if c.Spec.S3Heads.Count > 0 {
		if err := c.s3Ready(); err != nil {
			return c, err
		}
	}
	if c.S3Credentials != "" && c.S3CredentialsSecret != "" {
		return c, fmt.Errorf("%w: S3 heads' keys given twice: both %s and the secret %q (--s3-credentials-secret); give one", ErrConfig, S3CredentialsEnv, c.S3CredentialsSecret)
	}
	if c.S3Credentials != "" {
		if err := CheckS3Credentials(c.S3Credentials); err != nil {
			return c, err
		}
	}
	if err := c.checkPlacement(); err != nil {
		return c, err
	}
	if c.ExecutorShare == (plan.Resources{}) {
		c.ExecutorShare = DefaultExecutorShare
	}
	if c.Build == nil {
		if err := c.checkExecutorShare(); err != nil {
			return c, err
		}
	}
	c.Spec.Ports = c.PortNeeds()
	// Heads of different kinds may share an agent: their fixed ports
	// must all differ.
	if err := distinctPorts(c.HeadRPCPort, c.HeadDataPort, c.HeadHTTPPort, c.NFSHeadPort, c.S3HeadPort); err != nil {
		return c, err
	}
	if c.Auth != nil {
		switch {
		case c.Principal == "":
			c.Principal = c.Auth.Principal()
		case c.Principal != c.Auth.Principal():
			return c, fmt.Errorf("%w: principal %q differs from the authenticated principal %q: Mesos refuses a FrameworkInfo.principal other than the one authenticated", ErrConfig, c.Principal, c.Auth.Principal())
		}
	}
	u, err := url.Parse(c.Master)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return c, fmt.Errorf("%w: master URL %q", ErrConfig, c.Master)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/api/v1/scheduler"
	}
	c.Master = u.String()
	c.Spec.Framework, c.Spec.Role, c.Spec.Principal = c.Name, c.Role, c.Principal
	c.Spec.Install = &plan.Install{Containers: c.Containers, Tier2: c.Tier2, HDFSConfigURL: c.HDFSConfigURL}
	if c.ZKSessionTimeout <= 0 {
		c.ZKSessionTimeout = 10 * time.Second
	}
	if c.ID == "" {
		c.ID = hostname()
	}
	if c.Binary == "" {
		c.Binary = "./sluice"
	}
	if c.FailoverTimeout <= 0 {
		c.FailoverTimeout = 7 * 24 * time.Hour
	}
	if c.BackoffMin <= 0 {
		c.BackoffMin = 250 * time.Millisecond
	}
	if c.BackoffMax < c.BackoffMin {
		c.BackoffMax = max(15*time.Second, c.BackoffMin)
	}
	if c.Tick <= 0 {
		c.Tick = time.Second
	}
	if c.DrainPoll <= 0 {
		c.DrainPoll = time.Second
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	c.Logger = logs.OrDiscard(c.Logger)
	return c, nil
}

// distinctPorts checks that the fixed ones of the heads' ports differ.
func distinctPorts(ports ...int) error {
	seen := map[int]bool{}
	for _, p := range ports {
		if p == 0 {
			continue
		}
		if seen[p] {
			return fmt.Errorf("%w: the heads' ports (HDFS RPC, data and HTTP, NFS, S3) must differ: they may share an agent (%d given twice)", ErrConfig, p)
		}
		seen[p] = true
	}
	return nil
}

// s3Ready checks that S3 heads can be launched: they need access keys
// or anonymous access.
func (c Config) s3Ready() error {
	if c.S3Credentials == "" && c.S3CredentialsSecret == "" && !c.S3Anonymous {
		return fmt.Errorf("%w: S3 heads need access keys (a secret named by --s3-credentials-secret, or %s=ACCESS:SECRET[,ACCESS:SECRET] in the scheduler's environment) or anonymous access (--s3-anonymous)", ErrConfig, S3CredentialsEnv)
	}
	return nil
}

// CheckS3Credentials checks an S3CredentialsEnv value with the parser
// every S3 head runs at start (internal/s3keys), so that keys a head
// would refuse (a pair without a secret, an access key given twice or
// holding '/' or a space) stop the scheduler rather than every head,
// relaunched for ever. Its errors never contain the secrets.
func CheckS3Credentials(v string) error {
	if _, err := s3keys.Parse(v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrConfig, S3CredentialsEnv, err)
	}
	return nil
}

// headNoun names a kind of head in messages: "HDFS heads".
func headNoun(k plan.PodKind) string {
	switch k {
	case plan.NFSHead:
		return "NFS heads"
	case plan.S3Head:
		return "S3 heads"
	}
	return "HDFS heads"
}

// validDiskType reports whether t is a node disk type the plan knows
// ("" is ROOT).
func validDiskType(t plan.DiskType) bool {
	switch t {
	case "", plan.DiskRoot, plan.DiskPath, plan.DiskMount:
		return true
	}
	return false
}
