package mesostest

import (
	"errors"
	"io"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	ecalls "github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
)

// StandInExecutor is a minimal v1 HTTP executor built on the library's
// executor client, for a test binary that the fake agent launches as a
// task's custom executor. Run subscribes to the agent the environment
// names, reports each launched task TASK_RUNNING and answers a KILL
// with TASK_KILLED (source SOURCE_EXECUTOR, as the agent requires); it
// returns once a killed task's update is acknowledged, on SHUTDOWN, or
// when the agent ends the stream.
type StandInExecutor struct {
	// Launched, if set, sees each launched task before its TASK_RUNNING
	// is sent; true makes Run return once that update is acknowledged,
	// without a terminal update.
	Launched func(cfg config.Config, task mesos.TaskInfo) bool
	// Message, if set, answers each MESSAGE with a message of the data
	// it returns.
	Message func(data []byte) []byte
}

// Run is the executor's life; see StandInExecutor.
func (x StandInExecutor) Run() error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	cli := httpcli.New(
		httpcli.Endpoint("http://"+cfg.AgentEndpoint+"/api/v1/executor"),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
	)
	opts := executor.CallOptions{ecalls.Framework(cfg.FrameworkID), ecalls.Executor(cfg.ExecutorID)}
	update := func(ti mesos.TaskID, st mesos.TaskState) error {
		resp, err := cli.Do(ecalls.Update(mesos.TaskStatus{TaskID: ti, State: &st, Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: newUUID()}).With(opts...))
		if resp != nil {
			resp.Close()
		}
		return err
	}
	resp, err := cli.Do(ecalls.Subscribe(nil, nil).With(opts...))
	if err != nil {
		return err
	}
	defer resp.Close()
	exitOnAck := map[string]bool{}
	for {
		var ev executor.Event
		if err := resp.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		switch ev.Type {
		case executor.Event_LAUNCH:
			ti := ev.Launch.Task
			if x.Launched != nil && x.Launched(cfg, ti) {
				exitOnAck[ti.TaskID.Value] = true
			}
			if err := update(ti.TaskID, mesos.TASK_RUNNING); err != nil {
				return err
			}
		case executor.Event_KILL:
			exitOnAck[ev.Kill.TaskID.Value] = true
			if err := update(ev.Kill.TaskID, mesos.TASK_KILLED); err != nil {
				return err
			}
		case executor.Event_ACKNOWLEDGED:
			if exitOnAck[ev.Acknowledged.TaskID.Value] {
				return nil
			}
		case executor.Event_MESSAGE:
			if x.Message == nil {
				continue
			}
			resp, err := cli.Do(ecalls.Message(x.Message(ev.Message.Data)).With(opts...))
			if resp != nil {
				resp.Close()
			}
			if err != nil {
				return err
			}
		case executor.Event_SHUTDOWN:
			return nil
		}
	}
}
