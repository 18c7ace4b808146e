package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// errControllerNotFound is wrapped (with ErrController) by a controller's
// 404.
var errControllerNotFound = errors.New("not found")

// ControllerNode is one node in the controller's GET /v1/nodes.
type ControllerNode struct {
	ID         string `json:"id"`
	Addr       string `json:"addr"`
	Live       bool   `json:"live"`
	Draining   bool   `json:"draining"`
	Containers []int  `json:"containers"`
	Moving     []int  `json:"moving"` // containers being handed over from it
}

// Drained reports whether the node's containers are all handed over.
func (n ControllerNode) Drained() bool {
	return n.Live && n.Draining && len(n.Containers) == 0 && len(n.Moving) == 0
}

// controllerURLs returns the REST URLs of the running controllers.
func (d *Driver) controllerURLs() []string {
	var out []string
	for _, pod := range d.p.Pods() {
		ep, ok := d.eps[pod.Name]
		if pod.Kind != plan.Controller || pod.State != plan.TaskRunning || !ok || ep.TaskID != pod.TaskID || ep.Port == 0 {
			continue
		}
		out = append(out, "http://"+ep.Addr())
	}
	return out
}

// startDrain starts the watcher that drains pod through the controllers
// (once per pod; it survives re-subscriptions, and a restarted
// scheduler starts it again for pods the stored plan has draining).
func (d *Driver) startDrain(ctx context.Context, pod string) {
	if d.drains[pod] {
		return
	}
	d.drains[pod] = true
	d.log.WithField("pod", pod).Info("scheduler: draining node")
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.watchDrain(ctx, pod)
	}()
}

// watchDrain asks a controller to drain the node, then polls GET
// /v1/nodes until the node is drained, and reports it on d.drained.
func (d *Driver) watchDrain(ctx context.Context, pod string) {
	t := time.NewTicker(d.cfg.DrainPoll)
	defer t.Stop()
	requested := false
	for {
		var urls []string
		if err := d.do(ctx, func() { urls = d.controllerURLs() }); err != nil {
			return
		}
		for _, base := range urls {
			if !requested {
				if err := d.requestDrain(ctx, base, pod); err != nil {
					d.log.WithError(err).WithField("pod", pod).Warn("scheduler: drain request")
					continue
				}
				requested = true
			}
			nodes, err := d.listNodes(ctx, base)
			if err != nil {
				d.log.WithError(err).WithField("pod", pod).Warn("scheduler: drain progress")
				continue
			}
			if drained(nodes, pod) {
				select {
				case d.drained <- pod:
				case <-ctx.Done():
				}
				return
			}
			break
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// drained: the node holds no container (or the controller does not know it).
func drained(nodes []ControllerNode, id string) bool {
	for _, n := range nodes {
		if n.ID == id {
			return n.Drained()
		}
	}
	return true
}

func (d *Driver) requestDrain(ctx context.Context, base, id string) error {
	body, _ := json.Marshal(map[string]bool{"drain": true})
	err := d.controllerCall(ctx, http.MethodPut, base+"/v1/nodes/"+url.PathEscape(id)+"/drain", body, nil)
	if errors.Is(err, errControllerNotFound) {
		// The controller knows no such node (it never registered):
		// nothing to drain, and GET /v1/nodes will not list it, which
		// counts as drained.
		return nil
	}
	return err
}

func (d *Driver) listNodes(ctx context.Context, base string) ([]ControllerNode, error) {
	var out struct {
		Nodes []ControllerNode `json:"nodes"`
	}
	err := d.controllerCall(ctx, http.MethodGet, base+"/v1/nodes", nil, &out)
	return out.Nodes, err
}

func (d *Driver) controllerCall(ctx context.Context, method, u string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrController, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrController, method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w: %s %s: %s", ErrController, errControllerNotFound, method, u, bytes.TrimSpace(b))
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%w: %s %s: %s: %s", ErrController, method, u, resp.Status, bytes.TrimSpace(b))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%w: %s %s: %v", ErrController, method, u, err)
		}
	}
	return nil
}
