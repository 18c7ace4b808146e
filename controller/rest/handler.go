package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// MaxBodySize bounds a request body (1 MiB).
const MaxBodySize = 1 << 20

type handler struct {
	svc  *controller.Service
	loc  controller.SegmentLocator
	log  logrus.FieldLogger
	csrf *http.CrossOriginProtection
}

// HandlerOption configures NewHandler.
type HandlerOption func(*handler)

// WithLocator makes GET /v1/segments/{segment}/uri answer with loc (the
// controller's own locator: controller.StaticNode alone,
// controller.ClusterLocator in a cluster). Without it that route answers
// 503 UNAVAILABLE.
func WithLocator(loc controller.SegmentLocator) HandlerOption {
	return func(h *handler) { h.loc = loc }
}

// NewHandler returns the handler of the routes in the package
// documentation, over svc. Failures of the store or a node (500s) are
// logged to logger (discarded if nil); every request is logged at debug
// level.
func NewHandler(svc *controller.Service, logger logrus.FieldLogger, opts ...HandlerOption) http.Handler {
	h := &handler{svc: svc, log: logs.OrDiscard(logger), csrf: http.NewCrossOriginProtection()}
	for _, o := range opts {
		o(h)
	}
	mux := http.NewServeMux()
	allowed := map[string][]string{} // pattern -> methods
	for _, rt := range routes {
		mux.Handle(rt.Method+" "+rt.Pattern, h.wrap(rt))
		allowed[rt.Pattern] = append(allowed[rt.Pattern], rt.Method)
	}
	// A pattern without a method is less specific than the same one with
	// a method, so these catch only the methods a path does not serve.
	for pattern, methods := range allowed {
		mux.Handle(pattern, methodNotAllowed(h, methods))
	}
	mux.HandleFunc("/", h.notFound)
	return h.guard(mux)
}

