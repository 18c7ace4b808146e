package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/retry"
)

// Causes of the end of Follow's context (context.Cause), and errors of
// Start.
var (
	// ErrExpired: the session expired; a new one is opened next.
	ErrExpired = errors.New("session: expired")
	// ErrClosed: the Keeper is closing.
	ErrClosed = errors.New("session: keeper closed")
	// ErrConfig: Start was given an incomplete Config.
	ErrConfig = errors.New("session: invalid config")
)

// Defaults of Config.
const (
	DefaultMinRetry = 50 * time.Millisecond
	DefaultMaxRetry = 2 * time.Second
)

// Config configures a Keeper.
type Config struct {
	// Session is the session to start with. The Keeper owns it once
	// Start succeeded (and every session Open returns): Close closes it.
	// If Start fails, it is left open for the caller to close.
	Session cluster.Session
	// Open opens a new session after the current one was lost. If nil,
	// the role joins again on the same session, and no later expiry is
	// noticed.
	Open func(ctx context.Context) (cluster.Session, error)
	// Join sets the role up on s: registration, candidacy, watches. An
	// error that wraps cluster.ErrExists (an earlier session's
	// registration is still there) is retried on s with backoff; another
	// error fails Start, or later gives s up for a new session. ctx
	// bounds the call.
	Join func(ctx context.Context, s cluster.Session) error
	// Follow acts for the role on s until ctx ends (context.Cause:
	// ErrExpired or ErrClosed), and must stop acting on s before it
	// returns. If it returns by itself, s is treated as lost.
	Follow func(ctx context.Context, s cluster.Session)
	// MinRetry (DefaultMinRetry if 0) and MaxRetry (DefaultMaxRetry if 0)
	// bound the exponential backoff between retries: every delay is
	// jittered and stays within them (retry.NewJittered).
	MinRetry, MaxRetry time.Duration
	// Logger; discarded if nil.
	Logger logrus.FieldLogger
}

// Keeper keeps a role joined on a session, reopening it after expiry.
type Keeper struct {
	cfg    Config
	log    logrus.FieldLogger
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when run has returned

	// pause waits d or until ctx ends (false then); tests replace it
	// before the loop starts.
	pause func(ctx context.Context, d time.Duration) bool

	mu struct {
		sync.Mutex
		cur      cluster.Session
		closeErr error
	}
}

// Start joins the role on cfg.Session (retrying while an earlier
// session's registration exists) and then keeps it joined until Close.
// ctx bounds Start only.
func Start(ctx context.Context, cfg Config) (*Keeper, error) {
	k, err := newKeeper(cfg)
	if err != nil {
		return nil, err
	}
	if err := k.join(ctx, cfg.Session); err != nil {
		return nil, err
	}
	k.start()
	return k, nil
}

func newKeeper(cfg Config) (*Keeper, error) {
	if cfg.Session == nil || cfg.Join == nil || cfg.Follow == nil {
		return nil, fmt.Errorf("%w: Config needs Session, Join and Follow", ErrConfig)
	}
	if cfg.MinRetry <= 0 {
		cfg.MinRetry = DefaultMinRetry
	}
	if cfg.MaxRetry <= 0 {
		cfg.MaxRetry = DefaultMaxRetry
	}
	cfg.MaxRetry = max(cfg.MaxRetry, cfg.MinRetry)
	k := &Keeper{cfg: cfg, log: logs.OrDiscard(cfg.Logger), done: make(chan struct{}), pause: sleep}
	k.mu.cur = cfg.Session
	return k, nil
}

// start runs the loop on the joined first session.
func (k *Keeper) start() {
	ctx, cancel := context.WithCancelCause(context.Background())
	k.cancel = cancel
	go k.run(ctx, k.cfg.Session)
}

// Session returns the current session.
func (k *Keeper) Session() cluster.Session {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.mu.cur
}

// Close ends Follow (or a pending Open or Join), waits for it, and
// closes the current session; it returns that Close's error. A second
// Close returns the same.
func (k *Keeper) Close() error {
	k.cancel(ErrClosed)
	<-k.done
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.mu.closeErr
}

// newBackoff returns the retry delays of one series of attempts: from
// MinRetry doubling towards MaxRetry, jittered, never outside them.
func (k *Keeper) newBackoff() *backoff.ExponentialBackOff {
	return retry.NewJittered(k.cfg.MinRetry, k.cfg.MaxRetry)
}

// join runs Join on s, retrying while it fails with cluster.ErrExists.
func (k *Keeper) join(ctx context.Context, s cluster.Session) error {
	b := k.newBackoff()
	for attempt := 0; ; attempt++ {
		err := k.cfg.Join(ctx, s)
		if err == nil || !errors.Is(err, cluster.ErrExists) {
			return err
		}
		if attempt == 0 {
			k.log.WithError(err).Warn("session: a registration of an earlier session is still there; retrying until that session expires")
		}
		if !k.pause(ctx, b.NextBackOff()) {
			return fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		}
	}
}

// run follows one session after another until ctx ends, then closes the
// current session.
func (k *Keeper) run(ctx context.Context, s cluster.Session) {
	defer close(k.done)
	expired := s.Expired()
	for {
		k.follow(ctx, s, expired)
		if ctx.Err() != nil {
			k.closeSession(s)
			return
		}
		k.log.Warn("session: lost; joining again on a new session")
		var ok bool
		if s, expired, ok = k.rejoin(ctx, s); !ok {
			k.closeSession(s)
			return
		}
	}
}

// follow runs Follow on s under a context that ends with ctx or when
// expired is closed, and returns when Follow has.
func (k *Keeper) follow(ctx context.Context, s cluster.Session, expired <-chan struct{}) {
	fctx, stop := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-expired:
			stop(ErrExpired)
		case <-fctx.Done():
		}
	}()
	k.cfg.Follow(fctx, s)
	stop(nil)
	<-watched
}

// rejoin opens a new session (keeps s without Open) and joins on it,
// retrying with backoff until it succeeds or ctx ends. It returns the
// session to follow and its expiry, or false with the session to close.
func (k *Keeper) rejoin(ctx context.Context, s cluster.Session) (cluster.Session, <-chan struct{}, bool) {
	b := k.newBackoff()
	for {
		var expired <-chan struct{} // without Open, no later expiry is noticed
		if k.cfg.Open != nil {
			next, err := k.cfg.Open(ctx)
			if err != nil {
				k.log.WithError(err).Error("session: cannot open a new session; retrying")
				if !k.pause(ctx, b.NextBackOff()) {
					return s, nil, false
				}
				continue
			}
			k.mu.Lock()
			k.mu.cur = next
			k.mu.Unlock()
			if err := s.Close(); err != nil {
				k.log.WithError(err).Debug("session: closing the lost session")
			}
			s, expired = next, next.Expired()
		}
		err := k.join(ctx, s)
		if err == nil {
			return s, expired, true
		}
		if ctx.Err() != nil {
			return s, nil, false
		}
		k.log.WithError(err).Error("session: joining again failed; retrying")
		if !k.pause(ctx, b.NextBackOff()) {
			return s, nil, false
		}
	}
}

func (k *Keeper) closeSession(s cluster.Session) {
	err := s.Close()
	k.mu.Lock()
	k.mu.closeErr = err
	k.mu.Unlock()
}

// sleep waits d or until ctx ends; false if ctx ended.
func sleep(ctx context.Context, d time.Duration) bool { return retry.Sleep(ctx, d) == nil }
