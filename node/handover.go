package node

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/node/tiering"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
)

// Release hands container id over to its next owner through tier 2: it
// freezes the container (clients' changes get protocol.ErrWrongHost and
// find the container again through the controller), tiers every byte
// (the storage writer's Flush), writes the container's state to tier 2
// under tier2.HandoverPath(id, its epoch), and unhosts it. Repeating a
// release (after a crash, the container hosted again under the same
// epoch) writes the same state again.
func (n *Node) Release(ctx context.Context, id int) error {
	if n.cfg.Tier2 == nil {
		return fmt.Errorf("node: release container %d: no tier 2 to hand it over through", id)
	}
	c, ok := n.routes.Load().hosted[id]
	if !ok {
		return fmt.Errorf("node: release container %d: %w: not hosted", id, protocol.ErrWrongHost)
	}
	c.Freeze()
	w := n.TierWriter(id)
	if w == nil {
		return fmt.Errorf("node: release container %d: %w: closing", id, protocol.ErrContainerUnavailable)
	}
	if err := w.Flush(ctx); err != nil {
		return fmt.Errorf("node: release container %d: tier everything: %w", id, err)
	}
	blob, err := c.ExportHandover()
	if err != nil {
		return fmt.Errorf("node: release container %d: %w", id, err)
	}
	p := tier2.HandoverPath(id, c.Epoch())
	if err := tiering.WriteWhole(n.cfg.Tier2, p, blob); err != nil {
		return fmt.Errorf("node: release container %d: %w", id, err)
	}
	n.cfg.Logger.WithFields(logrus.Fields{"container": id, "epoch": c.Epoch(), "bytes": len(blob)}).Info("node: container handed over")
	return n.Unhost(id)
}

// readWhole reads a whole file from tier 2.
func readWhole(st tier2.Storage, p string) ([]byte, error) {
	f, err := st.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, f.Size())
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b, nil
}

// importContainer opens container id under epoch from the hand-over its
// previous owner left under fromEpoch, unless its directory already holds
// epoch (the import was done before a restart): then it opens it as it is;
// or unless the directory holds no state at all: then from the newest of
// that hand-over and the recovery records of later epochs
// (restoreContainer).
func (n *Node) importContainer(id int, epoch, fromEpoch int64) (*container.Container, error) {
	have, err := container.ReadEpoch(n.cfg.FS, n.ContainerDir(id))
	if err != nil {
		return nil, err
	}
	if have >= epoch {
		return n.openContainer(id, epoch)
	}
	if n.cfg.Tier2 == nil {
		return nil, fmt.Errorf("container %d: a hand-over needs tier 2, and this node has none", id)
	}
	// With no local state (this node took the container over, then lost
	// its disk), tier 2 may hold something newer than the hand-over: the
	// recovery records this node wrote under epoch. The newest wins.
	c, err := n.restoreContainer(id, epoch, fromEpoch)
	if err != nil {
		return nil, err
	}
	if c != nil {
		n.startTiering(c)
		return c, nil
	}
	blob, err := readWhole(n.cfg.Tier2, tier2.HandoverPath(id, fromEpoch))
	if err != nil {
		return nil, fmt.Errorf("container %d: read the hand-over of epoch %d: %w", id, fromEpoch, err)
	}
	c, err = container.ImportHandover(n.containerConfig(id, epoch), blob)
	if err != nil {
		return nil, err
	}
	n.startTiering(c)
	return c, nil
}
