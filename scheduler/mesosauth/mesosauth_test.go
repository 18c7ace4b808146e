package mesosauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/sluice-streams/sluice/scheduler/mesosauth"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
)

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

// key is one RSA key for all tests (generating one takes a while).
func key(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey
}

// credential is a service account's credential JSON, as DC/OS' secret
// store holds it.
func credential(t *testing.T, uid, endpoint string) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{
		"scheme": "RS256", "uid": uid, "login_endpoint": endpoint,
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
	})
	return string(b)
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoad: where the credential comes from and what it makes.
func TestLoad(t *testing.T) {
	cred := credential(t, "sluice-sa", "http://127.0.0.1:1/acs/api/v1/auth/login")
	for _, tc := range []struct {
		name          string
		src           mesosauth.Source
		wantScheme    string // "" : no credential
		wantPrincipal string
		wantErr       string
	}{
		{name: "nothing", src: mesosauth.Source{Principal: "p"}},
		{name: "plain secret file", src: mesosauth.Source{Principal: "p", SecretFile: writeFile(t, "s3cret\n")}, wantScheme: mesosauth.SchemeBasic, wantPrincipal: "p"},
		{name: "credential file", src: mesosauth.Source{SecretFile: writeFile(t, cred)}, wantScheme: mesosauth.SchemeServiceAccount, wantPrincipal: "sluice-sa"},
		{name: "credential env", src: mesosauth.Source{Getenv: env(map[string]string{mesosauth.ServiceAccountEnv: cred})}, wantScheme: mesosauth.SchemeServiceAccount, wantPrincipal: "sluice-sa"},
		{name: "credential env naming a file", src: mesosauth.Source{Getenv: env(map[string]string{mesosauth.ServiceAccountEnv: writeFile(t, cred)})}, wantScheme: mesosauth.SchemeServiceAccount, wantPrincipal: "sluice-sa"},
		{name: "secret env", src: mesosauth.Source{Principal: "p", Getenv: env(map[string]string{mesosauth.SecretEnv: "s3cret"})}, wantScheme: mesosauth.SchemeBasic, wantPrincipal: "p"},
		{name: "file wins over env", src: mesosauth.Source{Principal: "p", SecretFile: writeFile(t, "s3cret"), Getenv: env(map[string]string{mesosauth.ServiceAccountEnv: cred})}, wantScheme: mesosauth.SchemeBasic, wantPrincipal: "p"},
		{name: "same principal", src: mesosauth.Source{Principal: "sluice-sa", SecretFile: writeFile(t, cred)}, wantScheme: mesosauth.SchemeServiceAccount, wantPrincipal: "sluice-sa"},
		{name: "secret without principal", src: mesosauth.Source{SecretFile: writeFile(t, "s3cret")}, wantErr: "needs --principal"},
		{name: "other principal", src: mesosauth.Source{Principal: "p", SecretFile: writeFile(t, cred)}, wantErr: `--principal "p" differs from the service account "sluice-sa"`},
		{name: "empty file", src: mesosauth.Source{Principal: "p", SecretFile: writeFile(t, "\n")}, wantErr: "is empty"},
		{name: "missing file", src: mesosauth.Source{Principal: "p", SecretFile: "/nonexistent/secret"}, wantErr: "--secret-file"},
		{name: "two lines", src: mesosauth.Source{Principal: "p", SecretFile: writeFile(t, "s3cret\nmore")}, wantErr: "line break"},
		{name: "colon principal", src: mesosauth.Source{Principal: "a:b", SecretFile: writeFile(t, "s3cret")}, wantErr: "holds ':'"},
		{name: "bad JSON", src: mesosauth.Source{SecretFile: writeFile(t, `{"uid": "x", "private_key": "s3cret`)}, wantErr: "not JSON"},
		{name: "no uid", src: mesosauth.Source{SecretFile: writeFile(t, `{"private_key": "s3cret"}`)}, wantErr: `no "uid"`},
		{name: "bad key", src: mesosauth.Source{SecretFile: writeFile(t, `{"uid": "x", "private_key": "s3cret"}`)}, wantErr: "not a PEM RSA private key"},
		{name: "bad scheme", src: mesosauth.Source{SecretFile: writeFile(t, `{"uid": "x", "scheme": "HS256", "private_key": "s3cret"}`)}, wantErr: `scheme "HS256"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.src.Getenv == nil {
				tc.src.Getenv = env(nil)
			}
			a, err := mesosauth.Load(tc.src)
			if tc.wantErr != "" {
				if !errors.Is(err, mesosauth.ErrConfig) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want ErrConfig with %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "PRIVATE KEY") {
					t.Fatalf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantScheme == "" {
				if a != nil {
					t.Fatalf("got %v, want no credential", a)
				}
				return
			}
			if a.Scheme() != tc.wantScheme || a.Principal() != tc.wantPrincipal {
				t.Fatalf("got %s %s, want %s %s", a.Scheme(), a.Principal(), tc.wantScheme, tc.wantPrincipal)
			}
			if s := fmt.Sprintf("%v %+v %#v %s", a, a, a, a); strings.Contains(s, "s3cret") || strings.Contains(s, "PRIVATE") {
				t.Fatalf("printing the credential shows the secret: %s", s)
			}
		})
	}
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestTokenRefresh: a token is reused until RefreshBefore ahead of its
// expiry, then replaced by a new login; a token the master refuses
// (401) is replaced at once and the call sent again.
func TestTokenRefresh(t *testing.T) {
	clk := &clock{now: time.Now()}
	m := mesostest.NewMaster(t, mesostest.Options{Now: clk.Now, Auth: mesostest.Auth{
		ServiceAccounts: map[string]*rsa.PublicKey{"sluice-sa": &key(t).PublicKey},
		TokenTTL:        time.Hour,
	}})
	acct, err := mesosauth.ParseServiceAccount([]byte(credential(t, "sluice-sa", m.LoginURL())))
	if err != nil {
		t.Fatal(err)
	}
	p := mesosauth.NewTokenProvider(acct, http.DefaultClient)
	p.Now = clk.Now
	ctx := context.Background()
	t1, err := p.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(50 * time.Minute) // 10 min left: still good (refresh 5 min ahead)
	if t2, err := p.Token(ctx); err != nil || t2 != t1 || p.Logins() != 1 {
		t.Fatalf("at 50 min: %v, same token %v, logins %d; want the same token, 1 login", err, t2 == t1, p.Logins())
	}
	clk.Add(6 * time.Minute) // 4 min left: due
	t3, err := p.Token(ctx)
	if err != nil || t3 == t1 || p.Logins() != 2 || m.Logins() != 2 {
		t.Fatalf("at 56 min: %v, new token %v, logins %d (IAM %d); want a new token, 2 logins", err, t3 != t1, p.Logins(), m.Logins())
	}
	p.Invalidate(t1) // not the current one: no effect
	if t4, _ := p.Token(ctx); t4 != t3 {
		t.Fatal("invalidating an old token dropped the current one")
	}
}

// TestReloginOn401: a scheduler client whose token the master refuses
// logs in again and its call goes through.
func TestReloginOn401(t *testing.T) {
	m := mesostest.NewMaster(t, mesostest.Options{Auth: mesostest.Auth{
		ServiceAccounts: map[string]*rsa.PublicKey{"sluice-sa": &key(t).PublicKey},
	}})
	a, err := mesosauth.Load(mesosauth.Source{Getenv: env(map[string]string{mesosauth.ServiceAccountEnv: credential(t, "sluice-sa", m.LoginURL())})})
	if err != nil {
		t.Fatal(err)
	}
	subscribe := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := a.Caller(m.URL()).Call(ctx, calls.Subscribe(&mesos.FrameworkInfo{User: "u", Name: "sluice"}))
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		resp.Close()
	}
	subscribe()
	if m.Logins() != 1 {
		t.Fatalf("logins %d, want 1", m.Logins())
	}
	m.RevokeTokens()
	subscribe()
	if m.Logins() != 2 {
		t.Fatalf("logins after a 401: %d, want 2", m.Logins())
	}
}

// TestRefused: wrong credentials give one ErrRefused naming the
// principal and the status, never the secret; a refused login ErrLogin.
func TestRefused(t *testing.T) {
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	m := mesostest.NewMaster(t, mesostest.Options{Auth: mesostest.Auth{
		Credentials:     map[string]string{"sluice": "right-secret"},
		ServiceAccounts: map[string]*rsa.PublicKey{"sluice-sa": &other.PublicKey},
	}})
	call := func(a *mesosauth.Auth) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := a.Caller(m.URL()).Call(ctx, calls.Subscribe(&mesos.FrameworkInfo{User: "u", Name: "sluice", Principal: strPtr(a.Principal())}))
		if resp != nil {
			resp.Close()
		}
		return err
	}
	basic, err := mesosauth.Load(mesosauth.Source{Principal: "sluice", Getenv: env(map[string]string{mesosauth.SecretEnv: "wrong-secret"})})
	if err != nil {
		t.Fatal(err)
	}
	err = call(basic)
	var re *mesosauth.RefusedError
	if !errors.Is(err, mesosauth.ErrRefused) || !errors.As(err, &re) || re.Status != http.StatusUnauthorized {
		t.Fatalf("wrong secret: got %v, want a 401 ErrRefused", err)
	}
	for _, want := range []string{`principal "sluice"`, "401 Unauthorized", `Basic realm="mesos-master-scheduler"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("the error shows the secret: %v", err)
	}

	// The key is not the account's: the IAM refuses the login.
	sa, err := mesosauth.Load(mesosauth.Source{Getenv: env(map[string]string{mesosauth.ServiceAccountEnv: credential(t, "sluice-sa", m.LoginURL())})})
	if err != nil {
		t.Fatal(err)
	}
	err = call(sa)
	if !errors.Is(err, mesosauth.ErrLogin) || !strings.Contains(err.Error(), `"sluice-sa"`) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("login with the wrong key: got %v, want ErrLogin naming the account and the 401", err)
	}
	if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), "eyJ") {
		t.Fatalf("the error shows the key or a token: %v", err)
	}
	if m.FrameworkID() != "" {
		t.Fatalf("a refused subscription registered framework %q", m.FrameworkID())
	}
}

func strPtr(s string) *string { return &s }
