package executor

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpexec"
	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/retry"
)

var (
	// ErrConfig: the options or the MESOS_* environment are not usable.
	ErrConfig = errors.New("executor: bad configuration")
	// ErrAgentLost: the agent could not be reached again within the
	// recovery timeout (or the framework does not checkpoint).
	ErrAgentLost = errors.New("executor: agent lost")
)

// Options configure Run.
type Options struct {
	Role Role
	// Binary is the program the role runs as (default: this executable).
	Binary string
	// Args are the role's own arguments, e.g. ["node", "--data", ...].
	Args []string
	// HealthAddr is the address to probe; empty: the one the role prints.
	HealthAddr string
	// HealthInterval is the time between probes (default 5 s); a probe
	// may take as long.
	HealthInterval time.Duration
	// Core tunes the state machine (Role and NewUUID are filled in).
	Core CoreConfig
	// AuthToken is the agent's MESOS_EXECUTOR_AUTHENTICATION_TOKEN
	// (TokenFromEnv): when set, every call to the agent carries
	// "Authorization: Bearer <token>". It is never logged, and the role's
	// process does not inherit it.
	AuthToken string
	// Stdout receives the role's stdout (default os.Stdout, the sandbox's
	// stdout file); its stderr is the executor's.
	Stdout io.Writer
	// Logger receives the executor's events (discarded if nil).
	Logger logrus.FieldLogger
}

// Run subscribes to the agent named by cfg, runs the task it launches
// and returns when the task is over and its last update acknowledged,
// after SHUTDOWN, or with ErrAgentLost. ctx ending stops the task as
// SHUTDOWN does.
func Run(ctx context.Context, cfg config.Config, o Options) error {
	if !o.Role.Valid() {
		return fmt.Errorf("%w: role %q: want %s", ErrConfig, o.Role, RoleList())
	}
	if len(o.Args) == 0 {
		return fmt.Errorf("%w: no role arguments", ErrConfig)
	}
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		o.Binary = exe
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = 5 * time.Second
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	o.Logger = logs.OrDiscard(o.Logger)
	o.Core.Role = o.Role
	if o.Core.NewUUID == nil {
		o.Core.NewUUID = newUUID
	}
	if o.Core.ShutdownGrace == 0 && cfg.ExecutorShutdownGracePeriod > 0 {
		// Leave the agent's grace period a margin to send the update.
		o.Core.ShutdownGrace = cfg.ExecutorShutdownGracePeriod * 3 / 4
	}
	d := &driver{cfg: cfg, o: o, core: NewCore(o.Core), in: make(chan Input, 64), log: o.Logger,
		timers: map[Timer]*time.Timer{}, done: make(chan struct{}),
		// Re-subscriptions wait 100 ms, doubling up to the agent's
		// MESOS_SUBSCRIPTION_BACKOFF_MAX.
		backoff: retry.NewBackoff(minResubscribe, cfg.SubscriptionBackoffMax)}
	return d.run(ctx)
}

// driver is the thin I/O loop around Core: one goroutine (run) owns the
// core and the HTTP calls; the child's waiter, its stdout scanner, the
// health prober, the event-stream reader and the timers only post inputs.
type driver struct {
	cfg  config.Config
	o    Options
	core *Core
	log  logrus.FieldLogger

	in      chan Input
	sender  calls.Sender                // UPDATE calls
	sub     calls.Sender                // SUBSCRIBE (its own connection)
	stream  io.Closer                   // the open event stream, nil while disconnected
	gen     int                         // the stream's generation, to ignore stale ends
	lostAt  time.Time                   // when the stream was lost
	backoff *backoff.ExponentialBackOff // waits between re-subscriptions

	agentLost error // why run ends, if the agent was lost
	done      chan struct{}

	child  *exec.Cmd
	health context.CancelFunc
	timers map[Timer]*time.Timer
	resub  *time.Timer
}

type streamEvent struct {
	gen int
	ev  *executor.Event
	err error // the stream ended
}

type resubscribe struct{}

func (streamEvent) input() {}
func (resubscribe) input() {}

func (d *driver) run(ctx context.Context) error {
	cli := httpcli.New(
		httpcli.Endpoint("http://"+d.cfg.AgentEndpoint+"/api/v1/executor"),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second), bearer(d.o.AuthToken))),
	)
	opts := executor.CallOptions{calls.Framework(d.cfg.FrameworkID), calls.Executor(d.cfg.ExecutorID)}
	d.sender = calls.SenderWith(httpexec.NewSender(cli.Send), opts...)
	d.sub = calls.SenderWith(httpexec.NewSender(cli.Send, httpcli.Close(true)), opts...)
	defer d.cleanup()

	if err := d.subscribe(); err != nil {
		return fmt.Errorf("executor: subscribe to %s: %w", d.cfg.AgentEndpoint, err)
	}
	stopping := false
	for {
		var in Input
		select {
		case in = <-d.in:
		case <-ctx.Done():
			if stopping {
				// Still waiting for the child; keep serving inputs.
				in = <-d.in
				break
			}
			stopping = true
			in = ShutdownRequested{}
		}
		var err error
		if in, err = d.translate(in); err != nil {
			return err
		}
		if in == nil {
			continue
		}
		for _, a := range d.core.Step(in) {
			if d.do(a) {
				return d.exitErr()
			}
		}
	}
}

