package mesosconv

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// ErrDecision: a decision cannot be expressed as a Mesos call.
var ErrDecision = errors.New("mesosconv: bad decision")

// Offer converts a protobuf offer: unreserved cpus, mem and root disk
// (not volumes) are summed, unreserved PATH and MOUNT disks listed one
// by one (with their source); resources dynamically reserved to role and
// labelled by framework are grouped by their plan.LabelReservation
// label. Unreserved ports are listed as ranges; the agent's text and
// scalar attributes and its fault domain are copied (agentPlace).
// Everything else (other roles, other frameworks) is left out.
func Offer(o mesos.Offer, framework, role string) plan.Offer {
	out := plan.Offer{ID: o.ID.Value, AgentID: o.AgentID.Value, Hostname: o.Hostname}
	for _, e := range o.ExecutorIDs {
		out.ExecutorIDs = append(out.ExecutorIDs, e.Value)
	}
	agentPlace(&out, o)
	byID := map[string]int{}
	for _, r := range o.Resources {
		if r.IsUnreserved() {
			if r.IsPersistentVolume() {
				continue
			}
			if r.Name == "ports" {
				for _, rg := range r.GetRanges().GetRange() {
					out.Ports = append(out.Ports, plan.PortRange{Begin: rg.Begin, End: rg.End})
				}
				continue
			}
			if r.Name == "disk" && r.GetDisk().GetSource() != nil {
				if src := diskSource(r); src != nil {
					out.Disks = append(out.Disks, plan.Disk{Source: *src, SizeMB: r.GetScalar().GetValue()})
				}
				continue // BLOCK and RAW disks are of no use to a volume
			}
			addScalar(&out.Unreserved, r)
			continue
		}
		if r.ReservationRole() != role {
			continue
		}
		labels := reservationLabels(r)
		if labels[plan.LabelFramework] != framework || labels[plan.LabelReservation] == "" {
			continue
		}
		id := labels[plan.LabelReservation]
		i, ok := byID[id]
		if !ok {
			i = len(out.Reservations)
			byID[id] = i
			out.Reservations = append(out.Reservations, plan.OfferedReservation{
				Framework: framework, Service: labels[plan.LabelService], Pod: labels[plan.LabelPod], ReservationID: id,
			})
		}
		res := &out.Reservations[i]
		if n := len(r.Reservations); n > 0 {
			res.Principal = r.Reservations[n-1].GetPrincipal()
		} else if r.Reservation != nil {
			res.Principal = r.Reservation.GetPrincipal()
		}
		if r.IsPersistentVolume() {
			res.Volume = &plan.Volume{
				ID:            r.GetDisk().GetPersistence().GetID(),
				ContainerPath: r.GetDisk().GetVolume().GetContainerPath(),
				SizeMB:        r.GetScalar().GetValue(),
				Source:        diskSource(r),
			}
			continue
		}
		if r.Name == "disk" && r.GetDisk().GetSource() != nil {
			res.DiskSource = diskSource(r)
		}
		if r.Name == "ports" {
			for _, rg := range r.GetRanges().GetRange() {
				res.Ports = append(res.Ports, plan.PortRange{Begin: rg.Begin, End: rg.End})
			}
			continue
		}
		addScalar(&res.Resources, r)
	}
	return out
}

// diskSource returns the PATH or MOUNT source of a disk resource, nil
// for the root disk and for other kinds of source.
func diskSource(r mesos.Resource) *plan.DiskSource {
	s := r.GetDisk().GetSource()
	switch s.GetType() {
	case mesos.Resource_DiskInfo_Source_PATH:
		return &plan.DiskSource{Type: plan.DiskPath, Root: s.GetPath().GetRoot()}
	case mesos.Resource_DiskInfo_Source_MOUNT:
		return &plan.DiskSource{Type: plan.DiskMount, Root: s.GetMount().GetRoot()}
	}
	return nil
}

// sourceProto is the DiskInfo.Source of a PATH or MOUNT disk; nil for
// the root disk.
func sourceProto(s *plan.DiskSource) *mesos.Resource_DiskInfo_Source {
	if s == nil {
		return nil
	}
	root := s.Root
	switch s.Type {
	case plan.DiskPath:
		return &mesos.Resource_DiskInfo_Source{Type: mesos.Resource_DiskInfo_Source_PATH, Path: &mesos.Resource_DiskInfo_Source_Path{Root: &root}}
	case plan.DiskMount:
		return &mesos.Resource_DiskInfo_Source{Type: mesos.Resource_DiskInfo_Source_MOUNT, Mount: &mesos.Resource_DiskInfo_Source_Mount{Root: &root}}
	}
	return nil
}

