package plan

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Reservation labels: every reservation the scheduler makes carries
// these three labels, so that its offers can be told apart from other
// frameworks' and matched to pods.
const (
	LabelFramework   = "sluice.framework"   // the framework's name
	LabelPod         = "sluice.pod"         // the pod's name, e.g. node-3
	LabelReservation = "sluice.reservation" // the plan's reservation id
	// LabelService is the service's unique id (Spec.ServiceID), on every
	// reservation made since plan format 2: two services never take each
	// other's reservations, even with the same framework name.
	LabelService = "sluice.service"
)

// PodKind is the role of a pod.
type PodKind string

const (
	Controller PodKind = "controller"
	Node       PodKind = "node"
	// HDFSHead serves tier 2 read-only over the HDFS protocols (`sluice
	// hdfs-gateway`). It is stateless: no reservation, no volume.
	HDFSHead PodKind = "hdfs-head"
	// NFSHead serves tier 2 read-only over NFSv3 (`sluice nfs-export`).
	// Stateless, like every head.
	NFSHead PodKind = "nfs-head"
	// S3Head serves tier 2 read-only over the S3 API (`sluice
	// s3-gateway`). Stateless, like every head.
	S3Head PodKind = "s3-head"
)

// HeadKinds are the kinds of head, in deploy order. Every head is
// stateless: no reservation, no volume, relaunched anywhere.
var HeadKinds = []PodKind{HDFSHead, NFSHead, S3Head}

// IsHead reports whether k is one of HeadKinds.
func (k PodKind) IsHead() bool { return k == HDFSHead || k == NFSHead || k == S3Head }

// rank orders the kinds: the deploy order (controllers, nodes, then
// the heads in HeadKinds' order).
func (k PodKind) rank() int {
	switch k {
	case Controller:
		return 0
	case Node:
		return 1
	case HDFSHead:
		return 2
	case NFSHead:
		return 3
	case S3Head:
		return 4
	}
	return 5
}

// Resources are the scalar resources of one pod (its task and executor
// together). For a node, DiskMB is the size of its persistent volume.
type Resources struct {
	CPUs   float64 `msgpack:"cpus"`
	MemMB  float64 `msgpack:"mem"`
	DiskMB float64 `msgpack:"disk"`
}

func (r Resources) fitsIn(have Resources) bool {
	const eps = 1e-9
	return r.CPUs <= have.CPUs+eps && r.MemMB <= have.MemMB+eps && r.DiskMB <= have.DiskMB+eps
}

func (r Resources) minus(o Resources) Resources {
	return Resources{CPUs: r.CPUs - o.CPUs, MemMB: r.MemMB - o.MemMB, DiskMB: r.DiskMB - o.DiskMB}
}

func (r Resources) String() string {
	return fmt.Sprintf("cpus:%g mem:%g disk:%g", r.CPUs, r.MemMB, r.DiskMB)
}

// Spec is the desired state, set by the operator.
type Spec struct {
	Framework string `msgpack:"framework"` // framework name: the LabelFramework value
	// ServiceID is the service's unique id, made once by the driver at
	// first start (see NewServiceID) and the LabelService value; it is in
	// every reservation and persistence id made since. "" in a plan
	// stored before format 2 until the driver sets it (SetServiceID).
	ServiceID string `msgpack:"serviceId"`
	Role      string `msgpack:"role"`
	// Principal is the framework's principal (FrameworkInfo.principal;
	// "" for none), set from the configuration on every start: Mesos
	// lets a framework add to a reservation only if it was made by the
	// same principal (see resize).
	Principal string `msgpack:"principal,omitempty"`
	// Install holds the settings fixed at install (nil in a plan stored
	// before it was kept: the first start takes the configured ones).
	Install     *Install  `msgpack:"install,omitempty"`
	Controllers int       `msgpack:"controllers"`
	Nodes       int       `msgpack:"nodes"`
	Controller  Resources `msgpack:"controllerResources"`
	Node        Resources `msgpack:"nodeResources"`
	// Heads is the number of HDFS heads (0: none) and Head the
	// resources of each (their keys predate the other heads). A plan
	// stored before heads existed has neither key: Unmarshal reports it
	// (Plan.UnsetHeads) so that the driver can take the configured ones.
	Heads int       `msgpack:"heads"`
	Head  Resources `msgpack:"headResources"`
	// NFSHeads and S3Heads are the NFS and S3 heads' counts and
	// resources; a plan stored before them lacks the key (UnsetHeads).
	NFSHeads HeadSpec `msgpack:"nfsHeads"`
	S3Heads  HeadSpec `msgpack:"s3Heads"`
	// VolumePath is the container path of a node's persistent volume
	// (relative to the sandbox). Default "wal".
	VolumePath string `msgpack:"volumePath"`
	// NodeDiskType is the kind of disk a node's volume is made on: ROOT
	// (or "", as in plans stored before the key existed) the agent's
	// root disk, PATH or MOUNT a disk the agent offers with a
	// DiskInfo.Source of that type.
	NodeDiskType DiskType `msgpack:"nodeDiskType"`
	Timing       Timing   `msgpack:"timing"`
	// Placement is each kind's placement constraint (ParsePlacement's
	// text; none: anywhere), for new placements only. A plan stored
	// before the key has none.
	Placement map[PodKind]string `msgpack:"placement,omitempty"`
	// Ports are each kind's ports: a fixed port, or 0 for any port the
	// offer holds (SetPorts). Not stored: the configuration gives them
	// on every start.
	Ports map[PodKind][]int `msgpack:"-"`
}

