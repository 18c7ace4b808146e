package connserve

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/retry"
)

// testLogger writes the server's log to the test's.
func testLogger(t *testing.T) logrus.FieldLogger {
	l := logrus.New()
	l.SetLevel(logrus.DebugLevel)
	l.SetOutput(testWriter{t})
	return l
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// echo answers each byte with itself until the connection ends.
func echo(_ context.Context, c net.Conn) error {
	_, err := io.Copy(c, c)
	return err
}

// serve starts s on a new listener with h; the cleanup closes s, checks
// that Serve returned ErrClosed and that no goroutine of s is left.
func serve(t *testing.T, s *Server, h Handler) string {
	t.Helper()
	l := listen(t)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l, h) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve = %v, want ErrClosed", err)
		}
		noGoroutinesLeft(t)
	})
	return l.Addr().String()
}

// noGoroutinesLeft fails if a goroutine runs code of a Server. Close has
// waited for them all; one may still be between its last deferred call
// and its exit, so the check looks again until a generous deadline.
func noGoroutinesLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "connserve.(*Server)") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of the server are left after Close:\n%s", stacks)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// dial connects to addr and checks one echoed byte: once it is back, the
// server has accepted the connection and counts it.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := roundTrip(c); err != nil {
		t.Fatalf("echo: %v", err)
	}
	return c
}

func roundTrip(c net.Conn) error {
	if _, err := c.Write([]byte{42}); err != nil {
		return err
	}
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return err
	}
	if b[0] != 42 {
		return errors.New("wrong byte echoed")
	}
	return nil
}

// closedAtOnce checks that the server closed c without serving it.
func closedAtOnce(t *testing.T, c net.Conn) {
	t.Helper()
	c.Write([]byte{42}) // may fail: the server may have closed c already
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("read of a refused connection = %d, %v; want EOF or a reset", n, err)
	}
}

func TestServeTracksAndForgetsConnections(t *testing.T) {
	ended := make(chan error, 1)
	var s *Server
	s = New(Config{Name: "test", Logger: testLogger(t), ConnDone: func(c net.Conn, err error) {
		if n := s.Conns(); n != 0 {
			t.Errorf("ConnDone: Conns() = %d, want the connection forgotten", n)
		}
		if _, werr := c.Write([]byte{1}); !errors.Is(werr, net.ErrClosed) {
			t.Errorf("ConnDone: write = %v, want the connection closed", werr)
		}
		ended <- err
	}})
	addr := serve(t, s, echo)
	c := dial(t, addr)
	if n := s.Conns(); n != 1 {
		t.Fatalf("Conns() = %d with one client, want 1", n)
	}
	c.Close()
	if err := <-ended; err != nil {
		t.Fatalf("ConnDone heard %v, want echo's nil at EOF", err)
	}
	if n := s.Conns(); n != 0 {
		t.Fatalf("Conns() = %d after the client left, want 0", n)
	}
}

func TestMaxConns(t *testing.T) {
	ended := make(chan struct{}, 8)
	s := New(Config{Name: "test", MaxConns: 2, Logger: testLogger(t), ConnDone: func(net.Conn, error) { ended <- struct{}{} }})
	addr := serve(t, s, echo)
	first, second := dial(t, addr), dial(t, addr)
	for range 3 { // a burst: each refused
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		closedAtOnce(t, c)
	}
	if n := s.Conns(); n != 2 {
		t.Fatalf("Conns() = %d at MaxConns 2", n)
	}
	if len(ended) != 0 {
		t.Fatal("ConnDone heard of a refused connection")
	}
	first.Close()
	<-ended
	dial(t, addr) // the freed place
	if err := roundTrip(second); err != nil {
		t.Fatalf("the second connection after the refusals: %v", err)
	}
}

// script is a listener whose Accepts fail with its errors, in order, and
// then accept; a nil error accepts one connection in between.
type script struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (l *script) Accept() (net.Conn, error) {
	l.mu.Lock()
	var err error
	next := len(l.errs) > 0
	if next {
		err, l.errs = l.errs[0], l.errs[1:]
	}
	l.mu.Unlock()
	if next && err != nil {
		return nil, err
	}
	return l.Listener.Accept()
}

func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestTransientAcceptErrorsAreWaitedOut: every transient failure is
// followed by one wait of the backoff (5 ms doubling), a success resets
// it, and a permanent error ends Serve with that error.
func TestTransientAcceptErrorsAreWaitedOut(t *testing.T) {
	broken := errors.New("broken listener")
	l := &script{Listener: listen(t), errs: []error{
		acceptErr(syscall.EMFILE), acceptErr(syscall.ENFILE), timeoutErr{}, acceptErr(syscall.ENOBUFS),
		nil, // one client
		acceptErr(syscall.EMFILE), acceptErr(syscall.ENOMEM),
		nil, // another
		broken,
	}}
	s := New(Config{Name: "test", Logger: testLogger(t)})
	defer s.Close()
	var waits []time.Duration // written by Serve's goroutine, read after it returns
	s.sleep = func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l, echo) }()
	dial(t, l.Addr().String())
	dial(t, l.Addr().String())
	err := <-done
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "test: accept") {
		t.Fatalf("Serve = %v, want the permanent error, wrapped", err)
	}
	ms := time.Millisecond
	want := []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 5 * ms, 10 * ms}
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	if _, err := l.Listener.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the listener after Serve returned: %v, want it closed", err)
	}
	// Serve's return leaves its connections served; Close ends them.
	s.Close()
	noGoroutinesLeft(t)
}