func addScalar(to *plan.Resources, r mesos.Resource) {
	v := r.GetScalar().GetValue()
	switch r.Name {
	case "cpus":
		to.CPUs += v
	case "mem":
		to.MemMB += v
	case "disk":
		to.DiskMB += v
	}
}

// reservationLabels returns the labels of the resource's own (last)
// reservation, in either the refined or the older single form.
func reservationLabels(r mesos.Resource) map[string]string {
	var ls *mesos.Labels
	if n := len(r.Reservations); n > 0 {
		ls = r.Reservations[n-1].GetLabels()
	} else if r.Reservation != nil {
		ls = r.Reservation.GetLabels()
	}
	out := map[string]string{}
	for _, l := range ls.GetLabels() {
		out[l.Key] = l.GetValue()
	}
	return out
}

// Status converts a protobuf status update. The state keeps its Mesos
// name (plan.TaskState.Class classifies it); of the reasons, two matter:
// REASON_RECONCILIATION marks an answer to RECONCILE, and
// REASON_AGENT_REMOVED_BY_OPERATOR says the agent was marked gone even
// where the state does not (TASK_LOST to a framework that is not
// partition-aware): the status counts as TASK_GONE_BY_OPERATOR.
func Status(st mesos.TaskStatus) plan.Status {
	state := plan.TaskState(st.GetState().String())
	if st.GetReason() == mesos.REASON_AGENT_REMOVED_BY_OPERATOR && state.Terminal() {
		state = plan.TaskGoneByOperator
	}
	return plan.Status{
		TaskID:         st.TaskID.Value,
		AgentID:        st.GetAgentID().GetValue(),
		State:          state,
		Reconciliation: st.GetReason() == mesos.REASON_RECONCILIATION,
	}
}

// TaskBuilder makes the TaskInfo of a LAUNCH: the plan gives the op,
// the agent and the task's resources (reserved ones labelled, and the
// volume); the builder adds the command or executor, and may hand part
// of the resources to the executor.
type TaskBuilder func(op plan.Op, agentID string, resources mesos.Resources) mesos.TaskInfo

// Converter turns decisions into scheduler calls for one framework.
type Converter struct {
	Framework string // plan.Spec.Framework: the reservation label
	// ServiceID is plan.Spec.ServiceID: the LabelService label of new
	// reservations ("" leaves it out). An operation on an existing
	// reservation names the label as offered (none on reservations made
	// before service ids).
	ServiceID string
	Role      string
	// Principal is the framework's principal (FrameworkInfo.principal).
	// Once the framework authenticates, the master refuses a RESERVE
	// whose reservation, or a CREATE whose volume, does not carry it;
	// "" leaves both unset.
	Principal   string
	FrameworkID string
	Build       TaskBuilder
	// Region is the master's region (SUBSCRIBED's master_info.domain):
	// an offer from an agent of another region is plan.Offer.Remote. ""
	// (a master without a domain) makes no offer remote.
	Region string

	// offered holds, by reservation id, the principals the framework's
	// reservations showed in offers (Converter.Offer).
	offered map[string]offeredPrincipals
}

// offeredPrincipals is what an offer showed of one of the framework's
// reservations: its reservation's principal and, once it holds a
// volume, the volume's (nil: none).
type offeredPrincipals struct {
	reservation, volume *string
	hasVolume           bool
	// service is the reservation's LabelService value; nil: no such label.
	service *string
}

// Offer converts o as the function Offer does, and remembers the
// principals of the framework's reservations and volumes in it: an
// operation on an existing reservation (LAUNCH, CREATE, DESTROY,
// UNRESERVE) must name its resources exactly as they are, and a
// reservation made before the framework had a principal, or by an
// older scheduler that did not set it, has none. New reservations and
// volumes take Principal.
func (c *Converter) Offer(o mesos.Offer) plan.Offer {
	if c.offered == nil {
		c.offered = map[string]offeredPrincipals{}
	}
	for _, r := range o.Resources {
		if r.IsUnreserved() || r.ReservationRole() != c.Role {
			continue
		}
		labels := reservationLabels(r)
		id := labels[plan.LabelReservation]
		if labels[plan.LabelFramework] != c.Framework || id == "" {
			continue
		}
		svc, labelled := labels[plan.LabelService]
		if labelled && svc != c.ServiceID {
			continue // another service's, whatever its id
		}
		seen := c.offered[id]
		if labelled {
			seen.service = &svc
		}
		if n := len(r.Reservations); n > 0 {
			seen.reservation = copyString(r.Reservations[n-1].Principal)
		} else if r.Reservation != nil {
			seen.reservation = copyString(r.Reservation.Principal)
		}
		if r.IsPersistentVolume() {
			seen.hasVolume = true
			seen.volume = copyString(r.GetDisk().GetPersistence().Principal)
		}
		c.offered[id] = seen
	}
	out := Offer(o, c.Framework, c.Role)
	out.Remote = c.Region != "" && out.Region != "" && out.Region != c.Region
	return out
}