// Install is what a service is installed with and cannot change
// after: every controller and node runs with them (MergeSpec refuses a
// change).
type Install struct {
	// Containers is the number of segment containers of the whole
	// cluster: the assignment map has that many, and a segment's
	// container is its hash modulo it.
	Containers int `msgpack:"containers"`
	// Tier2 is the tier-2 URI ("" for none): where the history of every
	// segment written so far is.
	Tier2 string `msgpack:"tier2"`
	// HDFSConfigURL is where the tasks fetch the Hadoop configuration
	// that resolves Tier2's nameservice. It may change (taken from the
	// configuration) while Tier2 stays; with a refused Tier2 the stored
	// one is kept with it.
	HDFSConfigURL string `msgpack:"hdfsConfigURL,omitempty"`
}

// DiskType is a kind of Mesos disk resource (DiskInfo.Source.type).
type DiskType string

const (
	DiskRoot  DiskType = "ROOT"  // the agent's root disk: no Source
	DiskPath  DiskType = "PATH"  // a directory the agent offers; may be split
	DiskMount DiskType = "MOUNT" // a mounted disk; taken whole, never split
)

// DiskSource is a PATH or MOUNT disk: its type and root (the folder or
// mount point on the agent). A nil *DiskSource is the root disk.
type DiskSource struct {
	Type DiskType `msgpack:"type"`
	Root string   `msgpack:"root"`
}

func (s *DiskSource) String() string {
	if s == nil {
		return string(DiskRoot)
	}
	return string(s.Type) + ":" + s.Root
}

// Disk is an unreserved PATH or MOUNT disk resource in an offer.
type Disk struct {
	Source DiskSource
	SizeMB float64
}

// HeadSpec is the desired state of one kind of head: how many (0:
// none) and the resources of each.
type HeadSpec struct {
	Count     int       `msgpack:"count"`
	Resources Resources `msgpack:"resources"`
}

// headKey is the spec's msgpack key whose absence means that a stored
// plan predates the kind.
func headKey(k PodKind) string {
	switch k {
	case NFSHead:
		return "nfsHeads"
	case S3Head:
		return "s3Heads"
	}
	return "heads"
}

// HeadSpec returns the count and resources of the heads of kind k
// (zero for a kind that is no head).
func (s Spec) HeadSpec(k PodKind) HeadSpec {
	switch k {
	case HDFSHead:
		return HeadSpec{Count: s.Heads, Resources: s.Head}
	case NFSHead:
		return s.NFSHeads
	case S3Head:
		return s.S3Heads
	}
	return HeadSpec{}
}

// SetHeadSpec sets the count and resources of the heads of kind k; it
// does nothing for a kind that is no head.
func (s *Spec) SetHeadSpec(k PodKind, h HeadSpec) {
	switch k {
	case HDFSHead:
		s.Heads, s.Head = h.Count, h.Resources
	case NFSHead:
		s.NFSHeads = h
	case S3Head:
		s.S3Heads = h
	}
}