// guard runs before the routes: it turns a panic into a JSON 500, answers
// paths that the mux would redirect (not clean, or not beginning with '/')
// with a JSON 404, and refuses cross-origin browser requests with unsafe
// methods (403): until the API has authentication, a web page open in a
// browser on the controller's machine must not be able to change streams.
func (h *handler) guard(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				h.log.WithFields(logrus.Fields{"method": r.Method, "path": r.URL.Path, "panic": v}).Error("rest: request panicked")
				h.writeError(w, r, http.StatusInternalServerError, api.CodeInternal, fmt.Sprintf("%s %q: internal error", r.Method, r.URL.Path))
			}
		}()
		if p := r.URL.EscapedPath(); !strings.HasPrefix(p, "/") || path.Clean(p) != p {
			h.notFound(w, r)
			return
		}
		if err := h.csrf.Check(r); err != nil {
			h.writeError(w, r, http.StatusForbidden, api.CodeForbidden, fmt.Sprintf(
				"%s %q from another origin (Origin %q, Sec-Fetch-Site %q): refused, the API serves changes only to same-origin and non-browser clients",
				r.Method, r.URL.Path, r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (h *handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.writeError(w, r, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no route for %s %q", r.Method, r.URL.Path))
}

func methodNotAllowed(h *handler, methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		h.writeError(w, r, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed,
			fmt.Sprintf("method %q not allowed on %q (allowed: %s)", r.Method, r.URL.Path, allow))
	})
}

// wrap turns a route's function into a handler: it checks the request's
// media type and path parameters, then writes the body as JSON with the
// status, or the error as an api.Error.
func (h *handler) wrap(rt route) http.Handler {
	params := wildcards(rt.Pattern)
	for _, name := range params {
		if paramChecks[name] == nil {
			panic(fmt.Sprintf("rest: route %s %s: no check for path parameter {%s} in paramChecks", rt.Method, rt.Pattern, name))
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var status int
		if err := checkMediaType(r); err != nil {
			status = http.StatusUnsupportedMediaType
			h.writeError(w, r, status, api.CodeUnsupportedMediaType, err.Error())
		} else if err := checkParams(r, params); err != nil {
			status = h.writeServiceError(w, r, err)
		} else {
			var body any
			status, body, err = rt.serve(h, r)
			if err != nil {
				status = h.writeServiceError(w, r, err)
			} else {
				writeJSON(w, status, body)
			}
		}
		h.log.WithFields(logrus.Fields{"method": r.Method, "path": r.URL.Path, "status": status, "took": time.Since(start)}).Debug("rest: request")
	})
}

// checkMediaType requires a request that changes something and carries a
// body, or names its type, to be application/json: browsers send
// text/plain and form types across origins without asking first.
func checkMediaType(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return fmt.Errorf("request body of type %q: want application/json", ct)
	}
	return nil
}

// wildcards returns the names of a pattern's {wildcards}.
func wildcards(pattern string) []string {
	var out []string
	for _, elem := range strings.Split(pattern, "/") {
		if name, ok := strings.CutPrefix(elem, "{"); ok {
			out = append(out, strings.TrimSuffix(name, "}"))
		}
	}
	return out
}

// paramChecks validate path parameters by wildcard name; wrap refuses a
// route with a wildcard that has none. The controller also checks names,
// with its reserved-name rule.
var paramChecks = map[string]func(string) error{
	"scope":   protocol.ValidateName,
	"stream":  protocol.ValidateName,
	"group":   protocol.ValidateName,
	"segment": protocol.ValidateSegmentName,
	"node":    api.ValidateNodeID,
	"id":      api.ValidateTxnID,
	"writer":  api.ValidateWriterID,
}

// checkParams validates r's path parameters (names).
func checkParams(r *http.Request, names []string) error {
	for _, name := range names {
		v := r.PathValue(name)
		if err := paramChecks[name](v); err != nil {
			return fmt.Errorf("%w: path parameter %s: %w", controller.ErrInvalid, name, err)
		}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	if body == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func (h *handler) writeError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	writeJSON(w, status, &api.Error{Code: code, Message: msg})
}

// writeServiceError maps err to a status and code (package documentation)
// and writes it; it returns the status.
func (h *handler) writeServiceError(w http.ResponseWriter, r *http.Request, err error) int {
	var status int
	var code, msg string
	switch {
	case errors.Is(err, protocol.ErrNotEventBoundary):
		status, code, msg = http.StatusBadRequest, api.CodeNotEventBoundary, clean(err)
	case errors.Is(err, controller.ErrInvalid):
		status, code, msg = http.StatusBadRequest, api.CodeInvalid, clean(err)
	case errors.Is(err, controller.ErrNotFound):
		status, code, msg = http.StatusNotFound, api.CodeNotFound, clean(err)+": not found"
	case errors.Is(err, controller.ErrExists):
		status, code, msg = http.StatusConflict, api.CodeExists, clean(err)+": already exists"
	case errors.Is(err, controller.ErrScalePending):
		status, code, msg = http.StatusConflict, api.CodeScalePending, clean(err)
	case errors.Is(err, controller.ErrConflict):
		status, code, msg = http.StatusConflict, api.CodeConflict, clean(err)
	case errors.Is(err, protocol.ErrContainerUnavailable):
		status, code, msg = http.StatusServiceUnavailable, api.CodeUnavailable, err.Error()
	default:
		status, code, msg = http.StatusInternalServerError, api.CodeInternal, err.Error()
		h.log.WithError(err).WithFields(logrus.Fields{"method": r.Method, "path": r.URL.Path}).Error("rest: request failed")
	}
	h.writeError(w, r, status, code, msg)
	return status
}

// sentinelPrefixes are the texts of the sentinel errors that wrap the
// Service's errors. They classify nothing (errors.Is does); clean drops
// them from messages, where the code already says the same.
var sentinelPrefixes = []string{
	controller.ErrScalePending.Error() + ": ", // before ErrConflict, which it begins with
	controller.ErrInvalid.Error() + ": ",
	controller.ErrNotFound.Error() + ": ",
	controller.ErrExists.Error() + ": ",
	controller.ErrConflict.Error() + ": ",
	api.ErrInvalid.Error() + ": ",
	protocol.ErrInvalidArgument.Error() + ": ",
}

// clean returns err's text without the sentinels' texts: "stream s/x"
// rather than "controller: not found: stream s/x".
func clean(err error) string {
	msg := err.Error()
	for _, p := range sentinelPrefixes {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return msg
}

// invalid returns an error the handler maps to 400.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{controller.ErrInvalid}, args...)...)
}

// decode reads r's body, one JSON value, into v, and checks it with v's
// Validate method if it has one (the ranges of api.Ranges). An empty body
// is an error unless optional (then v is left as it is, unchecked).
func decode(r *http.Request, v any, optional bool) error {
	// Read the body whole (it is small) so that errors can quote it.
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodySize))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return invalid("request body: larger than %d bytes", MaxBodySize)
	case err != nil:
		return invalid("request body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			if optional {
				return nil
			}
			return invalid("request body: empty, want a JSON object")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return invalid("request body: malformed JSON: it ends inside a value")
		case errors.As(err, &syntax):
			// The decoder read Offset bytes; the last is the bad one.
			// Quote the whole UTF-8 character there: the decoder's own
			// message shows one byte of it as a Latin-1 character.
			at := max(int(syntax.Offset)-1, 0)
			if at >= len(b) {
				return invalid("request body: malformed JSON at byte %d: %v", at, err)
			}
			_, size := utf8.DecodeRune(b[at:])
			return invalid("request body: malformed JSON at byte %d: character %q is not valid there", at, b[at:at+size])
		case errors.As(err, &typ):
			return invalid("request body: field %q: %s is not a %v", typ.Field, typ.Value, typ.Type)
		default:
			return invalid("request body: %v", strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalid("request body: more than one JSON value")
	}
	if v, ok := v.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("%w: request body: %w", controller.ErrInvalid, err)
		}
	}
	return nil
}

