package session

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/sessiontest"
)

const waitTimeout = 30 * time.Second

const regKey = "roles/r1"

// role is a minimal role: Join registers regKey, Follow records each
// session it follows and the cause its ctx ended with.
type role struct {
	mu        sync.Mutex
	joins     int
	causes    []error
	following chan cluster.Session // receives each session Follow starts on
}

func newRole() *role { return &role{following: make(chan cluster.Session, 16)} }

func (r *role) join(ctx context.Context, s cluster.Session) error {
	r.mu.Lock()
	r.joins++
	r.mu.Unlock()
	return s.Register(ctx, regKey, []byte("r1"))
}

func (r *role) follow(ctx context.Context, s cluster.Session) {
	r.following <- s
	<-ctx.Done()
	r.mu.Lock()
	r.causes = append(r.causes, context.Cause(ctx))
	r.mu.Unlock()
}

func (r *role) next(t *testing.T) cluster.Session {
	t.Helper()
	select {
	case s := <-r.following:
		return s
	case <-time.After(waitTimeout):
		t.Fatal("Follow not called")
		return nil
	}
}

// start starts a Keeper whose retry pauses go through pause (nil: real
// sleeps).
func start(t *testing.T, ctx context.Context, cfg Config, pause func(context.Context, time.Duration) bool) (*Keeper, error) {
	t.Helper()
	k, err := newKeeper(cfg)
	if err != nil {
		return nil, err
	}
	if pause != nil {
		k.pause = pause
	}
	if err := k.join(ctx, cfg.Session); err != nil {
		return nil, err
	}
	k.start()
	return k, nil
}

func wantGone(t *testing.T, s cluster.Session, key string) {
	t.Helper()
	if _, err := s.Get(t.Context(), key); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("Get %s = %v, want ErrNotFound", key, err)
	}
}

