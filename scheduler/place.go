package scheduler

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// DefaultExecutorShare is what each pod's executor gets of the pod's
// resources: 0.1 cpus and 32 MB, what the DC/OS SDK and Marathon's
// pods give theirs. 32 MB is also Mesos' minimum executor memory
// (src/master/constants.hpp MIN_MEM; MIN_CPUS is 0.01), below which the
// master warns at every launch.
var DefaultExecutorShare = plan.Resources{CPUs: 0.1, MemMB: 32}

// PortNeeds are each kind's ports in the order its command line takes
// them (a fixed port, or 0 for any port the offer holds): the plan
// launches a pod only with an offer that holds them.
func (c Config) PortNeeds() map[plan.PodKind][]int {
	return map[plan.PodKind][]int{
		plan.Controller: {c.ControllerPort},
		plan.Node:       {c.NodePort},
		plan.HDFSHead:   {c.HeadRPCPort, c.HeadDataPort, c.HeadHTTPPort},
		plan.NFSHead:    {c.NFSHeadPort},
		plan.S3Head:     {c.S3HeadPort},
	}
}

// checkPlacement refuses a placement constraint the plan cannot parse,
// naming the kind.
func (c Config) checkPlacement() error {
	for _, k := range append([]plan.PodKind{plan.Controller, plan.Node}, plan.HeadKinds...) {
		if _, err := plan.ParsePlacement(c.Spec.Placement[k]); err != nil {
			return fmt.Errorf("%w: %s placement: %w", ErrConfig, k, err)
		}
	}
	return nil
}

// checkExecutorShare refuses pods too small to hold their executor's
// share and a task besides.
func (c Config) checkExecutorShare() error {
	check := func(k plan.PodKind, r plan.Resources) error {
		if r.CPUs <= c.ExecutorShare.CPUs || r.MemMB <= c.ExecutorShare.MemMB {
			return fmt.Errorf("%w: %s resources (%s) cannot hold the executor's share (cpus %g, mem %g) and a task: give more cpus and mem",
				ErrConfig, k, r, c.ExecutorShare.CPUs, c.ExecutorShare.MemMB)
		}
		return nil
	}
	if err := check(plan.Controller, c.Spec.Controller); err != nil {
		return err
	}
	if err := check(plan.Node, c.Spec.Node); err != nil {
		return err
	}
	for _, k := range plan.HeadKinds {
		if h := c.Spec.HeadSpec(k); h.Count > 0 {
			if err := check(k, h.Resources); err != nil {
				return err
			}
		}
	}
	return nil
}

// takePlacement gives a stored plan the configured placement
// constraints: they only decide where pods are placed from now on, so a
// changed one is taken at once (and logged).
func (d *Driver) takePlacement(p *plan.Plan) {
	stored := p.Spec().Placement
	for _, k := range append([]plan.PodKind{plan.Controller, plan.Node}, plan.HeadKinds...) {
		want := d.cfg.Spec.Placement[k]
		if stored[k] == want {
			continue
		}
		if err := p.SetPlacement(k, want); err != nil {
			d.log.WithError(err).Error("scheduler: placement constraint refused") // checked by New: cannot happen
			continue
		}
		d.log.WithFields(logrus.Fields{"kind": k, "was": stored[k], "now": want}).Info("scheduler: placement constraint changed; it applies to pods placed from now on")
	}
}

// splitExecutor hands share of res's cpus and mem to the executor: each
// comes out of the first cpus or mem resource (not a volume) that holds
// it, with the same reservation, so that task and executor together use
// exactly res. What no single resource holds stays with the task.
func splitExecutor(res mesos.Resources, share plan.Resources) (task, exec mesos.Resources) {
	want := map[string]float64{"cpus": share.CPUs, "mem": share.MemMB}
	for _, r := range res {
		v, ok := want[r.Name]
		if !ok || v <= 0 || r.Scalar == nil || r.IsPersistentVolume() || r.Scalar.Value <= v {
			task = append(task, r)
			continue
		}
		e := r
		e.Scalar = &mesos.Value_Scalar{Value: v}
		t := r
		t.Scalar = &mesos.Value_Scalar{Value: r.Scalar.Value - v}
		task, exec = append(task, t), append(exec, e)
		delete(want, r.Name)
	}
	return task, exec
}