func (h *handler) health(*http.Request) (int, any, error) {
	return http.StatusOK, api.Health{Status: "ok"}, nil
}

// Scopes.

func (h *handler) createScope(r *http.Request) (int, any, error) {
	var p api.ScopeProperty
	if err := decode(r, &p, false); err != nil {
		return 0, nil, err
	}
	if err := h.svc.CreateScope(r.Context(), p.ScopeName); err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, p, nil
}

func (h *handler) listScopes(r *http.Request) (int, any, error) {
	scopes, err := h.svc.ListScopes(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.ScopeList{Scopes: nonNil(scopes)}, nil
}

func (h *handler) getScope(r *http.Request) (int, any, error) {
	p, err := h.svc.GetScope(r.Context(), r.PathValue("scope"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, p, nil
}

func (h *handler) deleteScope(r *http.Request) (int, any, error) {
	return http.StatusNoContent, nil, h.svc.DeleteScope(r.Context(), r.PathValue("scope"))
}

// Streams.

func (h *handler) createStream(r *http.Request) (int, any, error) {
	scope := r.PathValue("scope")
	var cfg api.StreamConfig
	if err := decode(r, &cfg, false); err != nil {
		return 0, nil, err
	}
	if cfg.ScopeName == "" {
		cfg.ScopeName = scope
	}
	if cfg.ScopeName != scope {
		return 0, nil, invalid("scopeName %q differs from the scope %q of the path", cfg.ScopeName, scope)
	}
	info, err := h.svc.CreateStream(r.Context(), cfg)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, info, nil
}

func (h *handler) listStreams(r *http.Request) (int, any, error) {
	var tags map[string]string
	for _, t := range r.URL.Query()["tag"] {
		k, v, _ := strings.Cut(t, "=")
		if k == "" {
			return 0, nil, invalid("query parameter tag=%q: want KEY=VALUE or KEY", t)
		}
		if len(k) > api.MaxTagLength || len(v) > api.MaxTagLength {
			return 0, nil, invalid("query parameter tag=%q: key and value are at most %d bytes each", t, api.MaxTagLength)
		}
		if tags == nil {
			tags = map[string]string{}
		}
		tags[k] = v
	}
	streams, err := h.svc.ListStreams(r.Context(), r.PathValue("scope"), tags)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.StreamList{Streams: nonNil(streams)}, nil
}

func (h *handler) getStream(r *http.Request) (int, any, error) {
	info, err := h.svc.GetStream(r.Context(), r.PathValue("scope"), r.PathValue("stream"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, info, nil
}

func (h *handler) updateStream(r *http.Request) (int, any, error) {
	var cfg api.StreamConfig
	if err := decode(r, &cfg, false); err != nil {
		return 0, nil, err
	}
	info, err := h.svc.UpdateStream(r.Context(), r.PathValue("scope"), r.PathValue("stream"), cfg)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, info, nil
}

func (h *handler) deleteStream(r *http.Request) (int, any, error) {
	return http.StatusNoContent, nil, h.svc.DeleteStream(r.Context(), r.PathValue("scope"), r.PathValue("stream"))
}

func (h *handler) setState(r *http.Request) (int, any, error) {
	var st api.StreamState
	if err := decode(r, &st, false); err != nil {
		return 0, nil, err
	}
	if st.State != api.StateSealed {
		return 0, nil, invalid("streamState %q: the only state a stream can be put in is %q", st.State, api.StateSealed)
	}
	if err := h.svc.SealStream(r.Context(), r.PathValue("scope"), r.PathValue("stream")); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, st, nil
}

func (h *handler) scale(r *http.Request) (int, any, error) {
	var req api.ScaleRequest
	if err := decode(r, &req, false); err != nil {
		return 0, nil, err
	}
	segs, err := h.svc.Scale(r.Context(), r.PathValue("scope"), r.PathValue("stream"), req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.SegmentList{Segments: nonNil(segs)}, nil
}

func (h *handler) truncate(r *http.Request) (int, any, error) {
	var cut api.StreamCut // decode validates it
	if err := decode(r, &cut, false); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, h.svc.TruncateStream(r.Context(), r.PathValue("scope"), r.PathValue("stream"), cut)
}

// Segments and cuts.

// segments serves the current segments, or with ?at=T (RFC 3339) the
// position of time T.
func (h *handler) segments(r *http.Request) (int, any, error) {
	scope, stream := r.PathValue("scope"), r.PathValue("stream")
	q := r.URL.Query()
	if !q.Has("at") {
		segs, err := h.svc.CurrentSegments(r.Context(), scope, stream)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, api.SegmentList{Segments: nonNil(segs)}, nil
	}
	at, err := time.Parse(time.RFC3339Nano, q.Get("at"))
	if err != nil {
		return 0, nil, invalid("query parameter at=%q: want an RFC 3339 time such as 2025-01-02T15:04:05Z", q.Get("at"))
	}
	l, err := h.svc.PositionAt(r.Context(), scope, stream, at)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, l, nil
}

func (h *handler) head(r *http.Request) (int, any, error) {
	cut, err := h.svc.HeadCut(r.Context(), r.PathValue("scope"), r.PathValue("stream"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, nonNilCut(cut), nil
}

// scalingEvents serves the stream's epochs, oldest first (Pravega's name
// for the route that lists a stream's scaling history).
func (h *handler) scalingEvents(r *http.Request) (int, any, error) {
	epochs, err := h.svc.Epochs(r.Context(), r.PathValue("scope"), r.PathValue("stream"))
	if err != nil {
		return 0, nil, err
	}
	pending, givenUp, err := h.svc.ScaleWaits(r.Context(), r.PathValue("scope"), r.PathValue("stream"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.EpochList{Epochs: nonNil(epochs), Pending: pending, GivenUp: givenUp}, nil
}

func (h *handler) segmentsBetween(r *http.Request) (int, any, error) {
	var cr api.CutRange // decode validates both cuts
	if err := decode(r, &cr, false); err != nil {
		return 0, nil, err
	}
	segs, err := h.svc.SegmentsBetween(r.Context(), r.PathValue("scope"), r.PathValue("stream"), cr.From, cr.To)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.SegmentList{Segments: nonNil(segs)}, nil
}

func (h *handler) segmentRange(r *http.Request) (int, any, error) {
	sr, err := h.svc.SegmentRangeOf(r.Context(), r.PathValue("segment"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, sr, nil
}

func (h *handler) successors(r *http.Request) (int, any, error) {
	succ, err := h.svc.Successors(r.Context(), r.PathValue("segment"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.SuccessorList{Successors: nonNil(succ)}, nil
}

// segmentURI serves where a segment is served now. It checks the name, not
// that the segment exists: a client asks before it creates or after it
// deleted one too, and the answer depends on the name alone.
func (h *handler) segmentURI(r *http.Request) (int, any, error) {
	segment := r.PathValue("segment")
	if err := protocol.ValidateSegmentName(segment); err != nil {
		return 0, nil, invalid("segment %q: %v", segment, err)
	}
	if h.loc == nil {
		return 0, nil, fmt.Errorf("%w: this controller was started without a segment locator", protocol.ErrContainerUnavailable)
	}
	loc, err := h.loc.Locate(r.Context(), segment)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.SegmentURI{Endpoint: loc.Endpoint, Container: loc.Container, Epoch: loc.Epoch}, nil
}

// Tier2 is the body of GET /v1/tier2.
type Tier2 struct {
	// URI is the root of tier 2: file:///abs/path or hdfs://host:port/path.
	URI string `json:"uri"`
}

// tier2 serves where tier 2 is (controller.Options.Tier2URI); 404 if the
// controller was not told.
func (h *handler) tier2(*http.Request) (int, any, error) {
	uri := h.svc.Tier2URI()
	if uri == "" {
		return http.StatusNotFound, &api.Error{Code: api.CodeNotFound, Message: "tier 2 is not configured on this controller"}, nil
	}
	return http.StatusOK, Tier2{URI: uri}, nil
}

// streamTier serves the tier-2 state of a stream's segments.
func (h *handler) streamTier(r *http.Request) (int, any, error) {
	st, err := h.svc.StreamTier(r.Context(), r.PathValue("scope"), r.PathValue("stream"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, st, nil
}

// nodeTiers serves each live node's tier-2 counters.
func (h *handler) nodeTiers(r *http.Request) (int, any, error) {
	lister, ok := h.loc.(controller.NodeLister)
	if !ok {
		return 0, nil, fmt.Errorf("%w: this controller was started without a node locator", protocol.ErrContainerUnavailable)
	}
	nodes, err := lister.Nodes(r.Context())
	if err != nil {
		return 0, nil, err
	}
	l, err := h.svc.NodeTiers(r.Context(), nodes)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, l, nil
}

// standaloneID is the id GET /v1/nodes gives a standalone controller's
// one node.
const standaloneID = "standalone"

// nodes serves the cluster's nodes; a standalone controller, whose store
// knows no nodes, lists its one node.
func (h *handler) nodes(r *http.Request) (int, any, error) {
	l, err := h.svc.Nodes(r.Context())
	if err != nil {
		return 0, nil, err
	}
	if sn, ok := h.loc.(controller.StaticNode); ok && len(l.Nodes) == 0 {
		all := make([]int, sn.Containers)
		for i := range all {
			all[i] = i
		}
		l.Nodes = append(l.Nodes, api.NodeStatus{ID: standaloneID, Addr: sn.Addr, Live: true, Containers: all, Moving: []int{}})
	}
	return http.StatusOK, l, nil
}

// drain starts or stops draining a node. The body must say which
// ({"drain": true} or false; {} or null is refused), and the node must be
// one the cluster knows (registered, assigned containers or draining), so
// a mistyped id is not stored as a drain that nothing ever ends.
func (h *handler) drain(r *http.Request) (int, any, error) {
	var req struct {
		Drain *bool `json:"drain"` // api.DrainRequest, with absent told apart
	}
	if err := decode(r, &req, false); err != nil {
		return 0, nil, err
	}
	if req.Drain == nil {
		return 0, nil, invalid("request body: drain: want true or false")
	}
	id := r.PathValue("node")
	l, err := h.svc.Nodes(r.Context())
	if err != nil {
		return 0, nil, err
	}
	if !slices.ContainsFunc(l.Nodes, func(n api.NodeStatus) bool { return n.ID == id }) {
		if _, ok := h.loc.(controller.StaticNode); ok && id == standaloneID && len(l.Nodes) == 0 {
			return 0, nil, fmt.Errorf("%w: node %q is this standalone controller's only node: there is no other node to move its containers to", controller.ErrConflict, id)
		}
		return 0, nil, fmt.Errorf("%w: node %q", controller.ErrNotFound, id)
	}
	if err := h.svc.SetDrain(r.Context(), id, *req.Drain); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// Transactions.

func decodeLease(r *http.Request) (time.Duration, error) {
	var req api.TxnRequest // decode checks api.RangeLease
	if err := decode(r, &req, true); err != nil {
		return 0, err
	}
	return time.Duration(req.LeaseMillis) * time.Millisecond, nil
}

func (h *handler) createTxn(r *http.Request) (int, any, error) {
	lease, err := decodeLease(r)
	if err != nil {
		return 0, nil, err
	}
	txn, err := h.svc.CreateTxn(r.Context(), r.PathValue("scope"), r.PathValue("stream"), lease)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, txn, nil
}

func (h *handler) getTxn(r *http.Request) (int, any, error) {
	txn, err := h.svc.GetTxn(r.Context(), r.PathValue("scope"), r.PathValue("stream"), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, txn, nil
}

func (h *handler) pingTxn(r *http.Request) (int, any, error) {
	lease, err := decodeLease(r)
	if err != nil {
		return 0, nil, err
	}
	txn, err := h.svc.PingTxn(r.Context(), r.PathValue("scope"), r.PathValue("stream"), r.PathValue("id"), lease)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, txn, nil
}

func (h *handler) commitTxn(r *http.Request) (int, any, error) {
	return http.StatusNoContent, nil, h.svc.CommitTxn(r.Context(), r.PathValue("scope"), r.PathValue("stream"), r.PathValue("id"))
}

func (h *handler) abortTxn(r *http.Request) (int, any, error) {
	return http.StatusNoContent, nil, h.svc.AbortTxn(r.Context(), r.PathValue("scope"), r.PathValue("stream"), r.PathValue("id"))
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilCut(c api.StreamCut) api.StreamCut {
	if c == nil {
		return api.StreamCut{}
	}
	return c
}