func copyString(p *string) *string {
	if p == nil {
		return nil
	}
	s := *p
	return &s
}

// principal is Principal as a proto field (nil when "").
func (c Converter) principal() *string {
	if c.Principal == "" {
		return nil
	}
	p := c.Principal
	return &p
}

// Call returns the scheduler call for a decision, or nil for decisions
// that are not Mesos calls (DRAIN and REBALANCE, which the driver
// carries out with Sluice's controller).
func (c Converter) Call(d plan.Decision) (*scheduler.Call, error) {
	var call *scheduler.Call
	switch d.Kind {
	case plan.Accept:
		ops := make([]mesos.Offer_Operation, 0, len(d.Ops))
		for _, op := range d.Ops {
			mop, err := c.operation(op, d.AgentID)
			if err != nil {
				return nil, err
			}
			ops = append(ops, mop)
		}
		ids := make([]mesos.OfferID, len(d.OfferIDs))
		for i, id := range d.OfferIDs {
			ids[i] = mesos.OfferID{Value: id}
		}
		call = calls.Accept(calls.OfferOperations(ops).WithOffers(ids...))
	case plan.Decline:
		ids := make([]mesos.OfferID, len(d.OfferIDs))
		for i, id := range d.OfferIDs {
			ids[i] = mesos.OfferID{Value: id}
		}
		call = calls.Decline(ids...).With(calls.RefuseSeconds(time.Duration(d.RefuseSeconds * float64(time.Second))))
	case plan.Kill:
		call = calls.Kill(d.TaskID, d.AgentID)
	case plan.Reconcile:
		tasks := map[string]string{}
		for _, t := range d.Tasks {
			tasks[t.TaskID] = t.AgentID
		}
		call = calls.Reconcile(calls.ReconcileTasks(tasks))
	case plan.Revive:
		call = calls.Revive()
	case plan.Suppress:
		call = calls.Suppress()
	case plan.Drain, plan.Rebalance:
		return nil, nil
	default:
		return nil, fmt.Errorf("%w: kind %q", ErrDecision, d.Kind)
	}
	return call.With(calls.Framework(c.FrameworkID)), nil
}

func (c Converter) reservation(op plan.Op) mesos.Resource_ReservationInfo {
	typ := mesos.Resource_ReservationInfo_DYNAMIC
	role := c.Role
	label := func(k, v string) mesos.Label { return mesos.Label{Key: k, Value: &v} }
	principal := c.principal()
	service := c.ServiceID
	if seen, ok := c.offered[op.ReservationID]; ok {
		principal = copyString(seen.reservation)
		service = ""
		if seen.service != nil {
			service = *seen.service
		}
	}
	labels := []mesos.Label{
		label(plan.LabelFramework, c.Framework),
		label(plan.LabelPod, op.Pod),
		label(plan.LabelReservation, op.ReservationID),
	}
	if service != "" {
		labels = append(labels, label(plan.LabelService, service))
	}
	return mesos.Resource_ReservationInfo{
		Type: &typ, Role: &role, Principal: principal,
		Labels: &mesos.Labels{Labels: labels},
	}
}

// scalars makes the cpus, mem and disk resources of r, reserved with
// ri (nil: unreserved); the disk is on src (nil: the root disk).
func scalars(r plan.Resources, ri *mesos.Resource_ReservationInfo, src *plan.DiskSource) mesos.Resources {
	var out mesos.Resources
	for _, s := range []struct {
		name string
		v    float64
	}{{"cpus", r.CPUs}, {"mem", r.MemMB}, {"disk", r.DiskMB}} {
		if s.v <= 0 {
			continue
		}
		t := mesos.SCALAR
		res := mesos.Resource{Name: s.name, Type: &t, Scalar: &mesos.Value_Scalar{Value: s.v}}
		if ri != nil {
			res.Reservations = []mesos.Resource_ReservationInfo{*ri}
		}
		if s.name == "disk" && src != nil {
			res.Disk = &mesos.Resource_DiskInfo{Source: sourceProto(src)}
		}
		out.Add1(res)
	}
	return out
}