// count is the desired number of pods of kind k.
func (s Spec) count(k PodKind) int {
	switch k {
	case Controller:
		return s.Controllers
	case Node:
		return s.Nodes
	}
	return s.HeadSpec(k).Count
}

// resources are the resources of a new pod of kind k.
func (s Spec) resources(k PodKind) Resources {
	switch k {
	case Controller:
		return s.Controller
	case Node:
		return s.Node
	}
	return s.HeadSpec(k).Resources
}

// Timing holds the plan's intervals; zero fields take the defaults.
type Timing struct {
	// ShortRefuse is the decline filter while some pod waits for
	// resources (default 5s); LongRefuse when none does (default 120s).
	ShortRefuse time.Duration `msgpack:"shortRefuse"`
	LongRefuse  time.Duration `msgpack:"longRefuse"`
	// ReconcileRetry: explicit reconciliation is sent again for tasks
	// still unanswered after this long (default 30s).
	ReconcileRetry time.Duration `msgpack:"reconcileRetry"`
	// ImplicitReconcile is the period of implicit reconciliation
	// (default 10m).
	ImplicitReconcile time.Duration `msgpack:"implicitReconcile"`
}

func (t Timing) withDefaults() Timing {
	if t.ShortRefuse <= 0 {
		t.ShortRefuse = 5 * time.Second
	}
	if t.LongRefuse <= 0 {
		t.LongRefuse = 120 * time.Second
	}
	if t.ReconcileRetry <= 0 {
		t.ReconcileRetry = 30 * time.Second
	}
	if t.ImplicitReconcile <= 0 {
		t.ImplicitReconcile = 10 * time.Minute
	}
	return t
}

// Offer is a Mesos offer as the plan needs it: the unreserved resources
// and, grouped by reservation, the ones reserved to the framework's
// role with its labels. The driver builds it from the protobuf offer.
type Offer struct {
	ID         string
	AgentID    string
	Hostname   string
	Unreserved Resources // DiskMB: root disk only
	// Disks are the unreserved PATH and MOUNT disks, one per resource.
	Disks        []Disk
	Reservations []OfferedReservation
	// ExecutorIDs are the framework's executors running on the agent
	// (Offer.executor_ids). A pod's executor id is its task id.
	ExecutorIDs []string
	// Ports are the unreserved port ranges.
	Ports []PortRange
	// Attributes are the agent's attributes (text, scalar values as
	// text); Region and Zone its fault domain ("" when it has none).
	// Remote: the agent is in another region than the master's, which
	// only constraints on @region place pods in.
	Attributes   map[string]string
	Region, Zone string
	Remote       bool
}

// OfferedReservation is one labelled reservation in an offer.
type OfferedReservation struct {
	Framework     string // LabelFramework
	Service       string // LabelService; "" on reservations made before it existed
	Pod           string // LabelPod
	ReservationID string // LabelReservation
	// Resources reserved and not in a volume; DiskSource is the source
	// of their disk (nil: root disk).
	Resources  Resources
	DiskSource *DiskSource
	// Volume is the persistent volume made from this reservation, if any.
	Volume *Volume
	// Ports are the ports reserved in it.
	Ports []PortRange
	// Principal is the principal the reservation was made by (its last
	// ReservationInfo's; "" for none).
	Principal string
}

// Volume is a persistent volume.
type Volume struct {
	ID            string  `msgpack:"id"` // persistence id
	ContainerPath string  `msgpack:"path"`
	SizeMB        float64 `msgpack:"size"`
	// Source is the PATH or MOUNT disk the volume is on; nil: the root
	// disk (and every volume of a plan stored before the key existed).
	Source *DiskSource `msgpack:"source,omitempty"`
}

// TaskState mirrors the Mesos task states the plan distinguishes (the
// Mesos enum names, e.g. "TASK_RUNNING").
type TaskState string

