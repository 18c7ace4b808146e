// Package plan is the Mesos scheduler's deterministic core: it holds
// the desired state (how many controllers, nodes and heads of each
// kind, the resources of each) and what is known of each pod, takes events (offers, status
// updates, agent loss, operator requests, timer ticks) and returns
// decisions for the driver to carry out. It does no I/O and reads no
// clock; the driver (`sluice scheduler`) turns decisions into v1
// scheduler calls and feeds events back, from one goroutine.
//
// # Pods and tasks
//
// Pods are named controller-0..C-1, node-0..N-1, and for the heads
// hdfs-head-0..H-1, nfs-head-0..F-1 and s3-head-0..S-1. A pod's task id is
// "<pod>__<attempt>" (node-2__3), so every launch has a new id and an
// older attempt is recognised (and killed if it still runs). A node
// pod owns a dynamic reservation on one agent, labelled
// sluice.framework=<framework name>, sluice.service=<Spec.ServiceID>,
// sluice.pod=<pod> and sluice.reservation=<reservation id> ("<service
// id>.<pod>.r<n>"), and a persistent volume made from it (persistence id
// "<reservation id>.vol", container path Spec.VolumePath, default "wal")
// that holds the node's WAL.
//
// # Service ids
//
// Spec.ServiceID is the service's unique id, made once by the driver
// (the plan has no randomness) and never changed (SetServiceID sets it
// only on a plan without one); ValidServiceID: 8 to 32 lowercase letters
// and digits. It keeps two services on one cluster apart even under one
// name: an offered reservation labelled with another service id is never
// this plan's. Reservations made before it existed ("<pod>.r<n>", no
// sluice.service label) are matched by the reservation ids the plan
// holds.
// Controllers keep their state in ZooKeeper and heads keep none:
// both take unreserved resources and may run anywhere.
//
// # Rules
//
//   - Deploy order: every controller runs before any node or head is
//     first placed. At most one pod of a kind per agent.
//   - Heads of each kind in HeadKinds (HDFS: Spec.Heads; NFS:
//     Spec.NFSHeads; S3: Spec.S3Heads; 0 allowed; SetHeads) are
//     stateless: a failed, lost or unreachable head is launched again
//     on any agent; lowering a count kills that kind's highest-index
//     heads at once. The one-per-agent rule is per kind: an HDFS, an
//     NFS and an S3 head may share an agent.
//   - A new node: one ACCEPT with RESERVE (cpus, mem, disk), CREATE
//     (the volume) and LAUNCH. A failed or killed node task is
//     relaunched in place: only an offer from its agent that carries
//     its reservation is used (CREATE again if the volume is gone).
//   - Agent lost (OnAgentLost, or TASK_LOST/TASK_UNREACHABLE): the pod
//     waits for its agent to offer the reservation again; it is never
//     moved unless the operator calls Replace, which abandons the old
//     reservation (destroyed and unreserved if the agent ever returns)
//     and places the pod anew.
//   - An orphan (a reservation no pod owns any more) is destroyed and
//     unreserved once an offer from its agent holds all of it: the old
//     task's executor keeps its share of a node's reservation until it
//     exits, and a release of only what an offer shows would leave that
//     share reserved.
//   - An unconfirmed placement (the ACCEPT's reservation never seen in
//     an offer nor used by a running task) whose agent offers without
//     it is forgotten and the pod placed again.
//   - Offers that fit nothing, or that no pending pod may use, are
//     declined with a filter: Timing.ShortRefuse while some pod waits,
//     Timing.LongRefuse when none does; with nothing left to do the
//     plan emits SUPPRESS, and REVIVE once something waits again.
//   - Lowering N: the highest-index nodes are drained first (DRAIN; the
//     driver hands their containers to other nodes and calls
//     OnDrained), then killed; after the terminal status their volume
//     is destroyed and their reservation released (DESTROY + UNRESERVE
//     on the next offer from their agent). Lowering C kills
//     controllers at once. Raising N adds pods; once they all run, a
//     REBALANCE names them.
//   - Ports: a kind's ports (Spec.Ports: fixed ones, 0 for any; set on
//     every start with SetPorts, not stored) must be in the offer's
//     unreserved ports for a pod to be placed or relaunched there; the
//     LAUNCH names them (Op.Ports). Pods placed from one offer never
//     share a port. A new node reserves its ports with the rest
//     (RESERVE's Op.Ports, Pod.Ports) and is relaunched on them in place
//     (Op.ReservedPorts), waiting while its offered reservation lacks
//     them; a node stored before Pod.Ports takes them unreserved. An
//     orphan's UNRESERVE releases its ports too.
//   - Placement constraints (Spec.Placement, SetPlacement;
//     ParsePlacement's Marathon-style syntax, see placement.go): every
//     clause must allow the offer's agent (hostname, @zone, @region or
//     an attribute) given where the other pods of the kind are (Pod.Where,
//     learnt from offers). They decide new placements only: a node is
//     relaunched in place, where its volume is, whatever they say. An
//     agent of another region than the master's (Offer.Remote) gets new
//     pods only of a kind whose constraint names @region.
//   - A declined offer says why the pods that wanted it could not use
//     it (Decision.Reason: ports, constraint, region); Progress shows
//     each pending pod's last such reason as the step's Waiting.
//   - Updates and restarts (update.go): SetTargets gives each kind's
//     configuration id; a pod launched with another one (Pod.Config), or
//     marked by Restart, is outdated. When not paused, once every pod
//     wanted runs and no reconciliation is pending, the first outdated
//     pod in deploy order enters its step, one pod at a time: a node
//     (with handover, i.e. tier 2) is drained (DRAIN, OnDrained), then
//     killed; any other pod is killed at once; after the terminal status
//     it is relaunched (a node in place; in its step its reservation is
//     resized to Spec.Node's cpus and mem by RESERVE or UNRESERVE of the
//     difference, same labels, in the LAUNCH's ACCEPT); on TASK_RUNNING
//     the plan asks CHECK_READY and the step ends with OnReady, which
//     starts the next. A task that ends during its step is relaunched
//     and checked again. A node relaunched out of its step (a crash)
//     keeps its reservation and Config. The size a resize asks for
//     (Pod.Resizing) becomes the reservation's (Pod.Reserved) when the
//     relaunched task runs; until then a relaunch resizes from the size
//     the offer holds whole (the old one, or the asked one if that
//     ACCEPT took effect). A reservation made by another principal than
//     Spec.Principal is not grown (Mesos refuses it): the node keeps its
//     size, and ResizeRefusals says so. A pod that leaves GoalRun
//     (decommission, uninstall) leaves its step; Replace of a pod in a
//     step skips to its relaunch.
//   - Pause (stored) stops steps from starting: no first placement (a
//     pod never launched) and no update or restart step; the step in
//     progress finishes and failed pods are relaunched. Resume.
//   - MergeSpec (a restarted scheduler's configuration against the
//     stored spec) refuses a changed framework name, role, node disk
//     size, disk type or volume path, and the settings fixed at install
//     (Spec.Install: containers, tier 2), keeps counts changed through
//     the API, and takes everything else.
//   - Uninstall (uninstall.go): every pod's goal becomes GoalUninstall
//     and its task is killed; once the task is over (at once for a pod
//     whose agent is lost) the pod is removed, its reservation an orphan
//     destroyed and unreserved when its agent offers it, as are offered
//     reservations with this service id that nothing holds. Nothing is
//     placed; SetCounts does nothing, Replace fails (ErrUninstalling).
//     A released reservation counts as gone once an offer from its agent
//     comes without it; one still offered is released again.
//     UninstallDone: no pod, no orphan and no unconfirmed release left. Progress then has the
//     phases "kill-tasks" and "unreserve".
//   - Reconciliation: Start (after every SUBSCRIBED) revives and
//     reconciles every task believed live explicitly; offers are held
//     until each is answered (rescinded ones are dropped, OnRescind),
//     and the unanswered are asked again every Timing.ReconcileRetry.
//     OnTick asks for implicit reconciliation every
//     Timing.ImplicitReconcile. An update for a task the plan does not
//     want is answered with KILL.
//
// Acknowledging status updates is the driver's business; so is
// building Offer values from protobuf offers (resources reserved to the
// role, grouped by the sluice.reservation label) and mesos resources
// from Ops (reservation labels as above; a RESERVE's Resources include
// the disk the volume is made from, a LAUNCH's do not).
//
// # Serialized form and progress
//
// Marshal gives the plan's durable part as msgpack, for ZooKeeper:
//
//	map {
//	  "v":         2                      (format version)
//	  "spec":      Spec                   (counts, resources, timing; "heads"
//	                                       and "headResources" (HDFS) came
//	                                       later, "nfsHeads" and "s3Heads"
//	                                       ({count, resources}) later still: a
//	                                       spec without a kind's key decodes
//	                                       with that kind in UnsetHeads;
//	                                       "serviceId" since version 2)
//	  "pods":      [Pod ...]              (deploy order: name, kind, index,
//	                                       goal, agent, reservation, reserved,
//	                                       volume, confirmed, task, state,
//	                                       attempts, agentLost, draining;
//	                                       later, each omitted when empty:
//	                                       "where" {host, region, zone, attrs},
//	                                       "ports", "config" (configuration
//	                                       id), "restart", "step" and
//	                                       "resizing" (update.go); the spec's
//	                                       "placement" {kind: constraint},
//	                                       "principal" and "install"
//	                                       {containers, tier2} came later too)
//	  "orphans":   [{agent, pod, reservation, reserved, volume} ...]
//	  "seq":       int                    (last reservation number)
//	  "rebalance": [pod name ...]         (added nodes awaiting REBALANCE)
//	  "paused":    bool                   (later; omitted when false)
//	  "uninstall": bool                   (Uninstall ran; since version 2)
//	  "released":  [{agent, pod, reservation, reserved, volume} ...]
//	                                      (released while uninstalling, not yet
//	                                       confirmed gone; since version 2)
//	}
//
// Keys are added without a version change when an older scheduler
// reading the plan without them would do no harm. Version 2 (service
// ids) is not such a change: an older scheduler would make and name
// reservations without the sluice.service label, and Mesos refuses an
// operation whose resources do not match the reservation's labels.
// Unmarshal reads versions 1 and 2: a version 1 plan is migrated
// (migrateV1: no service id, not uninstalling; everything else has the
// same keys and meaning; testdata/v1_plan.msgpack was written by the
// release before), and Marshal writes 2. A newer version fails with
// ErrVersion, naming both versions and the way out (run the release
// that wrote it).
//
// Progress gives (unless uninstalling) the phases "controllers" and "nodes", "heads" when
// Spec.Heads > 0, "nfs-heads" and "s3-heads" when those counts are
// above 0 (and "decommission" while pods are being removed, "update"
// while pods are outdated or in their update step), each step PENDING,
// STARTING or COMPLETE (a pod in its step's readiness check is
// STARTING), and whether the plan is paused, for the scheduler's HTTP
// API.
package plan
