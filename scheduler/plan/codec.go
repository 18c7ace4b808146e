package plan

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// snapshotVersion is the version of the serialized form.
const snapshotVersion = 1

// snapshot is the serialized plan: what must survive a scheduler
// failover. Offers and reconciliation progress are not in it: they die
// with the scheduler's connection, and Start reconciles again.
type snapshot struct {
	Version   int      `msgpack:"v"`
	Spec      Spec     `msgpack:"spec"`
	Pods      []Pod    `msgpack:"pods"`
	Orphans   []orphan `msgpack:"orphans"`
	Seq       int      `msgpack:"seq"`
	Rebalance []string `msgpack:"rebalance"`
	Paused    bool     `msgpack:"paused,omitempty"`
}

// Marshal returns the plan's serialized form (msgpack, a map with the
// keys of the struct tags: "v" (version, 1), "spec", "pods" (in deploy
// order), "orphans", "seq", "rebalance"), to be stored in ZooKeeper.
// Fields are only ever added (decoded as zero from older plans), so the
// version stays 1; the spec's "heads" and "headResources" came later,
// "nfsHeads" and "s3Heads" later still.
func (p *Plan) Marshal() ([]byte, error) {
	s := snapshot{Version: snapshotVersion, Spec: p.spec, Pods: p.Pods(), Orphans: p.orphans, Seq: p.seq, Rebalance: p.rebalance, Paused: p.paused}
	b, err := msgpack.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("plan: marshal: %w", err)
	}
	return b, nil
}

// Unmarshal rebuilds a plan from Marshal's output. The driver calls
// Start on it once subscribed.
func Unmarshal(b []byte) (*Plan, error) {
	var s snapshot
	if err := msgpack.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if s.Version != snapshotVersion {
		return nil, fmt.Errorf("%w: %d", ErrVersion, s.Version)
	}
	// A plan stored before a kind of head existed has no key for it in
	// its spec: additive fields keep version 1, and the driver fills
	// them in.
	var keys struct {
		Spec map[string]msgpack.RawMessage `msgpack:"spec"`
	}
	if err := msgpack.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	p := &Plan{pods: map[string]*Pod{}, reconciling: map[string]TaskRef{}, orphans: s.Orphans, seq: s.Seq, rebalance: s.Rebalance, paused: s.Paused, unsetHeads: map[PodKind]bool{}, waiting: map[string]string{}}
	for _, k := range HeadKinds {
		if _, ok := keys.Spec[headKey(k)]; !ok {
			p.unsetHeads[k] = true
		}
	}
	p.setSpec(s.Spec)
	for i := range s.Pods {
		pod := s.Pods[i]
		if pod.Name == "" || p.pods[pod.Name] != nil {
			return nil, fmt.Errorf("%w: pod %q missing or repeated", ErrFormat, pod.Name)
		}
		p.pods[pod.Name] = &pod
	}
	return p, nil
}
