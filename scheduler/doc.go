// Package scheduler is the Sluice Mesos framework's driver (`sluice
// scheduler`): the thin, I/O-doing shell around the deterministic core
// in scheduler/plan. It owns
//
//   - one active scheduler: an election on a ZooKeeper session (a
//     cluster.Session: Config.OpenSession, zkstore by default) is won
//     before anything else is done, and losing it (or the session) ends
//     Run: unlike the controller and the node, the scheduler does not
//     open a new session (package cluster/session), it exits to be
//     restarted;
//   - the durable state under the service's ZooKeeper root, always
//     written before it is acted on and read back on start, so that a
//     restarted scheduler fails over to the same framework and resumes
//     the same pods (reconciliation, not relaunch, tells it what runs);
//   - the subscription to the Mesos master's v1 scheduler API (mesos-go
//     httpcli), re-established with backoff when the stream drops or
//     falls silent for three heartbeats; with Config.Auth (package
//     mesosauth: HTTP Basic, or a DC/OS service account's token) every
//     call carries the credential, FrameworkInfo.principal is the
//     authenticated principal, and a refused credential is logged as
//     one error naming the principal and retried with the same backoff;
//   - carrying out the plan's decisions: Mesos calls through
//     plan/mesosconv, DRAIN through the Sluice controller's REST API
//     (PUT /v1/nodes/{node}/drain, then GET /v1/nodes until the node holds
//     no container), REBALANCE logged (the controller rebalances by
//     itself);
//   - the scheduler's HTTP API (Handler) and a client for it (Client),
//     which `sluice cluster` uses.
//
// One goroutine (Run's) owns the plan and the connection; HTTP handlers
// and drain watchers hand it closures through a channel. The stream
// reader and the drain watchers are goroutines Run starts and waits for.
//
// # ZooKeeper keys
//
// Under the store opened at Config.ZKRoot:
//
//	scheduler/leader         election of the active scheduler (candidates' ids)
//	scheduler/framework-id   the Mesos framework id, as text
//	scheduler/plan           plan.Marshal: spec (counts, resources) and pods, msgpack
//	scheduler/endpoints      JSON {"<pod>": {"task","host","port"}}: where each
//	                         launched task listens (written before its LAUNCH);
//	                         a head adds "dataPort", "httpPort" and "controller"
//	scheduler/configured     JSON plan.Spec: the spec the scheduler was configured
//	                         with at its last start (see Configuration updates)
//
// The controller and node tasks get Config.ClusterRoot() ("<root>/cluster")
// as their own --zk-root, so their keys never meet the scheduler's.
//
// # Services side by side, and uninstall
//
// The role defaults to RoleFor(name) (Config.RoleDerived), checked by
// ValidRole; a stored plan's role wins over a derived one and a given
// one that differs is refused (ErrConfig). The driver makes the plan's
// service id (plan.Spec.ServiceID, random) at the first start, or for a
// plan stored before it existed; it is in every new reservation's id,
// volume id and sluice.service label, so two services never touch each
// other's reservations. Config.Uninstall (`--uninstall`, UninstallEnv
// SDK_UNINSTALL=true as Cosmos sets it; a stored plan that is
// uninstalling goes on without it) runs plan.Uninstall; once it is done
// the driver sends TEARDOWN, deletes every key under the root but the
// election (the cluster's keys through a store rooted at ClusterRoot,
// whose records' checksums cover the key as that store names it), stops
// subscribing and serves GET /v1/plan COMPLETE until it is stopped
// (Cosmos then removes the app; Marathon would restart one that exited),
// and deletes the election's keys when Run ends.
//
// # Tasks
//
// Each pod is one task run by a custom executor, `sluice executor --role
// controller|node|hdfs-gateway|nfs-export|s3-gateway -- <the role's
// command line>` (TaskCommand), which starts and supervises `sluice
// controller ...`, `sluice node ...` or the head's command. A task
// listens on Config.ControllerPort / NodePort, or, for 0, on a port
// taken from the offer's "ports" resource; it advertises the agent's
// hostname and that port.
//
// Ports: Config.PortNeeds gives the plan each kind's ports (plan.Spec.Ports,
// from the configuration on every start, never stored), and the plan
// places or relaunches a pod only with an offer whose unreserved "ports"
// hold them: every fixed port, and a free port for each 0 (one no kind
// needs fixed, while there is one). The LAUNCH's resources hold exactly
// those ports (plan.Op.Ports); an offer without them is declined, and
// the reason is in GET /v1/plan (the step's "waiting") and the debug
// log. A node reserves its ports with the rest of its reservation (as
// the DC/OS SDK reserves every resource of a pod), so a relaunch in
// place finds them again; a node placed by an older scheduler, whose
// reservation has no ports, takes them unreserved.
//
// The executor's share: each task's custom executor gets
// Config.ExecutorShare (DefaultExecutorShare: 0.1 cpus, 32 MB, as the
// DC/OS SDK gives its executors; 32 MB is Mesos' minimum) of the pod's
// cpus and mem in ExecutorInfo.resources, with the same reservation for
// a node; the task gets the rest, so task and executor together are the
// pod's resources, what was reserved or offered. New refuses (ErrConfig)
// a pod kind whose cpus or mem cannot hold that share and a task.
//
// Placement: Config.Spec.Placement holds each kind's placement
// constraint (`--controller-placement`, `--node-placement`,
// `--hdfs-head-placement`, `--nfs-head-placement`, `--s3-head-placement`;
// plan.ParsePlacement's syntax), checked by New and given to a stored
// plan on start (it applies to pods placed from then on). The
// framework declares REGION_AWARE and takes its region from SUBSCRIBED's
// master_info: offers from agents of other regions are marked remote,
// and the plan places pods there only where a constraint names @region.
//
// With Config.HDFSConfigURL, every task's CommandInfo also fetches
// URL/hdfs-site.xml and URL/core-site.xml into the sandbox and sets
// HADOOP_CONF_DIR=. (the executor runs the role in the sandbox with its
// environment), so a tier-2 URI hdfs://NAMESERVICE/DIR resolves to the
// nameservice's NameNodes there (tier2/hdfs.Nameservice) and the client
// fails over between them.
//
// Heads serve tier 2 read-only; there are three kinds (plan.HeadKinds),
// each with its own count and resources in the spec (0 allowed). Every
// head is stateless (no reservation, no volume: relaunched anywhere, at
// most one of a kind per agent; heads of different kinds may share an
// agent, so all their fixed ports must differ) and is placed once every
// controller runs, given the first running controller's REST API as
// --controller URL:
//
//	sluice hdfs-gateway --controller URL --rpc-addr 0.0.0.0:RPC
//	    --data-addr 0.0.0.0:DATA --http-addr 0.0.0.0:HTTP --advertise AGENT-HOST
//	sluice nfs-export --controller URL --listen 0.0.0.0:NFS
//	sluice s3-gateway --controller URL --listen 0.0.0.0:S3 [--anonymous]
//
// HDFS heads (plan.HDFSHead, pods hdfs-head-0..H-1, Spec.Heads) listen
// on Config.HeadRPCPort, HeadDataPort and HeadHTTPPort (8020, 9866, 9870
// by `sluice scheduler`'s defaults); NFS heads (plan.NFSHead, nfs-head-N,
// Spec.NFSHeads) on Config.NFSHeadPort (12049); S3 heads (plan.S3Head,
// s3-head-N, Spec.S3Heads) on Config.S3HeadPort (9000); 0: from the
// offer. A head's executor gets --health-addr 127.0.0.1:PORT (an HDFS
// head's RPC port): the head is healthy once that port accepts
// connections. An S3 head's task environment holds S3CredentialsEnv:
// with Config.S3CredentialsSecret a Mesos variable of type SECRET, a
// REFERENCE to that secret which the agent's secret resolver fills (the
// keys never pass through the scheduler, and Mesos' state endpoints show
// the reference only); else the plain value of Config.S3Credentials (the
// scheduler's own SLUICE_S3_CREDENTIALS), which Mesos' state endpoints
// do show. The keys are never in the plan, the stored endpoints or a log
// line. CheckS3Credentials refuses at start keys that the heads' parser
// (internal/s3keys) would refuse.
// S3 heads need keys or Config.S3Anonymous: Run refuses a configured or
// stored plan wanting S3 heads without either (ErrConfig), and PUT
// /v1/counts refuses to raise them.
//
// When a head's controller no longer runs at that URL and another
// controller runs, the driver kills the head, and the plan relaunches
// it with a running controller's URL. A plan stored before a kind of
// head existed takes the configured count and resources of that kind
// when loaded (plan.UnsetHeads).
//
// # HTTP API
//
//	GET  /v1/health               200 once subscribed with the plan loaded, else 503
//	GET  /v1/plan                 PlanView: plan.Progress's phases and steps, with
//	                              each running pod's addresses; uninstalling:
//	                              kill-tasks, unreserve and deregister
//	GET  /v1/pods                 [PodInfo]
//	GET  /v1/endpoints            Endpoints: controller URLs, node addresses, the heads'
//	                              hdfs://, webhdfs://, nfs:// and http:// (S3) URIs,
//	                              ZooKeeper
//	PUT  /v1/counts               CountsRequest {"nodes":N}, {"controllers":C},
//	                              {"heads":H} (HDFS), {"nfsHeads":H}, {"s3Heads":H}
//	                              (H may be 0), any of them together -> PlanView;
//	                              400 while uninstalling
//	POST /v1/pods/{name}/restart  kill the pod's task; it is relaunched in place
//	POST /v1/pods/{name}/replace  plan.Replace: abandon its reservation, place anew
//	POST /v1/plan/restart[?kind=K] plan.Restart: rolling restart of every launched
//	                              pod (of kind K) -> PlanView; 400 for an unknown
//	                              kind or none to restart
//	POST /v1/plan/pause           plan.Pause (stored) -> PlanView
//	POST /v1/plan/resume          plan.Resume -> PlanView
//	POST /v1/uninstall/agents/{agent}/forget
//	                              while uninstalling: plan.ForgetAgent, stop waiting
//	                              for an agent that will not come back -> PlanView
//
// PlanView also has "paused" and "errors" (the configuration changes
// refused at start).
//
// # Configuration updates
//
// On start the driver merges its configured spec into the stored plan
// (plan.MergeSpec; refusals are logged and kept for PlanView.Errors;
// the configured spec of the last start, scheduler/configured, tells a
// count the configuration changed from one changed through the API),
// and once subscribed gives the plan a configuration id per kind of pod
// (plan.SetTargets): a hash of the TaskCommand of a pod of that kind
// (command line, environment, fetched URIs, fixed ports) and of its
// resources. The plan rolls pods launched with another id through its
// update steps. CHECK_READY decisions are carried out by a watcher per
// task (update.go): a controller must answer GET /v1/nodes; a node is
// un-drained (PUT /v1/nodes/{node}/drain {"drain":false}) and must be
// live and not draining in a controller's GET /v1/nodes; a head must
// accept a TCP connection on its port. Then plan.OnReady.
//
// Errors are JSON {"error": "..."} with 400 (bad request), 404 (no such
// pod or route), 503 (not subscribed yet) or 500.
package scheduler
