package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// service is one `sluice scheduler` of TestMesosServices and what the
// test wrote through it.
type service struct {
	name    string
	proc    *proctest.Proc
	sc      *scheduler.Client
	api     string // the scheduler's API URL
	ctl     string // the controller's REST URL
	written []string
}

// reservation is one dynamically reserved resource on a fake agent, as
// the test checks it: its role, labels and volume (if any).
type reservation struct {
	agent, role, framework, service, id, volume string
}

// reservations lists every dynamic reservation on the agents.
func reservations(t *testing.T, m *mesostest.Master, agents []string) []reservation {
	t.Helper()
	var out []reservation
	for _, a := range agents {
		v, err := m.Agent(a)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.Reserved {
			ri := r.Reservations[len(r.Reservations)-1]
			res := reservation{agent: a, role: ri.GetRole(), volume: r.GetDisk().GetPersistence().GetID()}
			for _, l := range ri.GetLabels().GetLabels() {
				switch l.Key {
				case plan.LabelFramework:
					res.framework = l.GetValue()
				case plan.LabelService:
					res.service = l.GetValue()
				case plan.LabelReservation:
					res.id = l.GetValue()
				}
			}
			out = append(out, res)
		}
	}
	return out
}

// zkKeys lists every key under root.
func zkKeys(t *testing.T, zk, root string) []string {
	t.Helper()
	st, err := zkstore.Open([]string{zk}, root, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return clustertest.Keys(context.Background(), st)
}

// TestMesosServices is the proof that two installs do not
// collide, and of the uninstall, on the fake Mesos master (no real Mesos
// runs here): two `sluice scheduler` processes, sluice-a and sluice-b,
// each with its default role (derived from its name), deploy a
// controller and two nodes each on the same three agents; events are
// written to and read back from each. Every reservation carries its own
// service's role, name and id, and no reservation or volume id is
// shared. Then sluice-a is uninstalled (SDK_UNINSTALL=true, as Cosmos
// sets it): its tasks end, its reservations and volumes are gone, its
// framework is torn down and its ZooKeeper state deleted, while
// sluice-b keeps its reservations and serves writes and reads.
func TestMesosServices(t *testing.T) {
	zk := clustertest.StartZooKeeper(t)
	agents := []string{"agent-0", "agent-1", "agent-2"}
	// Four ports an agent: each service's controller and node may land
	// on any agent.
	m := fakeMesos(t, mesostest.Auth{}, len(agents), 4)
	ctx := context.Background()
	startScheduler := func(name string, env ...string) (*proctest.Proc, *scheduler.Client, string) {
		t.Helper()
		return startMesosScheduler(t, name, m, zk, env,
			"--name", name, "--principal", name+"-principal",
			"--nodes", "2", "--node-cpus", "0.5", "--node-mem", "256", "--node-disk", "512", "--node-port", "0",
			"--containers", "4", "--tier2", "file://"+t.TempDir(), "--hdfs-config-url", "",
			"--heads", "0", "--nfs-heads", "0", "--s3-heads", "0")
	}
	var svcs []*service
	for _, name := range []string{"sluice-a", "sluice-b"} {
		p, sc, api := startScheduler(name)
		svcs = append(svcs, &service{name: name, proc: p, sc: sc, api: api})
	}
	write := func(s *service, evs []string) {
		t.Helper()
		cli(t, strings.Join(evs, "\n")+"\n", "--controller", s.ctl, "write", "e2e/s", "--timeout", "60s")
		s.written = append(s.written, evs...)
	}
	readAll := func(s *service, what string) {
		t.Helper()
		out := cli(t, "", "--controller", s.ctl, "read", "e2e/s", "--max", strconv.Itoa(len(s.written)), "--timeout", "20s")
		got := strings.Fields(out)
		sort.Strings(got)
		want := append([]string(nil), s.written...)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s, %s: read %d events, wrote %d:\n got %v\nwant %v", s.name, what, len(got), len(want), got, want)
		}
	}
	for i, s := range svcs {
		waitFor(t, s.name+" deployed", 2*waitTimeout, planComplete(s.sc))
		eps, err := s.sc.Endpoints(ctx)
		if err != nil || len(eps.Controllers) != 1 || len(eps.Nodes) != 2 {
			t.Fatalf("%s: endpoints %+v, %v", s.name, eps, err)
		}
		s.ctl = eps.Controllers[0]
		waitFor(t, s.name+"'s nodes registered", waitTimeout, nodesLive(s.ctl, 2))
		cli(t, "", "--controller", s.ctl, "scope", "create", "e2e")
		cli(t, "", "--controller", s.ctl, "stream", "create", "e2e/s", "--segments", "2")
		write(s, events(1000*i, 100))
		readAll(s, "after the deploy")
	}
	a, b := svcs[0], svcs[1]

	// Each service's reservations carry its role (derived from its name),
	// its name and its own service id; no id is shared.
	fwOf := map[string]string{}
	for _, f := range m.Frameworks() {
		fwOf[f.Name] = f.ID
		if want := scheduler.RoleFor(f.Name); len(f.Roles) != 1 || f.Roles[0] != want {
			t.Fatalf("framework %s subscribed with roles %v, want %s", f.Name, f.Roles, want)
		}
	}
	if len(fwOf) != 2 {
		t.Fatalf("frameworks %+v", m.Frameworks())
	}
	before := reservations(t, m, agents)
	serviceID := map[string]string{}
	ids, vols := map[string]string{}, map[string]string{}
	for _, r := range before {
		if r.role != scheduler.RoleFor(r.framework) || r.service == "" || !plan.ValidServiceID(r.service) || !strings.HasPrefix(r.id, r.service+".node-") {
			t.Fatalf("reservation %+v: want the role, service id and id of its service", r)
		}
		if sid, ok := serviceID[r.framework]; ok && sid != r.service {
			t.Fatalf("service %s has reservations with ids %s and %s", r.framework, sid, r.service)
		}
		serviceID[r.framework] = r.service
		if fw, ok := ids[r.id]; ok && fw != r.framework {
			t.Fatalf("reservation id %s used by %s and %s", r.id, fw, r.framework)
		}
		ids[r.id] = r.framework
		if r.volume != "" {
			if fw, ok := vols[r.volume]; ok && fw != r.framework {
				t.Fatalf("volume id %s used by %s and %s", r.volume, fw, r.framework)
			}
			vols[r.volume] = r.framework
			if !strings.HasPrefix(r.volume, r.id) {
				t.Fatalf("volume %s of reservation %s", r.volume, r.id)
			}
		}
	}
	if len(serviceID) != 2 || serviceID[a.name] == serviceID[b.name] || len(vols) != 4 {
		t.Fatalf("service ids %v, volumes %v: want two services with two volumes each", serviceID, vols)
	}
	var bBefore []string
	for _, r := range before {
		if r.framework == b.name {
			bBefore = append(bBefore, fmt.Sprintf("%+v", r))
		}
	}
	sort.Strings(bBefore)

	// Uninstall sluice-a as Cosmos does: its scheduler restarted with
	// SDK_UNINSTALL=true.
	a.proc.Stop(t, waitTimeout)
	a.proc, a.sc, a.api = startScheduler(a.name, scheduler.UninstallEnv+"=true")
	waitFor(t, "sluice-a uninstalled", 2*waitTimeout, planComplete(a.sc))
	p, err := a.sc.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, ph := range p.Phases {
		phases = append(phases, ph.Name)
	}
	if strings.Join(phases, ",") != "kill-tasks,unreserve,deregister" {
		t.Fatalf("uninstall plan phases %v", phases)
	}
	// What the operator sees of it.
	if out := cli(t, "", "cluster", "status", "--scheduler", a.api); !strings.Contains(out, "deregister") || !strings.Contains(out, "COMPLETE") {
		t.Fatalf("sluice cluster status after the uninstall:\n%s", out)
	}
	for _, tv := range m.Tasks() {
		if tv.FrameworkID == fwOf[a.name] && !plan.TaskState(tv.State.String()).Terminal() {
			t.Fatalf("sluice-a's task %s is %v after the uninstall", tv.ID, tv.State)
		}
	}
	var bAfter []string
	for _, r := range reservations(t, m, agents) {
		if r.framework == a.name || r.role == scheduler.RoleFor(a.name) || r.service == serviceID[a.name] {
			t.Fatalf("sluice-a's reservation left after the uninstall: %+v", r)
		}
		bAfter = append(bAfter, fmt.Sprintf("%+v", r))
	}
	sort.Strings(bAfter)
	if strings.Join(bAfter, "\n") != strings.Join(bBefore, "\n") {
		t.Fatalf("sluice-b's reservations changed:\nbefore\n%s\nafter\n%s", strings.Join(bBefore, "\n"), strings.Join(bAfter, "\n"))
	}
	for _, f := range m.Frameworks() {
		if f.Name == a.name {
			t.Fatalf("sluice-a's framework is still registered: %+v", f)
		}
	}
	if len(m.Frameworks()) != 1 {
		t.Fatalf("frameworks after the uninstall: %+v", m.Frameworks())
	}
	// While it waits to be stopped, only its own election remains under
	// its root; once stopped, nothing.
	rootA := "/dcos-service-" + a.name
	for _, k := range zkKeys(t, zk, rootA) {
		if k != "scheduler" && !strings.HasPrefix(k, "scheduler/leader") {
			t.Fatalf("key %s/%s left after the uninstall", rootA, k)
		}
	}
	a.proc.Stop(t, waitTimeout)
	if left := zkKeys(t, zk, rootA); len(left) != 0 {
		t.Fatalf("keys left under %s: %v", rootA, left)
	}
	if len(zkKeys(t, zk, "/dcos-service-"+b.name)) == 0 {
		t.Fatal("sluice-b's state is gone")
	}

	// sluice-b goes on: writes and reads, every event back.
	write(b, events(5000, 100))
	readAll(b, "after sluice-a's uninstall")
	if p, err := b.sc.Plan(ctx); err != nil || p.Status != plan.Complete {
		t.Fatalf("sluice-b's plan %+v, %v", p, err)
	}
}
