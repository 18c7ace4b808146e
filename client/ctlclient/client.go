package ctlclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sluice-streams/sluice/internal/jsonhttp"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Errors of Client, matched by errors.Is against an *Error of the same code.
var (
	ErrNotFound = errors.New("ctlclient: not found")
	ErrExists   = errors.New("ctlclient: already exists")
	ErrInvalid  = errors.New("ctlclient: invalid request")
	ErrConflict = errors.New("ctlclient: conflict with the current state")
	// ErrScalePending: a new transaction refused (409 SCALE_PENDING)
	// because the stream's automatic scale waits for its open
	// transactions to end; retriable. It is also ErrConflict.
	ErrScalePending = errors.New("ctlclient: the stream is waiting to scale")
	// ErrUnavailable: 503, a container the request needs is not served now
	// (its node is down, or no assignment names it); retry later.
	ErrUnavailable = errors.New("ctlclient: unavailable")
	// ErrUnreachable wraps a failure to reach the controller at all (no
	// answer: refused, timed out, not HTTP).
	ErrUnreachable = errors.New("ctlclient: controller unreachable")
)

// Error is a 4xx or 5xx reply: the HTTP status and the api.Error body.
// Error() is the controller's message alone ("stream s/x: not found").
type Error struct {
	StatusCode int
	Code       string
	Message    string
}

func (e *Error) Error() string { return e.Message }

// Is matches the package's sentinels by code, and
// protocol.ErrNotEventBoundary (a cut inside an event, which is also
// ErrInvalid); ErrScalePending is also ErrConflict.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Code == api.CodeNotFound
	case ErrExists:
		return e.Code == api.CodeExists
	case ErrInvalid:
		return e.Code == api.CodeInvalid || e.Code == api.CodeNotEventBoundary
	case protocol.ErrNotEventBoundary:
		return e.Code == api.CodeNotEventBoundary
	case ErrConflict:
		return e.Code == api.CodeConflict || e.Code == api.CodeScalePending
	case ErrScalePending:
		return e.Code == api.CodeScalePending
	case ErrUnavailable:
		return e.Code == api.CodeUnavailable
	}
	return false
}