// translate turns driver-only inputs (stream events, reconnection) into
// core inputs, or handles them (nil).
func (d *driver) translate(in Input) (Input, error) {
	switch in := in.(type) {
	case streamEvent:
		if in.gen != d.gen {
			return nil, nil
		}
		if in.err != nil {
			return d.lost(in.err)
		}
		return d.event(in.ev), nil
	case resubscribe:
		d.resub = nil
		if err := d.subscribe(); err != nil {
			d.log.WithError(err).Warn("executor: re-subscribe failed")
			return d.lost(err)
		}
		d.log.Info("executor: re-subscribed to the agent")
		return nil, nil
	}
	return in, nil
}

// minResubscribe is the first wait before subscribing again.
const minResubscribe = 100 * time.Millisecond

// lost handles a dropped or refused stream: retry with backoff within the
// recovery timeout (checkpointing frameworks), else stop the task.
func (d *driver) lost(err error) (Input, error) {
	if d.stream != nil {
		d.stream.Close()
		d.stream = nil
		d.lostAt = time.Now()
		d.backoff.Reset()
	}
	if d.core.Phase() == PhaseDone && !d.cfg.Checkpoint {
		return nil, fmt.Errorf("%w: %v", ErrAgentLost, err)
	}
	if !d.cfg.Checkpoint || time.Since(d.lostAt) > d.cfg.RecoveryTimeout {
		d.agentLost = fmt.Errorf("%w: %v", ErrAgentLost, err)
		if d.core.Phase() == PhaseIdle || d.core.Phase() == PhaseDone {
			return nil, d.agentLost
		}
		return Disconnected{Reason: err.Error()}, nil
	}
	wait := d.backoff.NextBackOff()
	d.log.WithError(err).WithField("retry_in", wait).Warn("executor: disconnected from the agent; the task keeps running")
	d.resub = time.AfterFunc(wait, func() { d.post(resubscribe{}) })
	return nil, nil
}

func (d *driver) event(ev *executor.Event) Input {
	switch ev.Type {
	case executor.Event_SUBSCRIBED:
		d.log.WithField("agent", ev.Subscribed.AgentInfo.GetID().GetValue()).Info("executor: subscribed")
	case executor.Event_LAUNCH:
		return Launched{Task: ev.Launch.Task}
	case executor.Event_KILL:
		var g time.Duration
		if p := ev.Kill.KillPolicy.GetGracePeriod(); p != nil {
			g = time.Duration(p.Nanoseconds)
		}
		return KillRequested{TaskID: ev.Kill.TaskID.Value, Grace: g}
	case executor.Event_SHUTDOWN:
		return ShutdownRequested{}
	case executor.Event_ACKNOWLEDGED:
		return Acknowledged{TaskID: ev.Acknowledged.TaskID.Value, UUID: ev.Acknowledged.UUID}
	case executor.Event_ERROR:
		d.log.WithField("message", ev.GetError().GetMessage()).Warn("executor: error from the agent")
	}
	return nil
}

// subscribe opens the event stream, carrying what is unacknowledged.
func (d *driver) subscribe() error {
	tasks, updates := d.core.Unacknowledged()
	resp, err := d.sub.Send(context.Background(), calls.NonStreaming(calls.Subscribe(tasks, updates)))
	if err != nil {
		if resp != nil {
			resp.Close()
		}
		return err
	}
	d.gen++
	d.stream = resp
	go d.read(d.gen, resp)
	return nil
}

func (d *driver) read(gen int, dec encoding.Decoder) {
	for {
		ev := new(executor.Event)
		if err := dec.Decode(ev); err != nil {
			if err == io.EOF {
				err = errors.New("the agent closed the event stream")
			}
			d.post(streamEvent{gen: gen, err: err})
			return
		}
		d.post(streamEvent{gen: gen, ev: ev})
	}
}

// post hands an input to the loop. The channel is drained until run
// returns; afterwards posts are dropped (done is closed).
func (d *driver) post(in Input) {
	select {
	case d.in <- in:
	case <-d.done:
	}
}

