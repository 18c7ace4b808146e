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
//     falls silent for three heartbeats;
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
//
// The controller and node tasks get Config.ClusterRoot() ("<root>/cluster")
// as their own --zk-root, so their keys never meet the scheduler's.
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
//	                              each running pod's addresses
//	GET  /v1/pods                 [PodInfo]
//	GET  /v1/endpoints            Endpoints: controller URLs, node addresses, the heads'
//	                              hdfs://, webhdfs://, nfs:// and http:// (S3) URIs,
//	                              ZooKeeper
//	PUT  /v1/counts               CountsRequest {"nodes":N}, {"controllers":C},
//	                              {"heads":H} (HDFS), {"nfsHeads":H}, {"s3Heads":H}
//	                              (H may be 0), any of them together -> PlanView
//	POST /v1/pods/{name}/restart  kill the pod's task; it is relaunched in place
//	POST /v1/pods/{name}/replace  plan.Replace: abandon its reservation, place anew
//
// Errors are JSON {"error": "..."} with 400 (bad request), 404 (no such
// pod or route), 503 (not subscribed yet) or 500.
package scheduler
