package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// UninstallEnv is the environment variable Cosmos sets to "true" on the
// scheduler's Marathon app to uninstall a DC/OS SDK service; `sluice
// scheduler` reads it as --uninstall.
const UninstallEnv = "SDK_UNINSTALL"

// RoleFor is the Mesos role of a service that is given none: the
// service name without its leading slash, the slashes of a folder
// (/prod/sluice) as "__", and "-role" (prod__sluice-role), as the DC/OS
// SDK derives it. ValidRole checks the result.
func RoleFor(name string) string {
	return strings.ReplaceAll(strings.TrimPrefix(name, "/"), "/", "__") + "-role"
}

// ValidRole checks a role against the rules of Mesos
// (src/common/roles.cpp, roles::validate): "*" alone, or components
// separated by single '/' (no leading or trailing one), none of them
// ".", "..", "*" or starting with '-', none holding a space, a tab, a
// line break, a vertical tab, a form feed or DEL.
func ValidRole(role string) error {
	bad := func(why string) error { return fmt.Errorf("%w: role %q %s", ErrConfig, role, why) }
	switch {
	case role == "*":
		return nil
	case role == "":
		return bad("is empty")
	case strings.HasPrefix(role, "/") || strings.HasSuffix(role, "/"):
		return bad("starts or ends with '/'")
	case strings.Contains(role, "//"):
		return bad("holds '//'")
	}
	for _, c := range strings.Split(role, "/") {
		switch {
		case c == "." || c == ".." || c == "*":
			return bad(fmt.Sprintf("has the component %q", c))
		case strings.HasPrefix(c, "-"):
			return bad("has a component starting with '-'")
		case strings.ContainsAny(c, "\t\n\v\f\r \x7f"):
			return bad("holds a space, tab, line break or DEL")
		}
	}
	return nil
}

// newServiceID makes a service's unique id (plan.Spec.ServiceID): 16
// random hex digits, once, at the first start.
func newServiceID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("scheduler: service id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// checkRole compares the configured role with the stored plan's, whose
// reservations belong to it. A role derived from the name (no --role)
// gives way to the stored one; a role given that differs is refused:
// Mesos never moves a reservation to another role, and the pods could
// no longer use theirs. (The general refusal of changes an update
// cannot apply is the update plan's.)
func (d *Driver) checkRole(stored plan.Spec) error {
	if stored.Role == "" || stored.Role == d.cfg.Role {
		return nil
	}
	if d.cfg.RoleDerived {
		d.log.WithField("role", stored.Role).Info("scheduler: taking the stored plan's role (no --role given)")
		d.cfg.Role, d.cfg.Spec.Role = stored.Role, stored.Role
		return nil
	}
	return fmt.Errorf("%w: --role %q, but the service's reservations and volumes belong to role %q, "+
		"where its stored plan made them; Mesos cannot move them to another role: give --role %q "+
		"(or uninstall the service and install it anew under the new role)", ErrConfig, d.cfg.Role, stored.Role, stored.Role)
}

// finishUninstall ends a finished uninstall plan: the framework is torn
// down (its tasks are gone and its reservations released), the
// service's ZooKeeper state deleted, and the scheduler stays up,
// unsubscribed, serving the plan COMPLETE until it is stopped: Cosmos
// polls the plan and then removes the scheduler's Marathon app, which
// would restart a scheduler that exited.
func (d *Driver) finishUninstall(ctx context.Context) {
	if d.fwID != "" && d.caller != nil {
		d.log.WithField("framework", d.fwID).Info("scheduler: uninstalled; tearing the framework down")
		// mesos-go v0.0.11 has no helper for TEARDOWN: the call has no
		// body but the framework id.
		d.call(ctx, (&scheduler.Call{Type: scheduler.Call_TEARDOWN}).With(calls.Framework(d.fwID)))
	}
	if err := d.deleteClusterState(ctx); err != nil {
		d.persist = err
		return
	}
	if err := deleteState(ctx, d.store); err != nil {
		d.persist = err
		return
	}
	d.uninstalled = true
	d.closeStream()
	d.log.Info("scheduler: uninstall complete; the service's ZooKeeper state is deleted; waiting to be stopped")
}

// deleteClusterState deletes the keys of the service's controllers and
// nodes (under Config.ClusterRoot), through a store rooted there: their
// records' checksums cover the key as their store names it, so the
// scheduler's store, rooted one level up, cannot read them. A driver on
// Config.OpenSession (tests) has no ZooKeeper to open: deleteState
// alone deletes what it holds.
func (d *Driver) deleteClusterState(ctx context.Context) error {
	if d.cfg.OpenSession != nil {
		return nil
	}
	st, err := zkstore.Open(d.cfg.ZK, d.cfg.ClusterRoot(), d.cfg.ZKSessionTimeout, d.log)
	if err != nil {
		return fmt.Errorf("scheduler: uninstall: open %s: %w", d.cfg.ClusterRoot(), err)
	}
	defer st.Close()
	return deleteState(ctx, st)
}

// deleteState deletes every key under the service's root but the
// election (the scheduler's own candidacy, which ends with its
// session; dropElection removes the rest when Run ends).
func deleteState(ctx context.Context, st cluster.Store) error {
	kids, err := st.List(ctx, "")
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return fmt.Errorf("scheduler: uninstall: list the state: %w", err)
	}
	for _, kv := range kids {
		if err := deleteTree(ctx, st, kv.Key, keyLeader); err != nil {
			return err
		}
	}
	return nil
}

