// Package executor is Sluice's Mesos executor: it runs one controller,
// node or head (HDFS, NFS or S3) task under a Mesos agent, reports its state, checks its health
// and stops it gracefully. It speaks the agent's v1 executor HTTP API
// through mesos-go's client (configuration from the MESOS_* environment
// the agent sets, executor/config).
//
// # Contract with the scheduler
//
// The scheduler launches each task with its own ExecutorInfo whose
// command is
//
//	./sluice executor --role controller|node|hdfs-gateway|nfs-export|s3-gateway [--health-addr HOST:PORT] -- <the role's own sluice arguments...>
//
// for example
//
//	./sluice executor --role node -- node --data $MESOS_SANDBOX/wal --zk ... --id node-0 --listen 0.0.0.0:12345
//
// The executor runs `<its own binary> <role arguments>` as a child process
// in the sandbox, with the executor's environment; the child's stdout is
// copied to the executor's stdout (the sandbox's stdout file), its stderr
// is the executor's stderr. Further flags: --health-interval (5 s),
// --health-failures (3), --startup-timeout (10 min), --kill-grace (30 s,
// used when neither the KILL nor the task carries a kill policy).
//
// Status updates the scheduler sees, in order:
//
//   - TASK_STARTING when the child is started;
//   - TASK_RUNNING (healthy=true) once the role is healthy: a node accepts
//     a connection on its data port and answers the protocol's Hello; a
//     controller answers GET /health with 200; a head accepts a TCP
//     connection on its port: an HDFS head (hdfs-gateway) on its
//     NameNode RPC port, an NFS head (nfs-export) on its NFS/MOUNT port,
//     an S3 head (s3-gateway) on its HTTP port. The address is the one
//     in the line the role prints ("node listening on ADDR", "controller
//     listening on ADDR", "hdfs head (rpc) listening on ADDR", "nfs head
//     listening on ADDR", "s3 head listening on ADDR"; an unspecified
//     host is probed on 127.0.0.1), or --health-addr (the scheduler
//     gives every head --health-addr 127.0.0.1:PORT);
//   - TASK_FINISHED when the child exits with status 0;
//   - TASK_FAILED, reason REASON_COMMAND_EXECUTOR_FAILED, message "node
//     exited with status N" or "... was killed by signal S", when it
//     exits otherwise; reason REASON_TASK_HEALTH_CHECK_STATUS_UPDATED when
//     it failed --health-failures checks in a row while running, or was
//     not healthy within --startup-timeout (the executor then stops it as
//     for a KILL); reason REASON_EXECUTOR_TERMINATED when the agent could
//     not be reached again within MESOS_RECOVERY_TIMEOUT;
//   - TASK_KILLED after KILL or SHUTDOWN: the child gets SIGTERM (a node
//     closes its containers cleanly, checkpointing them), then SIGKILL if
//     it is still there after the grace period (the KILL's kill policy,
//     else the task's, else --kill-grace; after SHUTDOWN at most 3/4 of
//     MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD).
//
// One executor runs one task: a second LAUNCH is answered TASK_FAILED
// (REASON_TASK_INVALID). The executor exits once the terminal update is
// acknowledged, or after SHUTDOWN.
//
// # Authentication
//
// When the agent authenticates executors (--authenticate_http_executors)
// it sets MESOS_EXECUTOR_AUTHENTICATION_TOKEN, which mesos-go's
// executor/config does not read: TokenFromEnv does, and with
// Options.AuthToken every call to the agent carries
// "Authorization: Bearer <token>". The token is never logged, and the
// role's process is started without it.
//
// # Agent restarts
//
// When the event stream drops and the framework checkpoints
// (MESOS_CHECKPOINT=1), the child keeps running and the executor
// subscribes again with backoff (up to MESOS_SUBSCRIPTION_BACKOFF_MAX)
// for up to MESOS_RECOVERY_TIMEOUT. Every SUBSCRIBE carries the
// updates not yet acknowledged (and the task, while none of its updates
// is), so that updates made while disconnected reach the scheduler.
// Without checkpointing, or past the timeout, the task is stopped and the
// executor exits with ErrAgentLost.
//
// # Structure
//
// Core is the deterministic state machine (inputs: agent events, child
// start and exit, health results, timers; outputs: actions such as start
// the child, send an update, signal, arm a timer, exit), tested by
// tables. Run is the thin driver: one goroutine owns the core and makes
// the HTTP calls; the child's waiter, the stdout scanner, the health
// prober, the stream reader and timers only post inputs to it.
package executor
