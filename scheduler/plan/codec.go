package plan

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// snapshotVersion is the version of the serialized form Marshal
// writes. Version 2 added the service id (Spec.ServiceID, in every
// reservation and persistence id and the LabelService label) and the
// uninstall flag; a scheduler that reads version 1 only would make
// reservations without the label, which this one's operations on them
// would no longer match, so the version changed: a version 1 plan is
// migrated on read (migrateV1), a version 2 plan is refused by an older
// scheduler.
const snapshotVersion = 2

// oldestVersion is the oldest serialized form Unmarshal migrates.
const oldestVersion = 1

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
	Uninstall bool     `msgpack:"uninstall"` // since version 2
	Released  []orphan `msgpack:"released"`  // since version 2
}

// Marshal returns the plan's serialized form (msgpack, a map with the
// keys of the struct tags: "v" (version, 1), "spec", "pods" (in deploy
// order), "orphans", "seq", "rebalance"), to be stored in ZooKeeper.
// Fields are only ever added (decoded as zero from older plans), so the
// version stays 1; the spec's "heads" and "headResources" came later,
// "nfsHeads" and "s3Heads" later still.
func (p *Plan) Marshal() ([]byte, error) {
	s := snapshot{Version: snapshotVersion, Spec: p.spec, Pods: p.Pods(), Orphans: p.orphans, Seq: p.seq, Rebalance: p.rebalance, Paused: p.paused, Uninstall: p.uninstalling, Released: p.released}
	b, err := msgpack.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("plan: marshal: %w", err)
	}
	return b, nil
}

// Unmarshal rebuilds a plan from Marshal's output, of this version or
// an older one it migrates (oldestVersion on). A newer version is
// refused with ErrVersion: it was written by a newer scheduler, whose
// reservations this one could not handle. The driver calls Start on it
// once subscribed.
func Unmarshal(b []byte) (*Plan, error) {
	var s snapshot
	if err := msgpack.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	switch {
	case s.Version > snapshotVersion:
		return nil, fmt.Errorf("%w: the stored plan has format version %d, written by a newer release of the scheduler; "+
			"this one reads versions %d to %d. Run the newer release again (dcos package update --package-version to it): "+
			"a downgrade across a format change is not possible", ErrVersion, s.Version, oldestVersion, snapshotVersion)
	case s.Version < oldestVersion:
		return nil, fmt.Errorf("%w: the stored plan has format version %d; this scheduler reads versions %d to %d", ErrVersion, s.Version, oldestVersion, snapshotVersion)
	case s.Version == 1:
		migrateV1(&s)
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
	if s.Spec.ServiceID != "" && !ValidServiceID(s.Spec.ServiceID) {
		return nil, fmt.Errorf("%w: service id %q", ErrFormat, s.Spec.ServiceID)
	}
	p := &Plan{pods: map[string]*Pod{}, reconciling: map[string]TaskRef{}, orphans: s.Orphans, seq: s.Seq, rebalance: s.Rebalance, unsetHeads: map[PodKind]bool{}, uninstalling: s.Uninstall, released: s.Released, paused: s.Paused, waiting: map[string]string{}, resizeRefused: map[string]string{}}
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

// migrateV1 makes a version 1 snapshot a version 2 one. Version 1 has
// neither a service id nor the uninstall flag: the spec's ServiceID
// stays "" (the driver gives the plan one with SetServiceID; the
// reservations made before keep their "<pod>.r<n>" ids and no
// LabelService label, and are recognised by those ids) and the plan is
// not uninstalling. Everything else has the same keys and meaning.
func migrateV1(s *snapshot) {
	s.Version = 2
	s.Spec.ServiceID = ""
	s.Uninstall, s.Released = false, nil
}