// TestCloseEndsAcceptWait: a Serve waiting out accept failures returns
// ErrClosed when Close comes, without finishing its wait.
func TestCloseEndsAcceptWait(t *testing.T) {
	errs := make([]error, 100)
	for i := range errs {
		errs[i] = acceptErr(syscall.EMFILE)
	}
	l := &script{Listener: listen(t), errs: errs}
	s := New(Config{Name: "test", Logger: testLogger(t)})
	waiting := make(chan struct{}, 100)
	s.sleep = func(ctx context.Context, d time.Duration) error {
		waiting <- struct{}{}
		return retry.Sleep(ctx, time.Hour)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l, echo) }()
	<-waiting
	s.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Serve = %v, want ErrClosed", err)
	}
	if len(waiting) != 0 {
		t.Fatal("Serve waited again after Close")
	}
	noGoroutinesLeft(t)
}

// TestCloseWaitsForHandlers: Close cancels the handlers' context before
// it closes their connections, and returns only once every handler (one
// blocked reading, one waiting for its context and then working a while)
// has returned and ConnDone has run.
func TestCloseWaitsForHandlers(t *testing.T) {
	var returned, doneCalls atomic.Int32
	s := New(Config{Name: "test", Logger: testLogger(t), ConnDone: func(net.Conn, error) { doneCalls.Add(1) }})
	started := make(chan struct{}, 2)
	var ctxDoneFirst atomic.Bool
	ctxDoneFirst.Store(true)
	handler := func(ctx context.Context, c net.Conn) error {
		defer returned.Add(1)
		var b [1]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return err
		}
		started <- struct{}{}
		if b[0] == 'r' { // block reading until Close closes c
			_, err := c.Read(b[:])
			if ctx.Err() == nil {
				ctxDoneFirst.Store(false)
			}
			return err
		}
		<-ctx.Done() // ignore c, wait for the context, then work on
		for i := 0; i < 1000; i++ {
			runtime.Gosched()
		}
		return ctx.Err()
	}
	l := listen(t)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l, handler) }()
	for _, b := range []byte("rc") {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte{b}); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	<-started
	s.Close()
	if n, d := returned.Load(), doneCalls.Load(); n != 2 || d != 2 {
		t.Fatalf("after Close: %d handlers returned, ConnDone called %d times; want 2 and 2", n, d)
	}
	if !ctxDoneFirst.Load() {
		t.Error("a handler's connection was closed before its context was done")
	}
	if n := s.Conns(); n != 0 {
		t.Fatalf("Conns() = %d after Close", n)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Serve = %v, want ErrClosed", err)
	}
	noGoroutinesLeft(t)
}

func TestServeAfterCloseReturnsErrClosed(t *testing.T) {
	s := New(Config{Name: "test"})
	s.Close()
	l := listen(t)
	if err := s.Serve(l, echo); !errors.Is(err, ErrClosed) {
		t.Fatalf("Serve after Close = %v, want ErrClosed", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the listener given after Close: %v, want it closed", err)
	}
	if s.Context().Err() == nil {
		t.Fatal("the handlers' context is not done after Close")
	}
}

// TestCloseIsIdempotent: Close from several goroutines at once, and
// again, with two listeners and clients open.
func TestCloseIsIdempotent(t *testing.T) {
	s := New(Config{Name: "test", Logger: testLogger(t)})
	var serves sync.WaitGroup
	for range 2 {
		l := listen(t)
		serves.Add(1)
		go func() {
			defer serves.Done()
			if err := s.Serve(l, echo); !errors.Is(err, ErrClosed) {
				t.Errorf("Serve = %v, want ErrClosed", err)
			}
		}()
		dial(t, l.Addr().String())
	}
	if n := s.Conns(); n != 2 {
		t.Fatalf("Conns() = %d with a client on each listener, want 2", n)
	}
	var closes sync.WaitGroup
	for range 3 {
		closes.Add(1)
		go func() {
			defer closes.Done()
			s.Close()
			if n := s.Conns(); n != 0 {
				t.Errorf("Conns() = %d after Close", n)
			}
		}()
	}
	closes.Wait()
	s.Close()
	serves.Wait()
	noGoroutinesLeft(t)
}

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{acceptErr(syscall.EMFILE), true},
		{acceptErr(syscall.ENFILE), true},
		{acceptErr(syscall.ENOBUFS), true},
		{acceptErr(syscall.ENOMEM), true},
		{timeoutErr{}, true},
		{acceptErr(syscall.EINVAL), false},
		{net.ErrClosed, false},
		{errors.New("other"), false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