const (
	TaskNone           TaskState = ""
	TaskStaging        TaskState = "TASK_STAGING"
	TaskStarting       TaskState = "TASK_STARTING"
	TaskRunning        TaskState = "TASK_RUNNING"
	TaskKilling        TaskState = "TASK_KILLING"
	TaskFinished       TaskState = "TASK_FINISHED"
	TaskFailed         TaskState = "TASK_FAILED"
	TaskKilled         TaskState = "TASK_KILLED"
	TaskError          TaskState = "TASK_ERROR"
	TaskLost           TaskState = "TASK_LOST"
	TaskDropped        TaskState = "TASK_DROPPED"
	TaskUnreachable    TaskState = "TASK_UNREACHABLE"
	TaskGone           TaskState = "TASK_GONE"
	TaskGoneByOperator TaskState = "TASK_GONE_BY_OPERATOR"
	TaskUnknown        TaskState = "TASK_UNKNOWN"
)

// StateClass is what a task state means for the pod that ran the task.
// Class is the one place a state is classified; everything else in the
// plan asks it.
type StateClass int

const (
	// ClassUnclassified: a state the plan does not know (a newer Mesos
	// enum value, or none). Treated as live: the plan waits for the next
	// update or reconciliation rather than guess.
	ClassUnclassified StateClass = iota
	// ClassActive: STAGING, STARTING, RUNNING, KILLING — the task runs
	// or is about to; nothing to do.
	ClassActive
	// ClassEnded: FINISHED, FAILED, KILLED, ERROR, DROPPED — the task is
	// over and its agent is fine: relaunch (a node in place, on its
	// volume).
	ClassEnded
	// ClassUnreachable: the agent is partitioned away; the task may
	// come back. A node waits for it (its volume is there); a controller
	// or head is launched elsewhere.
	ClassUnreachable
	// ClassLost: LOST (a framework that is not partition-aware) and
	// UNKNOWN (the master knows neither the task nor its agent) — the
	// task is over, but its agent and a node's volume may come back: a
	// node waits for its agent to offer its reservation again.
	ClassLost
	// ClassGone: GONE — the task is over and will not come back; the
	// master answers it for a task its (registered) agent does not know,
	// e.g. after the agent's host rebooted. A node is relaunched in place
	// if its agent still offers its reservation, and placed anew (the
	// controller restores its containers) if the agent offers without it.
	ClassGone
	// ClassAgentRemoved: GONE_BY_OPERATOR — the operator marked the agent
	// gone (what `dcos node decommission` does): it, and a node's volume,
	// will never come back. The pod is replaced at once: placed anew with
	// a new volume, its old reservation an orphan.
	ClassAgentRemoved
)

// Class classifies a task state (see StateClass).
func (s TaskState) Class() StateClass {
	switch s {
	case TaskStaging, TaskStarting, TaskRunning, TaskKilling:
		return ClassActive
	case TaskFinished, TaskFailed, TaskKilled, TaskError, TaskDropped:
		return ClassEnded
	case TaskUnreachable:
		return ClassUnreachable
	case TaskLost, TaskUnknown:
		return ClassLost
	case TaskGone:
		return ClassGone
	case TaskGoneByOperator:
		return ClassAgentRemoved
	}
	return ClassUnclassified
}

// Terminal reports whether the task will not run again.
func (s TaskState) Terminal() bool {
	switch s.Class() {
	case ClassEnded, ClassLost, ClassGone, ClassAgentRemoved:
		return true
	}
	return false
}

// Status is a task status update, as the plan needs it.
type Status struct {
	TaskID  string
	AgentID string
	State   TaskState
	// Reconciliation is set for answers to RECONCILE (reason
	// REASON_RECONCILIATION).
	Reconciliation bool
}

// Kind is a decision's kind.
type Kind string

const (
	Accept    Kind = "ACCEPT"    // apply Ops to OfferIDs (one agent)
	Decline   Kind = "DECLINE"   // decline OfferIDs with filter RefuseSeconds
	Kill      Kind = "KILL"      // kill TaskID on AgentID
	Drain     Kind = "DRAIN"     // hand Pod's containers to other nodes, then call OnDrained
	Reconcile Kind = "RECONCILE" // Tasks listed (explicit) or none (implicit)
	Rebalance Kind = "REBALANCE" // new nodes Pods are up: spread containers over all nodes
	Revive    Kind = "REVIVE"
	Suppress  Kind = "SUPPRESS"
	// CheckReady: check that Pod's task TaskID is ready (update.go),
	// then call OnReady.
	CheckReady Kind = "CHECK_READY"
)

// OpKind is the kind of an offer operation in an Accept.
type OpKind string

