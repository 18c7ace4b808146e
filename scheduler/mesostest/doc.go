// Package mesostest is a fake Mesos master with simulated agents that
// speaks the v1 scheduler and executor HTTP APIs, so the Sluice
// scheduler and executor can be tested without Mesos. It uses the
// protobuf types of github.com/mesos/mesos-go (api/v1/lib) and runs the
// tasks it is asked to launch as real child processes.
//
// # Endpoints
//
// The master serves POST /api/v1/scheduler on 127.0.0.1 (Master.URL).
// Each simulated agent serves POST /api/v1/executor on its own
// 127.0.0.1 port, which its executors find in MESOS_AGENT_ENDPOINT.
//
// # Wire format
//
// Calls are accepted as application/x-protobuf (what the library's
// httpcli sends by default) or application/json. The answer to a call
// is encoded as the request asks by Accept (and Message-Accept), else
// like the request. SUBSCRIBE answers 200 with a stream of RecordIO
// records, each an event in the negotiated encoding:
//
//	+----------------------------+----+------------------------+
//	| length, ASCII decimal      | \n | event, `length` bytes  |
//	+----------------------------+----+------------------------+
//	  e.g. "143\n" followed by 143 bytes of a protobuf scheduler.Event
//
// The stream's Content-Type is application/recordio with the event type
// in Message-Content-Type when the client accepts application/recordio
// (Mesos 1.2+); otherwise it is the event type itself, as older masters
// did and as the library's ResponseClassAuto expects. The scheduler's
// stream carries a Mesos-Stream-Id header.
//
// Status codes, as Mesos answers them: 202 for an accepted call; 400
// for a body that does not parse, a missing part, an unknown framework
// id, a missing or wrong Mesos-Stream-Id, and an ACKNOWLEDGE whose uuid
// is not a UUID; 403 when the framework is known but has no open stream
// ("Framework is not subscribed"); 405 for a method other than POST;
// 406 for an unsupported media type. The executor endpoint answers 400
// for an unknown executor, an update without uuid, with a uuid that is
// not a UUID, with a source other than SOURCE_EXECUTOR (unset included),
// with another executor id, or with TASK_STAGING, 403 for an update
// before SUBSCRIBE, and 503 while its agent is down.
//
// # Validation rules
//
// Always on, each as the real master or agent applies it (the source
// file is named at each check in rules.go and the callers):
//
//   - Ids (src/common/validation.cpp validateID): a task, executor or
//     persistence id, or a framework id given back in SUBSCRIBE, must
//     not be empty, longer than 255 bytes, "." or "..", or contain a
//     control character, '/' or '\'. A bad task or executor id is
//     TASK_ERROR (REASON_TASK_INVALID), a bad persistence id an
//     operation error, a bad framework id an ERROR event on the
//     subscription stream, which then ends.
//   - SUBSCRIBE: FrameworkInfo.roles only with MULTI_ROLE, role only
//     without it, no role twice (an ERROR event, as above).
//   - RESERVE: only for one of the framework's roles.
//   - CREATE: only on reserved disk, with disk.volume, a persistence id
//     not used twice in the call nor on the agent for the role, and
//     made of the reserved disk offered (same ROOT, PATH or MOUNT
//     source), besides the principal and disk rules below.
//   - UUIDs (stout's UUID::fromBytes): 16 bytes with a version of 1 to
//     5 in byte 6, for ACKNOWLEDGE and executor UPDATE.
//   - Reconciliation of a task the master does not know (master.cpp's
//     reconcile): TASK_GONE when its agent is registered, TASK_UNREACHABLE
//     when the agent is down, TASK_GONE_BY_OPERATOR when the agent was
//     marked gone (DecommissionAgent), TASK_UNKNOWN when the agent is
//     unknown or not named; TASK_LOST for all of these to a framework
//     that is not PARTITION_AWARE. (So a task on a decommissioned agent
//     is TASK_GONE_BY_OPERATOR, not TASK_UNKNOWN.)
//
// # Scheduler semantics simulated
//
//   - SUBSCRIBE: first event SUBSCRIBED with the framework id (the one
//     in FrameworkInfo.id when set — failover, and re-registration after
//     a master failover — else a new one) and the heartbeat interval;
//     then HEARTBEAT, OFFERS, RESCIND, UPDATE, MESSAGE, FAILURE, ERROR.
//     A failover closes the old stream after an ERROR event.
//   - Several frameworks at once: each SUBSCRIBE without a registered id
//     registers another framework, with its own stream and stream id,
//     roles (FrameworkInfo.role, or roles with MULTI_ROLE), offers,
//     decline filters, tasks, executors, reconciliation and status
//     update queue; agents are shared. A SUBSCRIBE with a registered id
//     is that framework's failover only. Task and executor ids are
//     unique per framework (two frameworks may both run "node-0"), and
//     persistence ids per role on an agent; a volume lives in
//     <Dir>/agents/<agent>/volumes/roles/<role>/<persistence id>.
//     AllocationInfo on offered resources is not simulated.
//   - Offers: for each up agent, the frameworks are served in turn (the
//     first one rotating with every pass, a stand-in for Mesos' DRF
//     sorter): each is offered what is left of the agent's free
//     resources that is unreserved or reserved to one of its roles and
//     not covered by its decline filters, so a resource is never in two
//     offers at once and a reservation only reaches its role's
//     frameworks. Offers are made at once when
//     a framework subscribes or revives, an agent is added or returns,
//     or a task ends, and by a periodic pass (Options.AllocationInterval)
//     that picks up expired filters; Master.Allocate runs a pass now.
//   - ACCEPT applies RESERVE (refinement-style reservations with labels,
//     or the older role+reservation form), UNRESERVE, CREATE and DESTROY
//     of persistent volumes, and LAUNCH, in order, to the pooled offers
//     of one agent. An invalid operation is dropped (listed by
//     OperationErrors); an invalid task is answered TASK_ERROR; tasks
//     launched on unknown or stale offers, or another framework's, get
//     TASK_LOST (TASK_DROPPED when PARTITION_AWARE), reason
//     REASON_INVALID_OFFERS. LAUNCH_GROUP
//     is not simulated (TASK_ERROR). What is left of the offers is free
//     again, filtered for filters.refuse_seconds if filters were given.
//   - Disks: besides the root disk (AgentSpec.DiskMB), an agent may
//     have PATH and MOUNT disks (AgentSpec.Disks), each offered as one
//     disk resource with its DiskInfo.Source. A RESERVE or CREATE whose
//     disk names a Source the agent has no disk at, or only part of a
//     MOUNT disk, is refused; a volume keeps its disk's Source, so a
//     CREATE without it does not match the reserved disk and is refused
//     as not in the offer. Volume directories stay under Options.Dir
//     whatever the disk (a real agent puts them under the disk's root).
//   - Principals: FrameworkInfo.principal stands for the authenticated
//     principal. When it is set, a RESERVE whose resources' own (last)
//     reservation, or a CREATE whose volumes' disk.persistence, lacks
//     it or names another principal is refused, as the real master's
//     validation does. UNRESERVE and DESTROY are not checked: Mesos
//     leaves them to the authorizer, whose default lets any principal
//     undo any other's (src/master/validation.cpp).
//   - Attributes and fault domains: an agent's AgentSpec.Attributes are
//     offered as TEXT attributes, its AgentSpec.Region and Zone as
//     Offer.domain.fault_domain; Options.Region and Zone are the master's
//     domain, sent in SUBSCRIBED's master_info. As Mesos' allocator does,
//     an agent of another region than the master's is offered only to a
//     framework with the REGION_AWARE capability; AddAgent refuses an
//     agent with a domain on a master without one, or a region without
//     a zone.
//   - Launch checks (launchcheck.go, after Mesos' task and executor
//     validation): a task with no resources is TASK_ERROR; the task's
//     and a new executor's resources together must be in the offer
//     (TASK_ERROR otherwise), and executor resources may hold no shared
//     resource; an executor below Mesos' minimum (0.01 cpus, 32 MB) is
//     launched with the warning a real master logs (Warnings).
//   - DECLINE with filters: the declined resources are not offered to
//     the framework again until refuse_seconds have passed on
//     Options.Now (wall time by default; a test may pass its own clock
//     and call Allocate). No filters field means no filter, as in the
//     Mesos allocator; a filters field without refuse_seconds means 5 s.
//   - KILL, ACKNOWLEDGE, RECONCILE (explicit: the listed tasks, unknown
//     ones answered TASK_LOST, or TASK_UNKNOWN when PARTITION_AWARE;
//     implicit: every known task), REVIVE (clears filters), SUPPRESS,
//     SHUTDOWN, MESSAGE, TEARDOWN. Reconciliation answers carry reason
//     REASON_RECONCILIATION, source SOURCE_MASTER and no uuid.
//   - Status updates from an agent carry a uuid and are forwarded one at
//     a time per task; the next goes out only when the previous one is
//     acknowledged. Unacknowledged updates are resent every
//     Options.StatusRetryInterval, on re-subscription, and by
//     ResendUnacknowledged. A task's resources are freed when its
//     terminal update arrives; the task is forgotten once that update is
//     acknowledged.
//
// # Authentication
//
// Options.Auth (auth.go) makes the master and agents authenticate as
// Mesos does with --authenticate_http_frameworks and
// --authenticate_http_executors, and as DC/OS strict mode does:
//
//   - Auth.Credentials (principal -> secret): a scheduler call must
//     carry "Authorization: Basic base64(principal:secret)";
//     Auth.ServiceAccounts (uid -> RSA public key): or
//     "Authorization: token=T" with T from the fake IAM at LoginURL
//     (POST {"uid", "token"}, the token an RS256 JWT {uid, exp} signed
//     with the account's key; answer {"token": T}, an RS256 JWT {uid,
//     exp} valid Auth.TokenTTL; errors as JSON {title, description,
//     code}). Missing or wrong credentials: 401 with an empty body and
//     WWW-Authenticate `Basic realm="mesos-master-scheduler"` and/or
//     `acsjwt`. RevokeTokens makes the tokens issued so far invalid;
//     Logins counts logins. A SUBSCRIBE whose FrameworkInfo.principal
//     differs from the authenticated principal is 400 "Failed to
//     validate scheduler::Call: Authenticated principal 'P' does not
//     match principal 'Q' set in `FrameworkInfo`"; one without a
//     principal gets the authenticated one; any other call by another
//     principal than its framework's is 400 (src/master/http.cpp).
//   - Auth.Executors: each executor's environment holds
//     MESOS_EXECUTOR_AUTHENTICATION_TOKEN, an HS256 JWT with the claims
//     fid, eid and cid (framework, executor, container), and its agent
//     answers a call without "Authorization: Bearer <token>" 401
//     (`Bearer realm="mesos-agent-executor"`), a malformed or
//     unverifiable token 401 with error="invalid_token", and a token
//     whose claims do not name the call's framework and executor and
//     the executor's current container 403 (src/slave/http.cpp).
//
// The checks run once the call is parsed (Mesos authenticates first: a
// body that does not parse is 400 here even without credentials).
//
// # Agents, processes and volumes
//
// A LAUNCH runs the ExecutorInfo's command (a custom executor, which
// must SUBSCRIBE to its agent and is then sent SUBSCRIBED, LAUNCH,
// KILL, ACKNOWLEDGED, MESSAGE and SHUTDOWN events) or, for a task with
// a plain CommandInfo, the command itself while the agent plays Mesos'
// command executor (TASK_RUNNING on start; TASK_FINISHED, TASK_FAILED
// or TASK_KILLED on exit). The process runs in its own process group,
// in a sandbox directory under Options.Dir with stdout and stderr files,
// with its agent's environment only (AgentSpec.Env, by default
// DefaultAgentEnv: a system PATH, HOME and TMPDIR; never the test
// process's, so whatever a task needs must come from its CommandInfo,
// as on a real cluster) plus CommandInfo.environment (a
// variable of type SECRET resolved as a secret resolver module would:
// a VALUE secret's data, a REFERENCE from Options.Secrets; one that
// cannot be resolved fails the launch with TASK_FAILED,
// REASON_CONTAINER_LAUNCH_FAILED; an environment the master's validation
// refuses, e.g. a SECRET variable with a value, is TASK_ERROR) and what
// a Mesos agent gives an executor: MESOS_AGENT_ENDPOINT,
// MESOS_FRAMEWORK_ID, MESOS_EXECUTOR_ID, MESOS_DIRECTORY, MESOS_SANDBOX,
// MESOS_CHECKPOINT, MESOS_RECOVERY_TIMEOUT,
// MESOS_SUBSCRIPTION_BACKOFF_MAX, MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD
// (the set the library's executor/config reads), MESOS_AGENT_ID and
// MESOS_SLAVE_ID, and MESOS_TASK_ID for command tasks.
//
// Before the process starts, the agent fetches the CommandInfo's URIs
// into the sandbox as Mesos' fetcher does (under the URI's last path
// segment or output_file; mode 0755 when executable), but only local
// files (an absolute path or file://) and without extracting: any other
// URI, a missing file, an archive with extract set, or an output_file
// outside the sandbox fails the launch with TASK_FAILED,
// REASON_CONTAINER_LAUNCH_FAILED, "Failed to fetch '<uri>': ...".
//
// A persistent volume lives in <Dir>/agents/<agent>/volumes/roles/<role>/
// <persistence id> for as long as the volume exists (across task restarts and agent
// restarts). A test cannot mount, so the volume's container_path is a
// symbolic link inside the sandbox (<sandbox>/<container_path>, also
// for an absolute container_path) to that directory: a task that reads
// $MESOS_SANDBOX/<container_path> sees what Mesos would mount there.
//
// An executor whose process exits leaves its tasks' non-terminal states
// to the agent: TASK_FAILED, source SOURCE_AGENT, reason
// REASON_EXECUTOR_TERMINATED (TASK_KILLED after a SHUTDOWN).
//
// # Faults and inspection
//
// KillAgent (processes killed, offers rescinded, tasks TASK_LOST — or
// TASK_UNREACHABLE when PARTITION_AWARE — and a FAILURE event),
// RestartAgent (back with reservations and volumes, without tasks),
// DisconnectExecutors (an agent restart with checkpointing: executor
// streams closed, processes kept; a re-SUBSCRIBE's unacknowledged
// updates are taken, once per uuid, as Mesos does),
// FailTask and FailTaskOf(framework id, task id) (SIGKILL to a task's
// process: TASK_FAILED from the agent),
// RescindOffer, DisconnectScheduler(framework id), RemoveFramework
// (framework id), and agents too small for a task. Frameworks (ids,
// roles, principal, subscribed), Tasks (each with its framework and
// role), Task and TaskOf(framework id, task id), CompletedTasks, Agent (reservations with labels and by role,
// volumes and their directories), Offers (with their framework), Calls,
// CallsOf, ExecutorCalls, Executors (with their resources),
// OperationErrors and Warnings show the state;
// FrameworkID and Subscribed speak of the first registered framework;
// Await waits for a condition on it without sleeping.
package mesostest