// Client calls the controller's REST API. Its methods mirror the routes
// (controller/rest, docs/openapi.yaml) and the controller's Service; each
// blocks until the reply or ctx is done, and retries nothing. It is safe
// for concurrent use.
type Client struct {
	base    string
	hc      *http.Client
	timeout time.Duration // WithRequestTimeout; 0: none
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithHTTPClient makes the Client send its requests with hc (timeouts,
// TLS, a transport of the caller's) instead of a plain http.Client.
func WithHTTPClient(hc *http.Client) ClientOption { return func(c *Client) { c.hc = hc } }

// WithRequestTimeout bounds each request, from connecting to the last
// byte of the reply, to d (0, the default: only the caller's ctx bounds
// it). A controller that accepts connections but does not answer (stopped,
// wedged) then fails a call with ErrUnreachable after d ("no answer within
// d") rather than holding it until the caller's ctx ends: what a caller
// that retries unreachable controllers needs to notice it.
func WithRequestTimeout(d time.Duration) ClientOption {
	return func(c *Client) { c.timeout = d }
}

// NewClient returns a Client of the controller at baseURL
// ("http://127.0.0.1:10080"; a trailing '/' is ignored).
func NewClient(baseURL string, opts ...ClientOption) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), hc: &http.Client{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// BaseURL returns the controller URL the client was made with.
func (c *Client) BaseURL() string { return c.base }

// do sends a request with in (if not nil) as its JSON body and decodes the
// reply into out (if not nil). path is already escaped.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	rctx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := jsonhttp.NewRequest(rctx, method, c.base+path, in)
	if err != nil {
		return fmt.Errorf("controller %s: %w", c.base, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return c.noAnswer(ctx, rctx, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		if rctx.Err() != nil {
			return c.noAnswer(ctx, rctx, method, path, err)
		}
		return fmt.Errorf("controller %s: %s %s: reading the reply: %w", c.base, method, path, err)
	}
	if resp.StatusCode >= 400 {
		var e api.Error
		if json.Unmarshal(b, &e) != nil || e.Message == "" {
			return &Error{StatusCode: resp.StatusCode, Code: api.CodeInternal,
				Message: fmt.Sprintf("controller %s: %s %s: %s", c.base, method, path, resp.Status)}
		}
		return &Error{StatusCode: resp.StatusCode, Code: e.Code, Message: e.Message}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("controller %s: %s %s: bad reply: %w", c.base, method, path, err)
		}
	}
	return nil
}

// maxReply bounds the bytes of a reply read.
const maxReply = 64 << 20

// noAnswer is the error of a request that got no (whole) reply: the
// caller's ctx error if that ended, ErrUnreachable otherwise (refused,
// reset, or no answer within the request timeout).
func (c *Client) noAnswer(ctx, rctx context.Context, method, path string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("controller %s: %s %s: %w", c.base, method, path, ctx.Err())
	}
	if rctx.Err() != nil {
		err = fmt.Errorf("no answer to %s %s within %v", method, path, c.timeout)
	}
	return &unreachableError{base: c.base, err: err}
}

// unreachableError is a request that got no reply.
type unreachableError struct {
	base string
	err  error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("controller %s unreachable: %v", e.base, e.err)
}
func (e *unreachableError) Unwrap() error        { return e.err }
func (e *unreachableError) Is(target error) bool { return target == ErrUnreachable }

// segmentPath is the path element of a segment name (package
// documentation).
func segmentPath(segment string) string { return url.PathEscape(segment) }

func streamPath(scope, stream string) string {
	return "/v1/scopes/" + url.PathEscape(scope) + "/streams/" + url.PathEscape(stream)
}

func txnPath(scope, stream, id string) string {
	return streamPath(scope, stream) + "/transactions/" + url.PathEscape(id)
}

// Health returns nil if the controller answers GET /health.
func (c *Client) Health(ctx context.Context) error {
	var h api.Health
	return c.do(ctx, http.MethodGet, "/health", nil, &h)
}

// CreateScope creates a scope.
func (c *Client) CreateScope(ctx context.Context, scope string) error {
	return c.do(ctx, http.MethodPost, "/v1/scopes", api.ScopeProperty{ScopeName: scope}, nil)
}

// ListScopes returns every scope, sorted by name.
func (c *Client) ListScopes(ctx context.Context) ([]api.ScopeProperty, error) {
	var l api.ScopeList
	err := c.do(ctx, http.MethodGet, "/v1/scopes", nil, &l)
	return l.Scopes, err
}

// GetScope returns a scope.
func (c *Client) GetScope(ctx context.Context, scope string) (api.ScopeProperty, error) {
	var p api.ScopeProperty
	err := c.do(ctx, http.MethodGet, "/v1/scopes/"+url.PathEscape(scope), nil, &p)
	return p, err
}

// DeleteScope deletes an empty scope.
func (c *Client) DeleteScope(ctx context.Context, scope string) error {
	return c.do(ctx, http.MethodDelete, "/v1/scopes/"+url.PathEscape(scope), nil, nil)
}

// CreateStream creates the stream cfg names.
func (c *Client) CreateStream(ctx context.Context, cfg api.StreamConfig) (api.StreamInfo, error) {
	var info api.StreamInfo
	err := c.do(ctx, http.MethodPost, "/v1/scopes/"+url.PathEscape(cfg.ScopeName)+"/streams", cfg, &info)
	return info, err
}

// ListStreams returns a scope's streams that carry every tag of tags (a
// tag with the value "" matches any value).
func (c *Client) ListStreams(ctx context.Context, scope string, tags map[string]string) ([]api.StreamInfo, error) {
	q := url.Values{}
	for k, v := range tags {
		if v == "" {
			q.Add("tag", k)
		} else {
			q.Add("tag", k+"="+v)
		}
	}
	path := "/v1/scopes/" + url.PathEscape(scope) + "/streams"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var l api.StreamList
	err := c.do(ctx, http.MethodGet, path, nil, &l)
	return l.Streams, err
}

// GetStream returns a stream's configuration and state.
func (c *Client) GetStream(ctx context.Context, scope, stream string) (api.StreamInfo, error) {
	var info api.StreamInfo
	err := c.do(ctx, http.MethodGet, streamPath(scope, stream), nil, &info)
	return info, err
}

// UpdateStream replaces a stream's configuration.
func (c *Client) UpdateStream(ctx context.Context, scope, stream string, cfg api.StreamConfig) (api.StreamInfo, error) {
	var info api.StreamInfo
	err := c.do(ctx, http.MethodPut, streamPath(scope, stream), cfg, &info)
	return info, err
}

// SealStream seals a stream (sealing a sealed stream is success).
func (c *Client) SealStream(ctx context.Context, scope, stream string) error {
	return c.do(ctx, http.MethodPut, streamPath(scope, stream)+"/state", api.StreamState{State: api.StateSealed}, nil)
}

// DeleteStream deletes a sealed stream.
func (c *Client) DeleteStream(ctx context.Context, scope, stream string) error {
	return c.do(ctx, http.MethodDelete, streamPath(scope, stream), nil, nil)
}

// Scale seals req.SealedSegments and replaces them with req.NewRanges; it
// returns the new segments.
func (c *Client) Scale(ctx context.Context, scope, stream string, req api.ScaleRequest) ([]api.SegmentRange, error) {
	var l api.SegmentList
	err := c.do(ctx, http.MethodPost, streamPath(scope, stream)+"/scale", req, &l)
	return l.Segments, err
}

// TruncateStream truncates a stream at cut.
func (c *Client) TruncateStream(ctx context.Context, scope, stream string, cut api.StreamCut) error {
	return c.do(ctx, http.MethodPost, streamPath(scope, stream)+"/truncate", cut, nil)
}

// CurrentSegments returns a stream's active segments, ordered by key range.
func (c *Client) CurrentSegments(ctx context.Context, scope, stream string) ([]api.SegmentRange, error) {
	var l api.SegmentList
	err := c.do(ctx, http.MethodGet, streamPath(scope, stream)+"/segments", nil, &l)
	return l.Segments, err
}

// SegmentsAt returns the position of time t in a stream, and its segments
// ordered by key range.
func (c *Client) SegmentsAt(ctx context.Context, scope, stream string, t time.Time) (api.StreamCut, []api.SegmentRange, error) {
	var l api.SegmentList
	err := c.do(ctx, http.MethodGet, streamPath(scope, stream)+"/segments?at="+url.QueryEscape(t.Format(time.RFC3339Nano)), nil, &l)
	return l.Cut, l.Segments, err
}

// HeadCut returns where a reader from the beginning of a stream starts.
func (c *Client) HeadCut(ctx context.Context, scope, stream string) (api.StreamCut, error) {
	var cut api.StreamCut
	err := c.do(ctx, http.MethodGet, streamPath(scope, stream)+"/head", nil, &cut)
	return cut, err
}

// Epochs returns a stream's history (GET .../scaling-events): every epoch,
// oldest first, the last being the current one, each with its creation
// time and its segments ordered by key range.
func (c *Client) Epochs(ctx context.Context, scope, stream string) ([]api.EpochInfo, error) {
	var l api.EpochList
	err := c.do(ctx, http.MethodGet, streamPath(scope, stream)+"/scaling-events", nil, &l)
	return l.Epochs, err
}

// SegmentsBetween returns the segments between two cuts (empty from: the
// head; empty to: the end), in segment-number order.
func (c *Client) SegmentsBetween(ctx context.Context, scope, stream string, from, to api.StreamCut) ([]api.SegmentRange, error) {
	var l api.SegmentList
	err := c.do(ctx, http.MethodPost, streamPath(scope, stream)+"/segments-between", api.CutRange{From: from, To: to}, &l)
	return l.Segments, err
}

// SegmentRange returns a segment's key range, by qualified name.
func (c *Client) SegmentRange(ctx context.Context, segment string) (api.SegmentRange, error) {
	var sr api.SegmentRange
	err := c.do(ctx, http.MethodGet, "/v1/segments/"+segmentPath(segment), nil, &sr)
	return sr, err
}

// Successors returns the successors of a segment, each with the
// predecessors a reader finishes first.
func (c *Client) Successors(ctx context.Context, segment string) ([]api.Successor, error) {
	var l api.SuccessorList
	err := c.do(ctx, http.MethodGet, "/v1/segments/"+segmentPath(segment)+"/successors", nil, &l)
	return l.Successors, err
}

// SegmentURI returns the node that serves a segment now, with the
// segment's container and that container's epoch. ErrUnavailable if no live
// node serves the container. Clients cache it and ask again when the node
// answers WrongHost or ContainerUnavailable.
func (c *Client) SegmentURI(ctx context.Context, segment string) (api.SegmentURI, error) {
	var u api.SegmentURI
	err := c.do(ctx, http.MethodGet, "/v1/segments/"+segmentPath(segment)+"/uri", nil, &u)
	return u, err
}

// Tier2URI returns the root of tier 2 the controller was configured with
// (file:///abs/path or hdfs://host:port/path). ErrNotFound if it was not.
func (c *Client) Tier2URI(ctx context.Context) (string, error) {
	var body struct {
		URI string `json:"uri"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/tier2", nil, &body)
	return body.URI, err
}

// StreamTier returns the tier-2 state of a stream's segments.
func (c *Client) StreamTier(ctx context.Context, scope, stream string) (api.StreamTier, error) {
	var st api.StreamTier
	err := c.do(ctx, http.MethodGet, streamPath(scope, stream)+"/tier", nil, &st)
	return st, err
}

// NodeTiers returns every live node's tier-2 counters, per container.
func (c *Client) NodeTiers(ctx context.Context) (api.NodeTierList, error) {
	var l api.NodeTierList
	err := c.do(ctx, http.MethodGet, "/v1/nodes/tier", nil, &l)
	return l, err
}

// Nodes lists the cluster's nodes: live, draining, their containers.
func (c *Client) Nodes(ctx context.Context) ([]api.NodeStatus, error) {
	var l api.NodeList
	err := c.do(ctx, http.MethodGet, "/v1/nodes", nil, &l)
	return l.Nodes, err
}

// SetDrain asks the leader controller to move every container away from
// node id (drain true) or stops asking. The node is drained once Nodes
// shows it with no container.
func (c *Client) SetDrain(ctx context.Context, id string, drain bool) error {
	return c.do(ctx, http.MethodPut, "/v1/nodes/"+url.PathEscape(id)+"/drain", api.DrainRequest{Drain: drain}, nil)
}

// CreateTxn opens a transaction leased for lease (0: the controller's
// default), rounded down to milliseconds.
func (c *Client) CreateTxn(ctx context.Context, scope, stream string, lease time.Duration) (api.TxnInfo, error) {
	var t api.TxnInfo
	err := c.do(ctx, http.MethodPost, streamPath(scope, stream)+"/transactions", api.TxnRequest{LeaseMillis: lease.Milliseconds()}, &t)
	return t, err
}

// GetTxn returns a transaction's state.
func (c *Client) GetTxn(ctx context.Context, scope, stream, id string) (api.TxnInfo, error) {
	var t api.TxnInfo
	err := c.do(ctx, http.MethodGet, txnPath(scope, stream, id), nil, &t)
	return t, err
}

// PingTxn renews a transaction's lease to lease from now.
func (c *Client) PingTxn(ctx context.Context, scope, stream, id string, lease time.Duration) (api.TxnInfo, error) {
	var t api.TxnInfo
	err := c.do(ctx, http.MethodPost, txnPath(scope, stream, id)+"/ping", api.TxnRequest{LeaseMillis: lease.Milliseconds()}, &t)
	return t, err
}

// CommitTxn commits a transaction.
func (c *Client) CommitTxn(ctx context.Context, scope, stream, id string) error {
	return c.do(ctx, http.MethodPost, txnPath(scope, stream, id)+"/commit", nil, nil)
}

// AbortTxn aborts a transaction.
func (c *Client) AbortTxn(ctx context.Context, scope, stream, id string) error {
	return c.do(ctx, http.MethodDelete, txnPath(scope, stream, id), nil, nil)
}

// ScalingEvents returns the whole body of GET .../scaling-events: the
// epochs (as Epochs), the automatic scale pending on the stream's open
// transactions if any, and the newest pending scales given up.
func (c *Client) ScalingEvents(ctx context.Context, scope, stream string) (api.EpochList, error) {
	var l api.EpochList
	err := c.do(ctx, http.MethodGet, streamPath(scope, stream)+"/scaling-events", nil, &l)
	return l, err
}
