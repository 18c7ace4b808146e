package mesosauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Lifetimes of the service login.
const (
	// LoginTokenTTL is how long the signed service login token is valid:
	// it is used once, right away (dcos-commons signs them for 2 min).
	LoginTokenTTL = 2 * time.Minute
	// DefaultRefreshBefore is how long before its "exp" a DC/OS
	// authentication token is replaced.
	DefaultRefreshBefore = 5 * time.Minute
)

// TokenProvider logs a DC/OS service account in and keeps its
// authentication token. Safe for concurrent use; a login is made by one
// caller at a time, the others wait for it.
type TokenProvider struct {
	acct ServiceAccount
	hc   *http.Client
	// Now is the clock (default time.Now); RefreshBefore how long
	// before the token's expiry a new one is fetched (default
	// DefaultRefreshBefore, at most half the token's lifetime). Set them
	// before the first Token.
	Now           func() time.Time
	RefreshBefore time.Duration

	mu struct {
		sync.Mutex
		token   string
		refresh time.Time // when to log in again; zero: never by time
		logins  int
	}
}

// NewTokenProvider returns a provider for acct; hc makes the login calls.
func NewTokenProvider(acct ServiceAccount, hc *http.Client) *TokenProvider {
	return &TokenProvider{acct: acct, hc: hc, Now: time.Now, RefreshBefore: DefaultRefreshBefore}
}

// UID is the service account's uid.
func (p *TokenProvider) UID() string { return p.acct.UID }

// Logins is how many logins succeeded (for tests and metrics).
func (p *TokenProvider) Logins() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.logins
}

// Token returns the current authentication token, logging in first when
// there is none or it is due for refresh.
func (p *TokenProvider) Token(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.token != "" && (p.mu.refresh.IsZero() || p.Now().Before(p.mu.refresh)) {
		return p.mu.token, nil
	}
	return p.loginLocked(ctx)
}

// Invalidate drops token if it is still the current one (the master
// refused it): the next Token logs in again.
func (p *TokenProvider) Invalidate(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.token == token {
		p.mu.token = ""
	}
}

// loginLocked signs a service login token, exchanges it at the login
// endpoint and keeps the answer.
func (p *TokenProvider) loginLocked(ctx context.Context) (string, error) {
	now := p.Now()
	login, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"uid": p.acct.UID,
		"exp": now.Add(LoginTokenTTL).Unix(),
	}).SignedString(p.acct.Key)
	if err != nil {
		return "", fmt.Errorf("%w: service account %q: sign the login token: %w", ErrLogin, p.acct.UID, err)
	}
	body, err := json.Marshal(map[string]string{"uid": p.acct.UID, "token": login})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.acct.LoginEndpoint, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("%w: service account %q: %w", ErrLogin, p.acct.UID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: service account %q at %s: %w", ErrLogin, p.acct.UID, p.acct.LoginEndpoint, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("%w: service account %q at %s: %w", ErrLogin, p.acct.UID, p.acct.LoginEndpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: service account %q at %s: %s: %s", ErrLogin, p.acct.UID, p.acct.LoginEndpoint, resp.Status, iamMessage(b))
	}
	var out struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Token == "" {
		return "", fmt.Errorf("%w: service account %q at %s: the answer holds no token", ErrLogin, p.acct.UID, p.acct.LoginEndpoint)
	}
	p.mu.token, p.mu.refresh = out.Token, p.refreshAt(out.Token, now)
	p.mu.logins++
	return out.Token, nil
}

// refreshAt is when to replace token, got at now: RefreshBefore ahead
// of its "exp", but not later than half-way through its lifetime. The
// token is read, not verified: the master verifies it; a token without
// "exp" is kept until the master refuses it.
func (p *TokenProvider) refreshAt(token string, now time.Time) time.Time {
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		return time.Time{}
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return time.Time{}
	}
	life := exp.Sub(now)
	before := min(p.RefreshBefore, life/2)
	return exp.Add(-before)
}

// iamMessage is what the IAM says in an error answer: its
// "description" (or "title"), else the body's first line, cut short.
func iamMessage(b []byte) string {
	var e struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	msg := ""
	if json.Unmarshal(b, &e) == nil {
		msg = e.Description
		if msg == "" {
			msg = e.Title
		}
	}
	if msg == "" {
		msg, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}
