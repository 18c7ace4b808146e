package node

import (
	"errors"
	"fmt"
	"math"
	"path"
	"sort"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/tier2"
)

// tier2State is a file in tier 2 a container can be rebuilt from: a
// recovery record (written as tiering goes on) or a hand-over blob
// (written by a release). A hand-over under epoch E is the last state of
// E: it orders after every record of E and before those of E+1.
type tier2State struct {
	path     string
	epoch    int64
	seq      uint64
	handover bool
}

func (a tier2State) before(b tier2State) bool {
	if a.epoch != b.epoch {
		return a.epoch < b.epoch
	}
	return a.seq < b.seq
}

// restoreContainer rebuilds container id from tier 2 when its directory
// holds no state of its own (container.HasLocalState: the node's disk
// was lost, or it never had the container) and tier 2 holds a recovery
// record or hand-over for it: the newest, by (epoch, sequence). It
// returns nil, and changes nothing, when the node has no tier 2, the
// directory has state (its log is newer than any record: it is never
// replaced), or tier 2 holds nothing for the container (it never had
// anything: it opens empty). A failure to look (tier 2 down) is an
// error, not an empty container, so that a container is never opened
// empty over a record it could not read; so is a damaged newest record
// (container.ErrBadRecovery or container.ErrBadHandover, naming it) and
// one from a later epoch (container.ErrStaleEpoch). With from >= 0 (a
// hand-over from that epoch is to be imported), only a state at least as
// new as that hand-over is taken; else nil, and the caller imports the
// hand-over itself (and fails if it is missing) rather than an older
// state.
func (n *Node) restoreContainer(id int, epoch, from int64) (*container.Container, error) {
	if n.cfg.Tier2 == nil {
		return nil, nil
	}
	has, err := container.HasLocalState(n.cfg.FS, n.ContainerDir(id))
	if err != nil || has {
		return nil, err
	}
	newest, found, err := n.newestTier2State(id)
	if err != nil || !found {
		return nil, err
	}
	if from >= 0 && (newest.epoch < from || (newest.epoch == from && !newest.handover)) {
		return nil, nil
	}
	if newest.epoch > epoch {
		return nil, fmt.Errorf("container %d: %w: tier 2 holds %s of epoch %d, the assignment gives %d; a newer owner holds it",
			id, container.ErrStaleEpoch, newest.path, newest.epoch, epoch)
	}
	blob, err := readWhole(n.cfg.Tier2, newest.path)
	if err != nil {
		return nil, fmt.Errorf("container %d: no local state; read %s from tier 2: %w", id, newest.path, err)
	}
	cfg := n.containerConfig(id, epoch)
	var c *container.Container
	if newest.handover {
		c, err = container.ImportHandover(cfg, blob)
	} else {
		c, err = container.ImportRecovery(cfg, blob)
	}
	if err != nil {
		return nil, fmt.Errorf("no local state; restoring from tier 2's %s: %w", newest.path, err)
	}
	n.cfg.Logger.WithFields(logrus.Fields{"container": id, "epoch": epoch, "from": newest.path}).
		Warn("node: container had no local state; restored it from tier 2 (events not yet in tier 2 when its disk was lost are gone)")
	return c, nil
}

// newestTier2State finds the newest recovery record or hand-over of
// container id in tier 2.
func (n *Node) newestTier2State(id int) (tier2State, bool, error) {
	var all []tier2State
	dir := tier2.RecoveryDir(id)
	ents, err := n.cfg.Tier2.List(dir)
	if err != nil && !errors.Is(err, tier2.ErrNotExist) {
		return tier2State{}, false, fmt.Errorf("container %d: no local state; list %s in tier 2: %w", id, dir, err)
	}
	for _, e := range ents {
		if ep, seq, ok := tier2.ParseRecoveryName(e.Name); ok {
			all = append(all, tier2State{path: path.Join(dir, e.Name), epoch: ep, seq: seq})
		}
	}
	dir = tier2.HandoverDir(id)
	ents, err = n.cfg.Tier2.List(dir)
	if err != nil && !errors.Is(err, tier2.ErrNotExist) {
		return tier2State{}, false, fmt.Errorf("container %d: no local state; list %s in tier 2: %w", id, dir, err)
	}
	for _, e := range ents {
		if ep, ok := tier2.ParseHandoverName(e.Name); ok {
			all = append(all, tier2State{path: path.Join(dir, e.Name), epoch: ep, seq: math.MaxUint64, handover: true})
		}
	}
	if len(all) == 0 {
		return tier2State{}, false, nil
	}
	sort.Slice(all, func(i, j int) bool { return all[i].before(all[j]) })
	return all[len(all)-1], true, nil
}
