package mesosauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/apierrors"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// header is the Authorization value of a call.
func (a *Auth) header(ctx context.Context) (string, error) {
	if a.tokens == nil {
		return a.basic, nil
	}
	t, err := a.tokens.Token(ctx)
	if err != nil {
		return "", err
	}
	return "token=" + t, nil
}

// Wrap returns rt with every request carrying the credential. With a
// service account, a 401 drops the token and the request is sent once
// more with a fresh one (when its body can be replayed). A failed login
// is the round trip's error (ErrLogin).
func (a *Auth) Wrap(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		h, err := a.header(req.Context())
		if err != nil {
			return nil, err
		}
		resp, err := rt.RoundTrip(withAuth(req, h))
		if err != nil || resp.StatusCode != http.StatusUnauthorized || a.tokens == nil || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		// The token expired early or was revoked: log in again, once.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		a.tokens.Invalidate(strings.TrimPrefix(h, "token="))
		if h, err = a.header(req.Context()); err != nil {
			return nil, err
		}
		again := withAuth(req, h)
		if req.GetBody != nil {
			if again.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		return rt.RoundTrip(again)
	})
}

// withAuth is a copy of req with Authorization set (a RoundTripper must
// not change its request).
func withAuth(req *http.Request, h string) *http.Request {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", h)
	return r
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// RefusedError is a 401 or 403 from the master: errors.Is(err,
// ErrRefused). It holds the principal, the scheme, the status and the
// master's message, never the credential.
type RefusedError struct {
	Principal, Scheme string
	Status            int
	Message           string // the master's answer, cut short
	WWWAuthenticate   string // the challenge of a 401
}

func (e *RefusedError) Error() string {
	what := "refused the credentials of"
	if e.Status == http.StatusForbidden {
		what = "forbade a call of"
	}
	s := fmt.Sprintf("mesosauth: the Mesos master %s principal %q (%s): %d %s", what, e.Principal, e.Scheme, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.WWWAuthenticate != "" {
		s += " (challenge: " + e.WWWAuthenticate + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// SubscriptionLoss tells mesos-go's httpsched, as its own 403 error
// does, that a 403 means the subscription is gone.
func (e *RefusedError) SubscriptionLoss() bool { return e.Status == http.StatusForbidden }

// ErrorMapper maps a master's answer to an error as mesos-go's default
// (apierrors.FromResponse) does, except 401 and 403, which become a
// RefusedError naming the principal.
func (a *Auth) ErrorMapper(res *http.Response) error {
	if res == nil || (res.StatusCode != http.StatusUnauthorized && res.StatusCode != http.StatusForbidden) {
		return apierrors.FromResponse(res)
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
	res.Body.Close()
	msg, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return &RefusedError{Principal: a.principal, Scheme: a.scheme, Status: res.StatusCode, Message: msg,
		WWWAuthenticate: res.Header.Get("WWW-Authenticate")}
}

// Caller returns a mesos-go scheduler caller (httpsched) of the master
// at endpoint whose every call carries a's credential. A call the
// master refuses (ErrRefused) or that cannot log in (ErrLogin) fails at
// once: mesos-go's httpsched otherwise sends a failed call again, up to
// 9 times over about a minute, taking any error for a change of the
// leading master.
func (a *Auth) Caller(endpoint string) calls.Caller {
	var refused atomic.Bool // the last call failed on its credential
	wrap := func(rt http.RoundTripper) http.RoundTripper {
		inner := a.Wrap(rt)
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := inner.RoundTrip(req)
			if errors.Is(err, ErrLogin) {
				refused.Store(true)
			}
			return resp, err
		})
	}
	mapper := func(res *http.Response) error {
		err := a.ErrorMapper(res)
		if errors.Is(err, ErrRefused) {
			refused.Store(true)
		}
		return err
	}
	cfg := append([]httpcli.ConfigOpt{}, httpcli.DefaultConfigOpt...)
	cfg = append(cfg, httpcli.WrapRoundTripper(wrap))
	cli := httpcli.New(httpcli.Endpoint(endpoint), httpcli.Do(httpcli.With(cfg...)), httpcli.ErrorMapper(mapper))
	return httpsched.NewCaller(cli, httpsched.EndpointCandidates(func() string {
		if refused.Swap(false) {
			return "" // no retry: the error is returned
		}
		return endpoint
	}))
}