const (
	OpReserve   OpKind = "RESERVE"
	OpCreate    OpKind = "CREATE"
	OpLaunch    OpKind = "LAUNCH"
	OpDestroy   OpKind = "DESTROY"
	OpUnreserve OpKind = "UNRESERVE"
)

// Op is one offer operation. Reservation operations carry the labels
// (Framework, Pod, ReservationID) the driver must put on the resources.
type Op struct {
	Kind          OpKind
	Pod           string
	PodKind       PodKind
	Index         int
	ReservationID string    // "" for an unreserved launch
	Resources     Resources // RESERVE/UNRESERVE: the reserved amounts besides the volume; LAUNCH: the task's
	Volume        *Volume   // CREATE/DESTROY; LAUNCH on a volume
	// DiskSource is the source of the disk in Resources for RESERVE and
	// UNRESERVE (nil: root disk).
	DiskSource *DiskSource
	TaskID     string // LAUNCH
	// Ports are a LAUNCH's ports in the order of Spec.Ports[PodKind]
	// (none if it has none), and the ports a RESERVE or UNRESERVE
	// reserves or releases with Resources. ReservedPorts: a LAUNCH's
	// ports are in its reservation (a node's), else unreserved.
	Ports         []int
	ReservedPorts bool
}

// TaskRef names a task for explicit reconciliation.
type TaskRef struct {
	TaskID  string
	AgentID string
}

// Decision is one thing the driver must do.
type Decision struct {
	Kind          Kind
	OfferIDs      []string
	AgentID       string
	Ops           []Op
	RefuseSeconds float64
	TaskID        string
	Pod           string
	Tasks         []TaskRef
	Pods          []string
	// Reason says, for a DECLINE, why the pods that want a launch could
	// not use the offer (ports, placement constraint, region); "" when
	// none wanted it.
	Reason string
}

// String renders a decision on one line (the golden files' form).
func (d Decision) String() string {
	var b strings.Builder
	b.WriteString(string(d.Kind))
	switch d.Kind {
	case Accept:
		fmt.Fprintf(&b, " offers=%s agent=%s", strings.Join(d.OfferIDs, ","), d.AgentID)
		for _, op := range d.Ops {
			fmt.Fprintf(&b, " [%s pod=%s", op.Kind, op.Pod)
			if op.ReservationID != "" {
				fmt.Fprintf(&b, " res=%s", op.ReservationID)
			}
			if op.Kind != OpCreate && op.Kind != OpDestroy {
				fmt.Fprintf(&b, " %s", op.Resources)
			}
			if op.DiskSource != nil {
				fmt.Fprintf(&b, " disk=%s", op.DiskSource)
			}
			if op.Volume != nil {
				fmt.Fprintf(&b, " vol=%s:%s:%g", op.Volume.ID, op.Volume.ContainerPath, op.Volume.SizeMB)
				if op.Volume.Source != nil {
					fmt.Fprintf(&b, "@%s", op.Volume.Source)
				}
			}
			if op.TaskID != "" {
				fmt.Fprintf(&b, " task=%s", op.TaskID)
			}
			if len(op.Ports) > 0 {
				fmt.Fprintf(&b, " ports=%v", op.Ports)
			}
			b.WriteString("]")
		}
	case Decline:
		fmt.Fprintf(&b, " offers=%s refuse=%gs", strings.Join(d.OfferIDs, ","), d.RefuseSeconds)
	case Kill:
		fmt.Fprintf(&b, " task=%s agent=%s", d.TaskID, d.AgentID)
		if d.Pod != "" {
			fmt.Fprintf(&b, " pod=%s", d.Pod)
		}
	case Drain:
		fmt.Fprintf(&b, " pod=%s agent=%s", d.Pod, d.AgentID)
	case CheckReady:
		fmt.Fprintf(&b, " pod=%s task=%s", d.Pod, d.TaskID)
	case Reconcile:
		if len(d.Tasks) == 0 {
			b.WriteString(" implicit")
		}
		for _, t := range d.Tasks {
			fmt.Fprintf(&b, " %s@%s", t.TaskID, t.AgentID)
		}
	case Rebalance:
		fmt.Fprintf(&b, " added=%s", strings.Join(d.Pods, ","))
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