// TestRejoinsOnANewSessionAfterExpiry: on expiry Follow's ctx ends with
// ErrExpired, a new session is opened, the old one closed, the role
// joined again and followed on the new one; Close closes it.
func TestRejoinsOnANewSessionAfterExpiry(t *testing.T) {
	srv := sessiontest.NewServer(t)
	obs := srv.Open()
	defer obs.Close()
	first := srv.Open()
	opened := make(chan *sessiontest.Session, 4)
	r := newRole()
	k, err := Start(t.Context(), Config{
		Session: first,
		Open: func(context.Context) (cluster.Session, error) {
			s := srv.Open()
			opened <- s
			return s, nil
		},
		Join: r.join, Follow: r.follow,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.next(t); got != first {
		t.Fatal("Follow did not start on the first session")
	}
	first.Expire()
	second := r.next(t)
	if second != <-opened || k.Session() != second {
		t.Fatal("Follow and Session are not on the newly opened session")
	}
	if _, err := first.Get(t.Context(), regKey); !errors.Is(err, cluster.ErrClosed) {
		t.Fatalf("the expired session: Get = %v, want ErrClosed (closed)", err)
	}
	if kv, err := obs.Get(t.Context(), regKey); err != nil || string(kv.Value) != "r1" {
		t.Fatalf("registration on the new session: %q, %v", kv.Value, err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	wantGone(t, obs, regKey)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.causes) != 2 || !errors.Is(r.causes[0], ErrExpired) || !errors.Is(r.causes[1], ErrClosed) {
		t.Fatalf("Follow's ends: %v, want [%v %v]", r.causes, ErrExpired, ErrClosed)
	}
	if err := k.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestJoinWaitsForAnEarlierRegistration: Start retries while an earlier
// session's registration exists, and returns once it is gone.
func TestJoinWaitsForAnEarlierRegistration(t *testing.T) {
	srv := sessiontest.NewServer(t)
	old := srv.Open()
	if err := old.Register(t.Context(), regKey, []byte("old")); err != nil {
		t.Fatal(err)
	}
	s := srv.Open()
	r := newRole()
	started := make(chan error, 1)
	var k *Keeper
	go func() {
		var err error
		k, err = Start(t.Context(), Config{Session: s, Join: r.join, Follow: r.follow, MinRetry: time.Millisecond, MaxRetry: 5 * time.Millisecond})
		started <- err
	}()
	deadline := time.Now().Add(waitTimeout)
	for _, exists := s.Registers(); exists < 3; _, exists = s.Registers() {
		if time.Now().After(deadline) {
			t.Fatal("Start did not retry the registration")
		}
		time.Sleep(time.Millisecond) // polling a counter
	}
	select {
	case err := <-started:
		t.Fatalf("Start returned (%v) while the earlier registration exists", err)
	default:
	}
	old.Expire()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if kv, err := s.Get(t.Context(), regKey); err != nil || string(kv.Value) != "r1" {
		t.Fatalf("registration: %q, %v", kv.Value, err)
	}
}

// TestStartEndsWithItsContext: a Start waiting for an earlier
// registration returns as soon as its ctx ends, with both causes, and
// leaves its session open. The retry delay is an hour: only ctx can end
// the wait.
func TestStartEndsWithItsContext(t *testing.T) {
	srv := sessiontest.NewServer(t)
	old := srv.Open()
	defer old.Close()
	if err := old.Register(t.Context(), regKey, []byte("old")); err != nil {
		t.Fatal(err)
	}
	s := srv.Open()
	defer s.Close()
	r := newRole()
	ctx, cancel := context.WithCancel(t.Context())
	paused := make(chan struct{})
	_, err := start(t, ctx, Config{Session: s, Join: r.join, Follow: r.follow, MinRetry: time.Hour},
		func(ctx context.Context, d time.Duration) bool {
			close(paused)
			cancel()
			return sleep(ctx, d)
		})
	select {
	case <-paused:
	default:
		t.Fatalf("Start = %v without waiting to retry", err)
	}
	if !errors.Is(err, cluster.ErrExists) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Start = %v, want ErrExists and context.Canceled", err)
	}
	if _, err := s.Get(t.Context(), "roles"); err != nil {
		t.Fatalf("the session after a failed Start: %v (want it open)", err)
	}
}

// TestBackoffBetweenFailedOpensIsBounded: failed Opens are retried with
// delays that grow from MinRetry and never exceed MaxRetry plus the
// jitter; the role is then followed on the session that finally opened.
func TestBackoffBetweenFailedOpensIsBounded(t *testing.T) {
	const minRetry, maxRetry, failures = 10 * time.Millisecond, 80 * time.Millisecond, 12
	srv := sessiontest.NewServer(t)
	first := srv.Open()
	var (
		mu     sync.Mutex
		delays []time.Duration
		opens  int
	)
	errDown := errors.New("server down")
	r := newRole()
	k, err := start(t, t.Context(), Config{
		Session: first,
		Open: func(context.Context) (cluster.Session, error) {
			mu.Lock()
			defer mu.Unlock()
			if opens++; opens <= failures {
				return nil, errDown
			}
			return srv.Open(), nil
		},
		Join: r.join, Follow: r.follow, MinRetry: minRetry, MaxRetry: maxRetry,
	}, func(ctx context.Context, d time.Duration) bool {
		mu.Lock()
		delays = append(delays, d)
		mu.Unlock()
		return ctx.Err() == nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	r.next(t)
	first.Expire()
	if s := r.next(t); s == first {
		t.Fatal("followed the expired session again")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(delays) != failures {
		t.Fatalf("%d pauses for %d failed opens", len(delays), failures)
	}
	if delays[0] > 2*minRetry {
		t.Fatalf("first delay %v, want at most twice MinRetry %v", delays[0], minRetry)
	}
	for i, d := range delays {
		if d < minRetry || d > maxRetry {
			t.Fatalf("delay %d = %v, outside [MinRetry %v, MaxRetry %v]", i, d, minRetry, maxRetry)
		}
	}
	// From the fifth on (10ms doubled four times is past 80ms), the
	// backoff has reached MaxRetry: no delay falls back to half of it.
	for i, d := range delays[4:] {
		if d < maxRetry/2 {
			t.Fatalf("delay %d = %v: below half of MaxRetry after the backoff reached it", i+4, d)
		}
	}
}

// TestCloseDuringReopen: Close while Open waits for a server ends the
// Open (through its ctx), closes the lost session and returns.
func TestCloseDuringReopen(t *testing.T) {
	srv := sessiontest.NewServer(t)
	obs := srv.Open()
	defer obs.Close()
	first := srv.Open()
	r := newRole()
	opening := make(chan struct{})
	k, err := Start(t.Context(), Config{
		Session: first,
		Open: func(ctx context.Context) (cluster.Session, error) {
			close(opening)
			<-ctx.Done()
			return nil, ctx.Err()
		},
		Join: r.join, Follow: r.follow,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.next(t)
	first.Expire()
	<-opening
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Get(t.Context(), regKey); !errors.Is(err, cluster.ErrClosed) {
		t.Fatalf("the lost session after Close: Get = %v, want ErrClosed", err)
	}
	if k.Session() != first {
		t.Fatal("Session changed without a new one opened")
	}
}

// TestFollowReturningRejoins: a Follow that returns by itself (a
// candidacy ended) gets a new session; without Open, the role joins
// again on the same one.
func TestFollowReturningRejoins(t *testing.T) {
	srv := sessiontest.NewServer(t)
	s := srv.Open()
	var (
		mu      sync.Mutex
		follows int
	)
	again := make(chan struct{})
	k, err := Start(t.Context(), Config{
		Session: s,
		Join: func(ctx context.Context, s cluster.Session) error {
			_, err := s.Put(ctx, "joined", nil)
			return err
		},
		Follow: func(ctx context.Context, _ cluster.Session) {
			mu.Lock()
			follows++
			n := follows
			mu.Unlock()
			if n == 2 {
				close(again)
			}
			if n == 1 {
				return // ended by itself
			}
			<-ctx.Done()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	<-again
	if k.Session() != s {
		t.Fatal("without Open the Keeper must stay on its session")
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "joined"); !errors.Is(err, cluster.ErrClosed) {
		t.Fatalf("session after Close: %v", err)
	}
}

func TestConfigIsChecked(t *testing.T) {
	if _, err := Start(t.Context(), Config{}); !errors.Is(err, ErrConfig) {
		t.Fatalf("Start with an empty Config = %v, want ErrConfig", err)
	}
}
