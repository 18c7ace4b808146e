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
//	                         launched task listens (written before its LAUNCH)
//
// The controller and node tasks get Config.ClusterRoot() ("<root>/cluster")
// as their own --zk-root, so their keys never meet the scheduler's.
//
// # Tasks
//
// Each pod is one task run by a custom executor, `sluice executor --role
// controller|node -- <the role's command line>` (TaskCommand), which
// starts and supervises `sluice controller ...` or `sluice node ...`. A
// task listens on Config.ControllerPort / NodePort, or, for 0, on a port
// taken from the offer's "ports" resource; it advertises the agent's
// hostname and that port.
//
// # HTTP API
//
//	GET  /v1/health               200 once subscribed with the plan loaded, else 503
//	GET  /v1/plan                 plan.Progress: phases and steps
//	GET  /v1/pods                 [PodInfo]
//	GET  /v1/endpoints            Endpoints: controller URLs, node addresses, ZooKeeper
//	PUT  /v1/counts               CountsRequest {"nodes":N} and/or {"controllers":C} -> Progress
//	POST /v1/pods/{name}/restart  kill the pod's task; it is relaunched in place
//	POST /v1/pods/{name}/replace  plan.Replace: abandon its reservation, place anew
//
// Errors are JSON {"error": "..."} with 400 (bad request), 404 (no such
// pod or route), 503 (not subscribed yet) or 500.
package scheduler
