package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/internal/porttest"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// fakeMesos is a fake Mesos master (requiring auth, if any) with agents
// agent-0, agent-1, ... of ports free ports each. If the test fails, every
// task's stdout and stderr are logged.
func fakeMesos(t *testing.T, auth mesostest.Auth, agents, ports int) *mesostest.Master {
	t.Helper()
	specs := make([]mesostest.AgentSpec, agents)
	for i := range specs {
		specs[i] = mesostest.AgentSpec{ID: fmt.Sprintf("agent-%d", i), CPUs: 4, MemMB: 4096, DiskMB: 4096}
	}
	return fakeMesosOf(t, auth, specs, ports)
}

// fakeMesosOf is fakeMesos with the agents given, each on 127.0.0.1 with
// ports free ports.
func fakeMesosOf(t *testing.T, auth mesostest.Auth, agents []mesostest.AgentSpec, ports int) *mesostest.Master {
	t.Helper()
	m := mesostest.NewMaster(t, mesostest.Options{AllocationInterval: 50 * time.Millisecond, Dir: t.TempDir(), Auth: auth})
	free := porttest.Ports(t, len(agents)*ports)
	for i, spec := range agents {
		var rs []mesos.Value_Range
		for _, p := range free[ports*i : ports*i+ports] {
			rs = append(rs, mesos.Value_Range{Begin: uint64(p), End: uint64(p)})
		}
		sort.Slice(rs, func(a, b int) bool { return rs[a].Begin < rs[b].Begin })
		spec.Ports, spec.Hostname = rs, "127.0.0.1"
		if err := m.AddAgent(spec); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, tv := range append(m.Tasks(), m.CompletedTasks()...) {
			for _, f := range []string{"stdout", "stderr"} {
				b, _ := os.ReadFile(filepath.Join(tv.Sandbox, f))
				t.Logf("task %s (%v) %s:\n%s", tv.ID, tv.State, f, b)
			}
		}
	})
	return m
}

// startMesosScheduler starts `sluice scheduler` (its output named name)
// on the fake master m with ZooKeeper zk, its API on a free port of
// 127.0.0.1, no artifact URI and one controller; flags give the rest
// (the framework, the nodes, the heads, tier 2) and env adds to its
// environment. It returns the process, a client of its API and the API's
// URL.
func startMesosScheduler(t *testing.T, name string, m *mesostest.Master, zk string, env []string, flags ...string) (*proctest.Proc, *scheduler.Client, string) {
	t.Helper()
	args := append([]string{"--log-level", "info", "scheduler",
		"--user", "nobody", "--mesos-master", strings.TrimSuffix(m.URL(), "/api/v1/scheduler"),
		"--zk", zk, "--api-port", "0", "--artifact-uri", "",
		"--controllers", "1", "--controller-cpus", "0.5", "--controller-mem", "256", "--controller-port", "0"}, flags...)
	p := start(t, name, append([]string{"SLUICE_SCHEDULER_API_HOST=127.0.0.1", "SLUICE_TASK_BINARY=" + sluiceBin}, env...), args...)
	api := "http://" + p.Line(t, "scheduler API listening on ", waitTimeout)
	sc, err := scheduler.NewClient(api, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, sc, api
}

// nodesLive is a waitFor condition: n nodes are live with containers, as
// the controller at ctl lists them.
func nodesLive(ctl string, n int) func() (bool, string) {
	return func() (bool, string) {
		l, err := controllerNodes(ctl)
		if err != nil {
			return false, err.Error()
		}
		live := 0
		for _, nd := range l.Nodes {
			if nd.Live && len(nd.Containers) > 0 {
				live++
			}
		}
		return live == n, fmt.Sprintf("%+v", l)
	}
}

// planComplete is a waitFor condition: sc's plan is complete.
func planComplete(sc *scheduler.Client) func() (bool, string) {
	return func() (bool, string) {
		p, err := sc.Plan(context.Background())
		if err != nil {
			return false, err.Error()
		}
		return p.Status == plan.Complete, fmt.Sprintf("%+v", p)
	}
}
