package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluice-streams/sluice/internal/jsonhttp"
)

// Client calls the scheduler's HTTP API (`sluice cluster`). Every call
// blocks until answered or ctx ends; nothing is retried. An error answer
// is returned as ErrAPI with the status and the server's message.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the scheduler at base ("http://host:port");
// hc nil means http.DefaultClient.
func NewClient(base string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: scheduler URL %q: want http://HOST:PORT", ErrConfig, base)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(base, "/"), hc: hc}, nil
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	req, err := jsonhttp.NewRequest(ctx, method, c.base+path, in)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("scheduler: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("scheduler: %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e apiError
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return fmt.Errorf("%w: %s %s: %d: %s", ErrAPI, method, path, resp.StatusCode, e.Error)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("scheduler: %s %s: bad answer: %w", method, path, err)
		}
	}
	return nil
}

// Health is GET /v1/health; a scheduler not ready yet answers ErrAPI (503).
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.call(ctx, http.MethodGet, "/v1/health", nil, &h)
}

// Plan is GET /v1/plan.
func (c *Client) Plan(ctx context.Context) (PlanView, error) {
	var p PlanView
	return p, c.call(ctx, http.MethodGet, "/v1/plan", nil, &p)
}

// Pods is GET /v1/pods.
func (c *Client) Pods(ctx context.Context) ([]PodInfo, error) {
	var p []PodInfo
	return p, c.call(ctx, http.MethodGet, "/v1/pods", nil, &p)
}

// Endpoints is GET /v1/endpoints.
func (c *Client) Endpoints(ctx context.Context) (Endpoints, error) {
	var e Endpoints
	return e, c.call(ctx, http.MethodGet, "/v1/endpoints", nil, &e)
}

// SetCounts is PUT /v1/counts; it returns the progress right after the
// change (a lowering has only begun: watch Plan for the drain).
func (c *Client) SetCounts(ctx context.Context, req CountsRequest) (PlanView, error) {
	var p PlanView
	return p, c.call(ctx, http.MethodPut, "/v1/counts", req, &p)
}

// Restart is POST /v1/pods/{name}/restart.
func (c *Client) Restart(ctx context.Context, name string) (PodInfo, error) {
	var p PodInfo
	return p, c.call(ctx, http.MethodPost, "/v1/pods/"+url.PathEscape(name)+"/restart", nil, &p)
}

// Replace is POST /v1/pods/{name}/replace.
func (c *Client) Replace(ctx context.Context, name string) (PodInfo, error) {
	var p PodInfo
	return p, c.call(ctx, http.MethodPost, "/v1/pods/"+url.PathEscape(name)+"/replace", nil, &p)
}
