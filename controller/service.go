package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/protocol"
)

// Errors of the Service. Every error a method returns for a reason of the
// request wraps one of these (the REST layer maps them to 404, 409, 409 and
// 400); anything else is the store's or a node's failure.
var (
	// ErrNotFound: the scope, stream, segment or transaction does not exist.
	ErrNotFound = errors.New("controller: not found")
	// ErrExists: the scope or stream already exists.
	ErrExists = errors.New("controller: already exists")
	// ErrInvalid: the request is malformed (a bad name, configuration, key
	// range, stream cut or lease).
	ErrInvalid = errors.New("controller: invalid request")
	// ErrConflict: the request is valid but the current state refuses it (a
	// scope that is not empty, a stream that is not sealed or is sealed, a
	// workflow already running, open transactions on a scale).
	ErrConflict = errors.New("controller: conflict with the current state")
	// ErrStepFailed wraps the error of Options.StepHook: the workflow
	// stopped before that step, as after a crash, and is left for Resume.
	ErrStepFailed = errors.New("controller: workflow stopped before a step")
	// ErrScalePending: CreateTxn on a stream whose automatic scale waits
	// for its open transactions to end, or that is scaling. It wraps
	// ErrConflict; retriable: new transactions are accepted again once the
	// scale has run (or was given up).
	ErrScalePending = fmt.Errorf("%w: a scale is pending", ErrConflict)
)

// Transaction lease defaults.
const (
	DefaultTxnLease         = 30 * time.Second
	DefaultMaxTxnLease      = 10 * time.Minute
	DefaultTxnSweepInterval = time.Second
)

// Options configures a Service. Zero values take the defaults.
type Options struct {
	// Clock returns the current time (time.Now if nil). Tests set it.
	Clock func() time.Time
	// Logger receives the workflows' progress (discarded if nil).
	Logger logrus.FieldLogger
	// StepHook, if set, is called before each step of every workflow
	// (workflow is "createStream", "scale", "seal", "truncate", "delete",
	// "commit" or "abort"; steps are listed in the package documentation).
	// An error stops the workflow there, as a crash would, and the call
	// returns it wrapped in ErrStepFailed; Resume completes the workflow.
	StepHook func(workflow, step string) error
	// TxnSweepInterval is how often the sweeper aborts transactions whose
	// lease expired (DefaultTxnSweepInterval if 0; negative: no sweeper).
	TxnSweepInterval time.Duration
	// MaxTxnLease bounds the lease of CreateTxn and PingTxn
	// (DefaultMaxTxnLease if 0).
	MaxTxnLease time.Duration
	// RetentionInterval is how often retention policies are applied
	// (DefaultRetentionInterval if 0; negative: never). Over a store that
	// elects leaders (ZooKeeper) the leader runs RetentionStep at this
	// pace; over any other the Service runs it itself, the first time one
	// interval after New. Tests call RetentionStep directly.
	RetentionInterval time.Duration
	// WatermarkInterval is how often every controller computes the
	// streams' watermarks from the writers' reports
	// (DefaultWatermarkInterval if 0; negative: never; tests call
	// WatermarkStep). Unlike retention it runs on every controller, not
	// only the leader: its writes are compare-and-sets.
	WatermarkInterval time.Duration
	// WriterTimeout is how long a writer may go without noting a time
	// before watermarks stop waiting for it (DefaultWriterTimeout if 0).
	WriterTimeout time.Duration
	// Tier2URI is the root of tier 2 (file:///abs/path or
	// hdfs://host:port/path), served by GET /v1/tier2; empty if unknown.
	Tier2URI string
	// AutoScale configures the auto-scaler (autoscale_driver.go).
	AutoScale AutoScaleOptions
}

// Service is the controller's core: scopes, streams, epochs, scaling,
// truncation and transactions, kept in a cluster.Store and acted out on
// the nodes through a SegmentStore. Its methods are safe for concurrent
// use, also by several Services (controllers) on one store: every change
// of a stream is a compare-and-set of its record.
type Service struct {
	store cluster.Store
	segs  SegmentStore
	opts  Options
	log   logrus.FieldLogger

	// ctx is cancelled by Close; the sweeper runs under it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// blocked: per stream (scope/stream), since when an automatic scale
	// has waited for its transactions to end (autoscale_driver.go).
	autoMu struct {
		sync.Mutex
		blocked map[string]time.Time
	}
}

