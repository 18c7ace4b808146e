package mesostest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

const helperEnv = "MESOSTEST_HELPER"

// TestMain lets the test binary play an executor: a task launched with
// the helper's command re-executes this binary with MESOSTEST_HELPER set.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "executor" {
		if err := runExecutor(); err != nil {
			fmt.Fprintln(os.Stderr, "executor:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runExecutor is the helper's StandInExecutor: a minimal v1 HTTP
// executor. For each LAUNCH it appends a line to
// $MESOS_SANDBOX/data/runs (the persistent volume) and reports
// TASK_RUNNING; a task whose data is "crash" exits once RUNNING is
// acknowledged, without a terminal update. KILL answers TASK_KILLED and
// exits once that is acknowledged. A MESSAGE is echoed back, prefixed
// "echo:".
func runExecutor() error {
	return StandInExecutor{
		Launched: func(cfg config.Config, ti mesos.TaskInfo) bool {
			f, err := os.OpenFile(filepath.Join(cfg.Sandbox, "data", "runs"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				fmt.Fprintln(f, ti.TaskID.Value)
				f.Close()
			}
			return string(ti.Data) == "crash"
		},
		Message: func(data []byte) []byte { return append([]byte("echo:"), data...) },
	}.Run()
}

// sched is a scheduler driven by the library's HTTP scheduler client.
type sched struct {
	t       *testing.T
	caller  calls.Caller
	fwID    string
	resp    io.Closer
	events  chan *scheduler.Event
	ended   chan error
	offers  []mesos.Offer // seen but not yet taken by nextOffer
	autoAck bool
}

func subscribe(t *testing.T, m *Master, fwID string, codec encoding.MediaType) *sched {
	t.Helper()
	info := &mesos.FrameworkInfo{User: "sluice", Name: "sluice", Role: strPtr("sluice"), Checkpoint: boolPtr(true)}
	return subscribeCodec(t, m, info, fwID, codec)
}

func subscribeWith(t *testing.T, m *Master, info *mesos.FrameworkInfo) *sched {
	t.Helper()
	return subscribeCodec(t, m, info, "", codecs.MediaTypeProtobuf)
}

func subscribeCodec(t *testing.T, m *Master, info *mesos.FrameworkInfo, fwID string, codec encoding.MediaType) *sched {
	t.Helper()
	cli := httpcli.New(httpcli.Endpoint(m.URL()), httpcli.Codec(codecs.ByMediaType[codec]))
	return subscribeClient(t, cli, info, fwID)
}

// subscribeClient subscribes with cli (as framework fwID, if not empty).
func subscribeClient(t *testing.T, cli *httpcli.Client, info *mesos.FrameworkInfo, fwID string) *sched {
	t.Helper()
	s := &sched{t: t, caller: httpsched.NewCaller(cli), events: make(chan *scheduler.Event, 1024), ended: make(chan error, 1), autoAck: true}
	call := calls.Subscribe(info)
	if fwID != "" {
		call = call.With(calls.SubscribeTo(fwID))
	}
	resp, err := s.caller.Call(ctx(t), call)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	s.resp = resp
	t.Cleanup(func() { resp.Close() })
	go func() {
		for {
			ev := new(scheduler.Event)
			if err := resp.Decode(ev); err != nil {
				s.ended <- err
				close(s.events)
				return
			}
			s.events <- ev
		}
	}()
	ev := s.next(func(e *scheduler.Event) bool { return e.Type == scheduler.Event_SUBSCRIBED })
	s.fwID = ev.Subscribed.FrameworkID.Value
	return s
}

func boolPtr(b bool) *bool { return &b }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// call sends a call (framework id filled in) and fails the test on error.
func (s *sched) call(c *scheduler.Call) {
	s.t.Helper()
	c = c.With(calls.Framework(s.fwID))
	resp, err := s.caller.Call(ctx(s.t), c)
	if resp != nil {
		resp.Close()
	}
	if err != nil {
		s.t.Fatalf("%v: %v", c.Type, err)
	}
}

// next returns the next event that pred accepts, within 10 s. Offers
// passed over are kept for nextOffer; updates with a uuid are
// acknowledged when autoAck is set.
func (s *sched) next(pred func(*scheduler.Event) bool) *scheduler.Event {
	s.t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("event stream ended: %v", <-s.ended)
			}
			if ev.Type == scheduler.Event_RESCIND {
				s.dropOffer(ev.Rescind.OfferID.Value)
			}
			if ev.Type == scheduler.Event_UPDATE && s.autoAck && len(ev.Update.Status.UUID) > 0 {
				st := ev.Update.Status
				s.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
			}
			if pred(ev) {
				return ev
			}
			if ev.Type == scheduler.Event_OFFERS {
				s.offers = append(s.offers, ev.Offers.Offers...)
			}
		case <-timeout.C:
			s.t.Fatal("no matching event within 10s")
		}
	}
}

func (s *sched) dropOffer(id string) {
	for i, o := range s.offers {
		if o.ID.Value == id {
			s.offers = append(s.offers[:i], s.offers[i+1:]...)
			return
		}
	}
}

// nextOffer returns an offer that pred accepts, taking it from those
// already seen first.
func (s *sched) nextOffer(pred func(mesos.Offer) bool) mesos.Offer {
	s.t.Helper()
	for i, o := range s.offers {
		if pred(o) {
			s.offers = append(s.offers[:i], s.offers[i+1:]...)
			return o
		}
	}
	var found *mesos.Offer
	s.next(func(e *scheduler.Event) bool {
		if e.Type != scheduler.Event_OFFERS {
			return false
		}
		for i, o := range e.Offers.Offers {
			if pred(o) {
				found = &e.Offers.Offers[i]
				s.offers = append(s.offers, e.Offers.Offers[:i]...)
				s.offers = append(s.offers, e.Offers.Offers[i+1:]...)
				return true
			}
		}
		return false
	})
	return *found
}

func (s *sched) update(taskID string, state mesos.TaskState) mesos.TaskStatus {
	s.t.Helper()
	ev := s.next(func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_UPDATE && e.Update.Status.TaskID.Value == taskID && e.Update.Status.GetState() == state
	})
	return ev.Update.Status
}