func (c Converter) volume(op plan.Op, v *plan.Volume) mesos.Resource {
	ri := c.reservation(op)
	disk := scalars(plan.Resources{DiskMB: v.SizeMB}, &ri, nil)[0]
	principal := c.principal()
	if seen, ok := c.offered[op.ReservationID]; ok && seen.hasVolume {
		principal = copyString(seen.volume)
	}
	mode := mesos.RW
	disk.Disk = &mesos.Resource_DiskInfo{
		Source:      sourceProto(v.Source),
		Persistence: &mesos.Resource_DiskInfo_Persistence{ID: v.ID, Principal: principal},
		Volume:      &mesos.Volume{ContainerPath: v.ContainerPath, Mode: &mode},
	}
	return disk
}

func (c Converter) operation(op plan.Op, agentID string) (mesos.Offer_Operation, error) {
	switch op.Kind {
	case plan.OpReserve:
		ri := c.reservation(op)
		return calls.OpReserve(withPorts(scalars(op.Resources, &ri, op.DiskSource), op.Ports, &ri)...), nil
	case plan.OpUnreserve:
		ri := c.reservation(op)
		return calls.OpUnreserve(withPorts(scalars(op.Resources, &ri, op.DiskSource), op.Ports, &ri)...), nil
	case plan.OpCreate, plan.OpDestroy:
		if op.Volume == nil {
			return mesos.Offer_Operation{}, fmt.Errorf("%w: %s without a volume", ErrDecision, op.Kind)
		}
		if op.Kind == plan.OpCreate {
			return calls.OpCreate(c.volume(op, op.Volume)), nil
		}
		return calls.OpDestroy(c.volume(op, op.Volume)), nil
	case plan.OpLaunch:
		var res mesos.Resources
		if op.ReservationID != "" {
			ri := c.reservation(op)
			res = scalars(op.Resources, &ri, nil)
		} else {
			res = scalars(op.Resources, nil, nil)
		}
		if op.Volume != nil {
			res.Add1(c.volume(op, op.Volume))
		}
		if op.ReservedPorts {
			ri := c.reservation(op)
			res = withPorts(res, op.Ports, &ri)
		} else if len(op.Ports) > 0 {
			res.Add1(Ports(op.Ports))
		}
		if c.Build == nil {
			return mesos.Offer_Operation{}, fmt.Errorf("%w: no TaskBuilder", ErrDecision)
		}
		ti := c.Build(op, agentID, res)
		ti.TaskID = mesos.TaskID{Value: op.TaskID}
		ti.AgentID = mesos.AgentID{Value: agentID}
		if ti.Name == "" {
			ti.Name = op.Pod
		}
		return calls.OpLaunch(ti), nil
	}
	return mesos.Offer_Operation{}, fmt.Errorf("%w: op %q", ErrDecision, op.Kind)
}

// Ports is the unreserved "ports" resource holding exactly ports (one
// range per run of consecutive ports).
func Ports(ports []int) mesos.Resource {
	sorted := append([]int(nil), ports...)
	sort.Ints(sorted)
	var rs []mesos.Value_Range
	for _, q := range sorted {
		if n := len(rs); n > 0 && rs[n-1].End+1 == uint64(q) {
			rs[n-1].End = uint64(q)
			continue
		}
		rs = append(rs, mesos.Value_Range{Begin: uint64(q), End: uint64(q)})
	}
	t := mesos.RANGES
	return mesos.Resource{Name: "ports", Type: &t, Ranges: &mesos.Value_Ranges{Range: rs}}
}

// agentPlace copies the agent's fault domain and attributes into out:
// text attributes as they are, scalar ones as their number (Marathon's
// and the DC/OS SDK's constraints compare both as text); ranges and
// sets are left out.
func agentPlace(out *plan.Offer, o mesos.Offer) {
	if fd := o.GetDomain().GetFaultDomain(); fd != nil {
		out.Region, out.Zone = fd.Region.Name, fd.Zone.Name
	}
	for _, a := range o.Attributes {
		var v string
		switch a.GetType() {
		case mesos.TEXT:
			v = a.GetText().GetValue()
		case mesos.SCALAR:
			v = strconv.FormatFloat(a.GetScalar().GetValue(), 'f', -1, 64)
		default:
			continue
		}
		if out.Attributes == nil {
			out.Attributes = map[string]string{}
		}
		out.Attributes[a.Name] = v
	}
}

// withPorts adds to rs the "ports" resource holding ports, reserved
// with ri; no ports adds nothing.
func withPorts(rs mesos.Resources, ports []int, ri *mesos.Resource_ReservationInfo) mesos.Resources {
	if len(ports) == 0 {
		return rs
	}
	r := Ports(ports)
	r.Reservations = []mesos.Resource_ReservationInfo{*ri}
	return append(rs, r)
}
