package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/view"
)

// What every head (HDFS, NFS, S3) shares: the read-only view of tier 2 it
// serves, and the group of servers that serve it.

// headCatalogTimeout bounds a head's call for the controller's names.
const headCatalogTimeout = 10 * time.Second

// openView opens the tier 2 a head serves (uri, or the controller's if
// empty, asked until it answers or ctx ends) and the view over it whose
// names come from the controller. The caller closes the storage.
func openView(ctx context.Context, head, controller, uri string, ttl time.Duration, log logrus.FieldLogger) (tier2.Storage, *view.View, string, error) {
	// A stalled controller holds up only the requests that need its
	// names, and each for this long at most (tier2/view).
	ctl := ctlclient.NewClient(controller, ctlclient.WithRequestTimeout(headCatalogTimeout))
	if uri == "" {
		var err error
		if uri, err = tier2URI(ctx, head, ctl, log); err != nil {
			return nil, nil, "", err
		}
	}
	st, err := backend.Open(uri)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: tier 2 %s: %w", head, uri, err)
	}
	return st, view.New(st, view.CatalogOf(ctl), view.Options{CatalogTTL: ttl}), uri, nil
}

// tier2URI asks the controller for its tier-2 URI until it answers.
func tier2URI(ctx context.Context, head string, ctl *ctlclient.Client, log logrus.FieldLogger) (string, error) {
	waits := retry.NewBackoff(100*time.Millisecond, 5*time.Second)
	for {
		uri, err := ctl.Tier2URI(ctx)
		switch {
		case err == nil && uri != "":
			return uri, nil
		case err == nil || errors.Is(err, ctlclient.ErrNotFound):
			return "", fmt.Errorf("%s: the controller at %s has no tier 2: there is nothing to serve", head, ctl.BaseURL())
		}
		log.WithError(err).Warnf("%s: waiting for the controller's tier-2 URI", head)
		if retry.Sleep(ctx, waits.NextBackOff()) != nil {
			return "", fmt.Errorf("%s: the controller's tier-2 URI: %w (%w)", head, err, ctx.Err())
		}
	}
}

// servers runs a head's servers, each in a goroutine of its own: the first
// that stops on its own (not by stop) ends the head, with the error Err
// reports.
type servers struct {
	head     string        // "hdfs head", in errors
	served   chan struct{} // closed when the first server stops serving
	failOnce sync.Once
	err      error // why, set before served is closed; nil if stop came first
	stopping chan struct{}
	wg       sync.WaitGroup
}

func newServers(head string) *servers {
	return &servers{head: head, served: make(chan struct{}), stopping: make(chan struct{})}
}

// serve runs one server; closed is the error its run returns once it was
// closed.
func (s *servers) serve(name string, run func() error, closed error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := run()
		select {
		case <-s.stopping:
			return
		default:
		}
		if errors.Is(err, closed) || err == nil {
			err = errors.New("stopped")
		}
		s.failOnce.Do(func() {
			s.err = fmt.Errorf("%s: %s server: %w", s.head, name, err)
			close(s.served)
		})
	}()
}

// Done is closed once the head stopped serving: by Stop, or on its own
// when a server failed (Err says why).
func (s *servers) Done() <-chan struct{} { return s.served }

// Err is why the head stopped serving on its own: nil before Done, and
// nil if Stop stopped it before any server failed (a failure before Stop
// is still reported after it).
func (s *servers) Err() error {
	select {
	case <-s.served:
		return s.err
	default:
		return nil
	}
}

// stop marks the servers as stopping: what they return from now on is
// not a failure. Call before closing them.
func (s *servers) stop() { close(s.stopping) }

// wait waits for every server's goroutine, once they are closed, and
// closes Done if no server failed.
func (s *servers) wait() {
	s.wg.Wait()
	s.failOnce.Do(func() { close(s.served) }) // stopped, not failed: Err stays nil
}

// tracked counts the requests h answers in wg, so that a head's Stop
// waits for them before it closes tier 2.
type tracked struct {
	h  http.Handler
	wg *sync.WaitGroup
}

func (t tracked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.wg.Add(1)
	defer t.wg.Done()
	t.h.ServeHTTP(w, r)
}

// shutdownHTTP lets srv's requests in flight finish within timeout and
// ctx, and cuts off the rest.
func shutdownHTTP(ctx context.Context, srv *http.Server, timeout time.Duration, log logrus.FieldLogger, what string) {
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.WithError(err).Warnf("%s: requests still running at stop; cutting them off", what)
		srv.Close()
	}
}