// New returns a Service over store and segs and starts its transaction
// sweeper (and its retention loop, see Options.RetentionInterval). Close
// stops them; the Service closes neither store nor segs.
func New(store cluster.Store, segs SegmentStore, opts Options) *Service {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	opts.Logger = logs.OrDiscard(opts.Logger)
	if opts.TxnSweepInterval == 0 {
		opts.TxnSweepInterval = DefaultTxnSweepInterval
	}
	if opts.MaxTxnLease == 0 {
		opts.MaxTxnLease = DefaultMaxTxnLease
	}
	if opts.RetentionInterval == 0 {
		opts.RetentionInterval = DefaultRetentionInterval
	}
	if opts.WatermarkInterval == 0 {
		opts.WatermarkInterval = DefaultWatermarkInterval
	}
	if opts.WriterTimeout == 0 {
		opts.WriterTimeout = DefaultWriterTimeout
	}
	opts.AutoScale = opts.AutoScale.withDefaults()
	s := &Service{store: store, segs: segs, opts: opts, log: opts.Logger}
	s.autoMu.blocked = map[string]time.Time{}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if opts.TxnSweepInterval > 0 {
		s.wg.Add(1)
		go s.sweeper()
	}
	if _, elects := store.(leaderElector); opts.RetentionInterval > 0 && !elects {
		s.wg.Add(1)
		go s.retainer()
	}
	if opts.WatermarkInterval > 0 {
		s.wg.Add(1)
		go s.watermarker()
	}
	if _, elects := store.(leaderElector); opts.AutoScale.Interval > 0 && !elects {
		s.wg.Add(1)
		go s.autoScaler()
	}
	return s
}

// Close stops the sweeper, the retention and the watermark loops and waits for them. Workflows in flight in other
// goroutines are not interrupted; cancel their contexts.
func (s *Service) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

type internalKey struct{}

// WithInternal marks ctx as coming from Sluice itself, which may use the
// scope and stream names beginning with '_' that users may not.
func WithInternal(ctx context.Context) context.Context {
	return context.WithValue(ctx, internalKey{}, true)
}

func checkName(ctx context.Context, what, name string) error {
	if err := protocol.ValidateName(name); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, what, err)
	}
	if protocol.IsInternalName(name) && ctx.Value(internalKey{}) == nil {
		return fmt.Errorf("%w: %s %q: names beginning with '_' are reserved for internal use", ErrInvalid, what, name)
	}
	return nil
}

func (s *Service) nowMillis() int64 { return s.opts.Clock().UnixMilli() }

func (s *Service) step(workflow, step string) error {
	if s.opts.StepHook == nil {
		return nil
	}
	if err := s.opts.StepHook(workflow, step); err != nil {
		return fmt.Errorf("%w: %s before %q: %w", ErrStepFailed, workflow, step, err)
	}
	return nil
}

// Store keys (see doc.go).
func scopeKey(scope string) string           { return "scopes/" + scope }
func streamsKey(scope string) string         { return "scopes/" + scope + "/streams" }
func streamKey(scope, stream string) string  { return streamsKey(scope) + "/" + stream }
func txnsKey(scope, stream string) string    { return streamKey(scope, stream) + "/txns" }
func txnKey(scope, stream, id string) string { return txnsKey(scope, stream) + "/" + id }

// list returns the children of key that have a value (keys created only as
// parents have none); a missing key has no children.
func (s *Service) list(ctx context.Context, key string) ([]cluster.KV, error) {
	kvs, err := s.store.List(ctx, key)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := kvs[:0]
	for _, kv := range kvs {
		if len(kv.Value) > 0 {
			out = append(out, kv)
		}
	}
	return out, nil
}

// loadStream reads a stream's record.
func (s *Service) loadStream(ctx context.Context, scope, stream string) (*streamRec, cluster.Version, error) {
	kv, err := s.store.Get(ctx, streamKey(scope, stream))
	if errors.Is(err, cluster.ErrNotFound) || err == nil && len(kv.Value) == 0 {
		return nil, 0, fmt.Errorf("%w: stream %s/%s", ErrNotFound, scope, stream)
	}
	if err != nil {
		return nil, 0, err
	}
	var r streamRec
	if err := json.Unmarshal(kv.Value, &r); err != nil {
		return nil, 0, fmt.Errorf("controller: stream record %s: %w", kv.Key, err)
	}
	return &r, kv.Version, nil
}

// errNoChange, returned by an update function, ends update without a write.
var errNoChange = errors.New("no change")

// update applies fn to the stream's record and writes it with
// compare-and-set, retrying fn on a concurrent change. fn returns
// errNoChange to write nothing. It returns the record as written (or as
// read, for errNoChange).
func (s *Service) update(ctx context.Context, scope, stream string, fn func(r *streamRec) error) (*streamRec, error) {
	for {
		r, v, err := s.loadStream(ctx, scope, stream)
		if err != nil {
			return nil, err
		}
		if err := fn(r); err != nil {
			if errors.Is(err, errNoChange) {
				return r, nil
			}
			return nil, err
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		_, err = s.store.CompareAndSet(ctx, streamKey(scope, stream), b, v)
		if errors.Is(err, cluster.ErrVersionMismatch) {
			continue
		}
		if errors.Is(err, cluster.ErrNotFound) {
			return nil, fmt.Errorf("%w: stream %s/%s", ErrNotFound, scope, stream)
		}
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}
