package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// The scheduler's keys under Config.ZKRoot (see the package comment).
const (
	keyLeader      = "scheduler/leader"
	keyFrameworkID = "scheduler/framework-id"
	keyPlan        = "scheduler/plan"
	keyEndpoints   = "scheduler/endpoints"
)

// durable is one key the driver owns: its last written value and
// version, so that writes are skipped when nothing changed and fenced
// (compare-and-set) against any other writer.
type durable struct {
	key     string
	value   []byte
	version cluster.Version
	exists  bool
}

func (k *durable) load(ctx context.Context, st cluster.Store) error {
	kv, err := st.Get(ctx, k.key)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("scheduler: read %s: %w", k.key, err)
	}
	k.value, k.version, k.exists = kv.Value, kv.Version, true
	return nil
}

// store writes v unless it is what was last written. A version
// mismatch means another scheduler wrote: ErrLeadership.
func (k *durable) store(ctx context.Context, st cluster.Store, v []byte) error {
	if k.exists && bytes.Equal(v, k.value) {
		return nil
	}
	var (
		ver cluster.Version
		err error
	)
	if k.exists {
		ver, err = st.CompareAndSet(ctx, k.key, v, k.version)
	} else {
		ver, err = st.Create(ctx, k.key, v)
	}
	if errors.Is(err, cluster.ErrVersionMismatch) || errors.Is(err, cluster.ErrExists) {
		return fmt.Errorf("%w: %s was written by another scheduler: %v", ErrLeadership, k.key, err)
	}
	if err != nil {
		return fmt.Errorf("scheduler: write %s: %w", k.key, err)
	}
	k.value, k.version, k.exists = append([]byte(nil), v...), ver, true
	return nil
}

// forgetFrameworkID deletes the stored framework id (fenced like a
// write).
func (s *state) forgetFrameworkID(ctx context.Context, st cluster.Store) error {
	k := &s.frameworkID
	if !k.exists {
		return nil
	}
	err := st.Delete(ctx, k.key, k.version)
	if errors.Is(err, cluster.ErrVersionMismatch) {
		return fmt.Errorf("%w: %s was written by another scheduler: %v", ErrLeadership, k.key, err)
	}
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return fmt.Errorf("scheduler: delete %s: %w", k.key, err)
	}
	k.value, k.version, k.exists = nil, 0, false
	return nil
}

// state is the driver's durable state.
type state struct {
	frameworkID durable
	plan        durable
	endpoints   durable
}

func newState() *state {
	return &state{
		frameworkID: durable{key: keyFrameworkID},
		plan:        durable{key: keyPlan},
		endpoints:   durable{key: keyEndpoints},
	}
}

// load reads the stored state; the plan is nil if none is stored.
func (s *state) load(ctx context.Context, st cluster.Store) (fwID string, p *plan.Plan, eps map[string]Endpoint, err error) {
	for _, k := range []*durable{&s.frameworkID, &s.plan, &s.endpoints} {
		if err := k.load(ctx, st); err != nil {
			return "", nil, nil, err
		}
	}
	eps = map[string]Endpoint{}
	if s.plan.exists {
		if p, err = plan.Unmarshal(s.plan.value); err != nil {
			return "", nil, nil, fmt.Errorf("scheduler: stored plan: %w", err)
		}
	}
	if s.endpoints.exists {
		if err := json.Unmarshal(s.endpoints.value, &eps); err != nil {
			return "", nil, nil, fmt.Errorf("scheduler: stored endpoints: %w", err)
		}
	}
	return string(s.frameworkID.value), p, eps, nil
}

func (s *state) savePlan(ctx context.Context, st cluster.Store, p *plan.Plan) error {
	b, err := p.Marshal()
	if err != nil {
		return err
	}
	return s.plan.store(ctx, st, b)
}

func (s *state) saveEndpoints(ctx context.Context, st cluster.Store, eps map[string]Endpoint) error {
	b, err := json.Marshal(eps) // map keys sorted: equal maps, equal bytes
	if err != nil {
		return fmt.Errorf("scheduler: endpoints: %w", err)
	}
	return s.endpoints.store(ctx, st, b)
}