// do performs one action; true means exit.
func (d *driver) do(a Action) bool {
	switch a := a.(type) {
	case StartChild:
		d.startChild()
	case SendUpdate:
		d.log.WithFields(logrus.Fields{"task": a.Status.TaskID.Value, "state": a.Status.GetState().String(), "message": a.Status.GetMessage()}).Info("executor: status update")
		if d.stream == nil {
			return false // sent with the next SUBSCRIBE
		}
		// Not ctx: the last updates go out while ctx is being ended.
		resp, err := d.sender.Send(context.Background(), calls.NonStreaming(calls.Update(a.Status)))
		if resp != nil {
			resp.Close()
		}
		if err != nil {
			d.log.WithError(err).Warn("executor: status update not sent; it goes with the next SUBSCRIBE")
		}
	case SignalChild:
		if d.child != nil && d.child.Process != nil {
			_ = d.child.Process.Signal(a.Signal)
		}
	case StartTimer:
		if t := d.timers[a.Timer]; t != nil {
			t.Stop()
		}
		timer := a.Timer
		d.timers[a.Timer] = time.AfterFunc(a.After, func() { d.post(TimerFired{Timer: timer}) })
	case WatchHealth:
		d.stopHealth()
		hctx, cancel := context.WithCancel(context.Background())
		d.health = cancel
		go d.probe(hctx, a.Addr)
	case StopHealth:
		d.stopHealth()
	case Exit:
		return true
	}
	return false
}

func (d *driver) exitErr() error {
	return d.agentLost
}

func (d *driver) startChild() {
	cmd := exec.Command(d.o.Binary, d.o.Args...)
	cmd.Env = childEnv(os.Environ())
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		go d.post(ChildStartFailed{Err: err.Error()}) // not from the loop itself: the channel may be full
		return
	}
	d.child = cmd
	d.log.WithFields(logrus.Fields{"pid": cmd.Process.Pid, "args": strings.Join(d.o.Args, " ")}).Info("executor: started " + string(d.o.Role))
	go d.post(ChildStarted{})
	if d.o.HealthAddr != "" {
		go d.post(ChildListening{Addr: d.o.HealthAddr})
	}
	prefix := d.o.Role.ListenPrefix()
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(d.o.Stdout, line)
			if addr, ok := strings.CutPrefix(line, prefix); ok && d.o.HealthAddr == "" {
				d.post(ChildListening{Addr: strings.TrimSpace(addr)})
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		err := cmd.Wait()
		d.post(ChildExited{Exit: exitStatus(cmd, err)})
	}()
}

func exitStatus(cmd *exec.Cmd, err error) ExitStatus {
	ps := cmd.ProcessState
	if ps == nil {
		return ExitStatus{Code: -1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitStatus{Signal: ws.Signal()}
	}
	return ExitStatus{Code: ps.ExitCode()}
}

// probe checks addr now and then every HealthInterval until ctx ends.
func (d *driver) probe(ctx context.Context, addr string) {
	addr = dialable(addr)
	t := time.NewTicker(d.o.HealthInterval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, d.o.HealthInterval)
		err := Probe(pctx, d.o.Role, addr)
		cancel()
		if ctx.Err() != nil {
			return
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		d.post(HealthChecked{Err: msg})
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// RoleList names the roles for messages: "node, controller, ... or
// s3-gateway".
func RoleList() string {
	var names []string
	for _, r := range Roles {
		names = append(names, string(r))
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Probe checks a role once: a node must accept a connection and answer
// Hello; a controller must answer GET /health with 200; a head must
// accept a TCP connection on its port (an HDFS head's NameNode RPC
// port; the NFS head's NFS/MOUNT port; the S3 head's HTTP port).
func Probe(ctx context.Context, role Role, addr string) error {
	switch {
	case role.IsHead():
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	case role == RoleNode:
		c, err := segclient.Dial(ctx, addr)
		if err != nil {
			return err
		}
		return c.Close()
	case role == RoleController:
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /health: %s", resp.Status)
		}
		return nil
	}
	return fmt.Errorf("%w: role %q", ErrConfig, role)
}

// dialable replaces an unspecified listen host (0.0.0.0, ::) by loopback.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

func (d *driver) stopHealth() {
	if d.health != nil {
		d.health()
		d.health = nil
	}
}

// cleanup runs when run returns: no goroutine of the driver outlives it
// except the stream reader and child waiter, which end with the stream
// and the child (both ended here) and then drop their posts.
func (d *driver) cleanup() {
	d.stopHealth()
	for _, t := range d.timers {
		t.Stop()
	}
	if d.resub != nil {
		d.resub.Stop()
	}
	if d.stream != nil {
		d.stream.Close()
	}
	if d.child != nil && d.core.Phase() != PhaseDone {
		_ = d.child.Process.Kill()
	}
	close(d.done)
}

func newUUID() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return b
}
