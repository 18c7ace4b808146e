package plan

// StepStatus is the progress of one pod, or of a phase.
type StepStatus string

const (
	Pending  StepStatus = "PENDING"  // no task running or starting
	Starting StepStatus = "STARTING" // launched, not yet running; or being decommissioned
	Complete StepStatus = "COMPLETE" // running (and, in an update step, ready)
)

// Step is one pod in the progress view.
type Step struct {
	Pod     string     `json:"pod"`
	Status  StepStatus `json:"status"`
	TaskID  string     `json:"taskId,omitempty"`
	AgentID string     `json:"agentId,omitempty"`
	State   TaskState  `json:"state,omitempty"`
	// Waiting says why a pending step cannot proceed, e.g. its agent is
	// lost, or the controllers are not all running yet.
	Waiting string `json:"waiting,omitempty"`
}

// Phase is a group of steps: "controllers", "nodes", "heads" (when the
// plan wants HDFS heads), "nfs-heads" and "s3-heads" (when it wants
// those), "decommission" while pods are being removed, and "update"
// while pods are outdated or in an update or restart step (update.go).
type Phase struct {
	Name   string     `json:"name"`
	Status StepStatus `json:"status"`
	Steps  []Step     `json:"steps"`
}

// Progress is the plan's progress view, for the scheduler's HTTP API.
type Progress struct {
	Status StepStatus `json:"status"`
	Phases []Phase    `json:"phases"`
	// Paused: no new step starts (Pause).
	Paused bool `json:"paused,omitempty"`
}

// Progress reports deployment progress.
func (p *Plan) Progress() Progress {
	if p.uninstalling {
		return p.uninstallProgress()
	}
	phases := []Phase{{Name: "controllers"}, {Name: "nodes"}}
	phaseOf := map[PodKind]int{Controller: 0, Node: 1}
	for _, k := range HeadKinds {
		if p.spec.HeadSpec(k).Count > 0 {
			phaseOf[k] = len(phases)
			phases = append(phases, Phase{Name: PhaseName(k)})
		}
	}
	var decom Phase
	decom.Name = "decommission"
	ready := p.controllersReady()
	for _, pod := range p.ordered() {
		st := Step{Pod: pod.Name, TaskID: pod.TaskID, AgentID: pod.AgentID, State: pod.State}
		switch {
		case pod.Goal == GoalDecommission:
			st.Status = Starting
			decom.Steps = append(decom.Steps, st)
			continue
		case pod.State == TaskRunning && pod.Step != StepReady:
			st.Status = Complete
		case pod.live():
			st.Status = Starting
		default:
			st.Status = Pending
			switch {
			case pod.AgentLost:
				st.Waiting = "agent " + pod.AgentID + " lost"
			case pod.Kind != Controller && !ready:
				st.Waiting = "controllers"
			case p.paused && pod.Attempts == 0:
				st.Waiting = "paused"
			case p.waiting[pod.Name] != "":
				st.Waiting = p.waiting[pod.Name]
			}
		}
		i, ok := phaseOf[pod.Kind]
		if !ok {
			continue // only a damaged stored plan gets here
		}
		phases[i].Steps = append(phases[i].Steps, st)
	}
	if len(decom.Steps) > 0 {
		phases = append(phases, decom)
	}
	if up := p.updatePhase(); up != nil {
		phases = append(phases, *up)
	}
	for i := range phases {
		phases[i].Status = summarize(phases[i].Steps)
	}
	prog := Progress{Phases: phases, Paused: p.paused}
	var all []Step
	for _, ph := range phases {
		all = append(all, ph.Steps...)
	}
	prog.Status = summarize(all)
	return prog
}

// PhaseName is the progress phase of a kind of pod: "controllers",
// "nodes", "heads" (HDFS heads: the name predates the others),
// "nfs-heads", "s3-heads".
func PhaseName(k PodKind) string {
	if k == HDFSHead {
		return "heads"
	}
	return string(k) + "s"
}

func summarize(steps []Step) StepStatus {
	complete, pending := 0, 0
	for _, s := range steps {
		switch s.Status {
		case Complete:
			complete++
		case Pending:
			pending++
		}
	}
	switch {
	case complete == len(steps):
		return Complete
	case pending == len(steps):
		return Pending
	}
	return Starting
}