// deleteTree deletes key and every key under it, but keep and its
// ancestors.
func deleteTree(ctx context.Context, st cluster.Store, key, keep string) error {
	if key == keep {
		return nil
	}
	kids, err := st.List(ctx, key)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("scheduler: uninstall: list %s: %w", key, err)
	}
	for _, kv := range kids {
		if err := deleteTree(ctx, st, kv.Key, keep); err != nil {
			return err
		}
	}
	if keep == key || strings.HasPrefix(keep, key+"/") {
		return nil
	}
	if err := st.Delete(ctx, key, cluster.AnyVersion); err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return fmt.Errorf("scheduler: uninstall: delete %s: %w", key, err)
	}
	return nil
}

// dropElection removes the election's keys once this scheduler has
// resigned, after an uninstall: the service leaves nothing under its
// root. A key another candidate still holds stays.
func dropElection(st cluster.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, k := range []string{keyLeader, path.Dir(keyLeader)} {
		if err := st.Delete(ctx, k, cluster.AnyVersion); err != nil && !errors.Is(err, cluster.ErrNotFound) {
			return
		}
	}
}

// uninstallView adds the phase "deregister" (PENDING until the
// framework is torn down and the state deleted) to the view of an
// uninstall plan; the whole is COMPLETE only then.
func (d *Driver) uninstallView(v *PlanView) {
	if !d.p.Uninstalling() {
		return
	}
	ph := PlanPhase{Name: "deregister", Status: plan.Pending, Steps: []PlanStep{}}
	if d.uninstalled {
		ph.Status = plan.Complete
	} else if v.Status == plan.Complete {
		v.Status = plan.Starting
	}
	v.Phases = append(v.Phases, ph)
}

// uninstalledNow reports whether the uninstall has finished. GET
// /v1/health then answers 200 "uninstalled": the scheduler waits,
// unsubscribed, for Cosmos to remove its app, and Marathon must not
// restart it for failing its health check meanwhile.
func (d *Driver) uninstalledNow(ctx context.Context) bool {
	if !d.loaded.Load() {
		return false
	}
	done := false
	if err := d.do(ctx, func() { done = d.uninstalled }); err != nil {
		return false
	}
	return done
}

// forgetAgent serves POST /v1/uninstall/agents/{agent}/forget
// (plan.ForgetAgent) through planAction: 400 unless uninstalling with
// something waiting for that agent; answers the plan view.
func (d *Driver) forgetAgent(r *http.Request) error {
	agent := r.PathValue("agent")
	dropped, err := d.p.ForgetAgent(agent)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	d.log.WithFields(logrus.Fields{"agent": agent, "dropped": dropped}).Warn("scheduler: uninstall: the operator gave up on an agent; its reservations are left to Mesos")
	d.exec(d.runCtx, nil) // store the plan; finish if nothing else waits
	return nil
}

// ForgetAgent is POST /v1/uninstall/agents/{agent}/forget.
func (c *Client) ForgetAgent(ctx context.Context, agent string) (PlanView, error) {
	var v PlanView
	return v, c.call(ctx, http.MethodPost, "/v1/uninstall/agents/"+url.PathEscape(agent)+"/forget", nil, &v)
}
