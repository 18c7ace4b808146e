package mesostest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// answer is what a raw call got: status, WWW-Authenticate and body.
type answer struct {
	status    int
	challenge []string
	body      string
}

// post sends a JSON call to url with the Authorization header auth
// ("" none) and closes the answer at once (a SUBSCRIBE's stream too).
func post(t *testing.T, url, auth, body string) answer {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(c, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, challenge: resp.Header.Values("WWW-Authenticate")}
	if resp.StatusCode != http.StatusOK { // 200 is a stream: not read
		b, _ := io.ReadAll(resp.Body)
		a.body = strings.TrimSpace(string(b))
	}
	return a
}

func basic(principal, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(principal+":"+secret))
}

func subscribeJSON(principal string) string {
	p := ""
	if principal != "" {
		p = `,"principal":"` + principal + `"`
	}
	return `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"sluice"` + p + `}}}`
}

// TestSchedulerBasicAuth: with Auth.Credentials the master answers a
// call without valid Basic credentials 401 with the challenge of
// libprocess' basic authenticator, a SUBSCRIBE naming another principal
// 400, a call by a principal other than its framework's 400 (Mesos'
// src/master/http.cpp and validation.cpp); a SUBSCRIBE without a
// principal takes the authenticated one.
func TestSchedulerBasicAuth(t *testing.T) {
	m := NewMaster(t, Options{Auth: Auth{Credentials: map[string]string{"alice": "s3cret", "bob": "other"}}})
	url := m.URL()
	wantChallenge := `Basic realm="mesos-master-scheduler"`
	for _, tc := range []struct {
		name, auth string
	}{
		{"no header", ""},
		{"wrong secret", basic("alice", "wrong")},
		{"unknown principal", basic("carol", "s3cret")},
		{"not base64", "Basic %%%"},
		{"a DC/OS token", "token=abc"},
		{"secret holding a colon", basic("alice", "s3cret:x")},
	} {
		a := post(t, url, tc.auth, subscribeJSON("alice"))
		if a.status != http.StatusUnauthorized || len(a.challenge) != 1 || a.challenge[0] != wantChallenge || a.body != "" {
			t.Errorf("%s: got %d %q %q, want 401 with %q and no body", tc.name, a.status, a.challenge, a.body, wantChallenge)
		}
	}
	if m.FrameworkID() != "" {
		t.Fatalf("a refused SUBSCRIBE registered framework %q", m.FrameworkID())
	}

	a := post(t, url, basic("bob", "other"), subscribeJSON("alice"))
	want := "Failed to validate scheduler::Call: Authenticated principal 'bob' does not match principal 'alice' set in `FrameworkInfo`"
	if a.status != http.StatusBadRequest || a.body != want {
		t.Fatalf("SUBSCRIBE by bob as alice: got %d %q, want 400 %q", a.status, a.body, want)
	}

	// No principal in FrameworkInfo: the master sets the authenticated one.
	info := &mesos.FrameworkInfo{User: "u", Name: "sluice"}
	s := subscribeBasic(t, m, info, "alice", "s3cret")
	subs := m.CallsOf(scheduler.Call_SUBSCRIBE)
	if got := subs[len(subs)-1].GetSubscribe().GetFrameworkInfo().GetPrincipal(); got != "alice" {
		t.Fatalf("FrameworkInfo.principal after SUBSCRIBE: %q, want alice", got)
	}

	revive := `{"type":"REVIVE","framework_id":{"value":"` + s.fwID + `"}}`
	a = post(t, url, basic("bob", "other"), revive)
	want = "Authenticated principal 'bob' does not match principal 'alice' set in `FrameworkInfo`"
	if a.status != http.StatusBadRequest || a.body != want {
		t.Fatalf("REVIVE by bob of alice's framework: got %d %q, want 400 %q", a.status, a.body, want)
	}
	// Alice passes authentication; the stream id check comes next.
	a = post(t, url, basic("alice", "s3cret"), revive)
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, "Mesos-Stream-Id") {
		t.Fatalf("REVIVE by alice without a stream id: got %d %q", a.status, a.body)
	}
	// And her client's calls go through.
	s.call(calls.Revive())
}

// subscribeBasic subscribes with the library's client sending Basic
// credentials.
func subscribeBasic(t *testing.T, m *Master, info *mesos.FrameworkInfo, principal, secret string) *sched {
	t.Helper()
	cli := newBasicClient(m.URL(), principal, secret)
	return subscribeClient(t, cli, info, "")
}

// newServiceAccount makes an RSA key pair for a service account.
func newServiceAccount(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// loginToken signs a service login token for uid valid until exp.
func loginToken(t *testing.T, k *rsa.PrivateKey, uid string, exp time.Time) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"uid": uid, "exp": exp.Unix()}).SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// login posts a service login to the fake IAM.
func login(t *testing.T, m *Master, uid, token string) (int, map[string]string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"uid": uid, "token": token})
	resp, err := http.Post(m.LoginURL(), "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]string{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("login answer: %v", err)
	}
	return resp.StatusCode, out
}

// TestSchedulerIAMAuth: the fake DC/OS IAM exchanges a login token
// signed with the service account's key for a token the master accepts
// as "Authorization: token=T"; a login signed with another key, for
// another uid, expired, or for an unknown account is 401 with the IAM's
// JSON error; a revoked token is 401 with the acsjwt challenge.
func TestSchedulerIAMAuth(t *testing.T) {
	key := newServiceAccount(t)
	m := NewMaster(t, Options{Auth: Auth{ServiceAccounts: map[string]*rsa.PublicKey{"sluice-sa": &key.PublicKey}}})
	other := newServiceAccount(t)
	now := time.Now()
	for _, tc := range []struct {
		name, uid, token string
	}{
		{"another key", "sluice-sa", loginToken(t, other, "sluice-sa", now.Add(time.Minute))},
		{"expired", "sluice-sa", loginToken(t, key, "sluice-sa", now.Add(-time.Minute))},
		{"uid claim of another", "sluice-sa", loginToken(t, key, "someone", now.Add(time.Minute))},
		{"unknown account", "nobody", loginToken(t, key, "nobody", now.Add(time.Minute))},
		{"no token", "sluice-sa", ""},
	} {
		status, body := login(t, m, tc.uid, tc.token)
		if status != http.StatusUnauthorized || body["code"] != "ERR_INVALID_CREDENTIALS" || body["token"] != "" {
			t.Errorf("%s: login got %d %v, want 401 ERR_INVALID_CREDENTIALS", tc.name, status, body)
		}
	}
	if m.Logins() != 0 {
		t.Fatalf("%d logins succeeded, want 0", m.Logins())
	}
	status, body := login(t, m, "sluice-sa", loginToken(t, key, "sluice-sa", now.Add(time.Minute)))
	if status != http.StatusOK || body["token"] == "" {
		t.Fatalf("login: %d %v", status, body)
	}
	token := body["token"]

	for _, auth := range []string{"", "token=" + token + "x", "Bearer " + token, basic("sluice-sa", "x")} {
		a := post(t, m.URL(), auth, subscribeJSON("sluice-sa"))
		if a.status != http.StatusUnauthorized || len(a.challenge) != 1 || a.challenge[0] != "acsjwt" {
			t.Errorf("Authorization %.20q...: got %d %q, want 401 acsjwt", auth, a.status, a.challenge)
		}
	}
	a := post(t, m.URL(), "token="+token, subscribeJSON("other"))
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, "Authenticated principal 'sluice-sa' does not match principal 'other'") {
		t.Fatalf("SUBSCRIBE as another principal: %d %q", a.status, a.body)
	}
	if a := post(t, m.URL(), "token="+token, subscribeJSON("sluice-sa")); a.status != http.StatusOK {
		t.Fatalf("SUBSCRIBE with the token: %d %q", a.status, a.body)
	}
	m.RevokeTokens()
	if a := post(t, m.URL(), "token="+token, subscribeJSON("sluice-sa")); a.status != http.StatusUnauthorized {
		t.Fatalf("SUBSCRIBE with a revoked token: %d %q, want 401", a.status, a.body)
	}
}

// TestExecutorTokens: with Auth.Executors each executor gets its own
// token in MESOS_EXECUTOR_AUTHENTICATION_TOKEN, and its agent answers a
// call without one 401 with the Bearer challenge, a malformed or
// unverifiable one 401 with error="invalid_token", and one of another
// executor 403 (Mesos' jwt_authenticator.cpp; src/slave/http.cpp,
// verifyExecutorClaims).
func TestExecutorTokens(t *testing.T) {
	m := NewMaster(t, Options{Auth: Auth{Executors: true}})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 1000}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
	// Executors that only write their token down and wait: the test
	// plays their calls.
	tokenTask := func(id string) mesos.TaskInfo {
		return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: mesos.AgentID{Value: "a1"},
			Resources: mesos.Resources{scalar("cpus", 1), scalar("mem", 64)},
			Executor: &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "exec-" + id},
				Command: &mesos.CommandInfo{Value: strPtr(`printf %s "$MESOS_EXECUTOR_AUTHENTICATION_TOKEN" > token.tmp && mv token.tmp token && exec sleep 600`)}}}
	}
	s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(tokenTask("t1")), calls.OpLaunch(tokenTask("t2"))}.WithOffers(o.ID)))

	tokens := map[string]string{}
	for _, id := range []string{"t1", "t2"} {
		tv, ok := m.Task(id)
		if !ok {
			t.Fatalf("task %s not launched", id)
		}
		tokens[id] = awaitFile(t, filepath.Join(tv.Sandbox, "token"))
	}
	if tokens["t1"] == tokens["t2"] {
		t.Fatal("two executors got the same token")
	}
	m.mu.Lock()
	url := m.mu.agents["a1"].srv.URL + "/api/v1/executor"
	m.mu.Unlock()
	sub := func(exec string) string {
		return `{"type":"SUBSCRIBE","framework_id":{"value":"` + s.fwID + `"},"executor_id":{"value":"` + exec + `"},"subscribe":{}}`
	}
	realm := `Bearer realm="mesos-agent-executor"`
	for _, tc := range []struct {
		name, auth, wantChallenge string
	}{
		{"no header", "", realm},
		{"malformed", "Bearer a b", realm + `, error="invalid_token", error_description="Malformed 'Authorization' header"`},
		{"other scheme", "Basic " + tokens["t1"], realm + `, error="invalid_token", error_description="Scheme 'Basic' unsupported"`},
		{"bad signature", "Bearer " + tokens["t1"][:len(tokens["t1"])-2] + "xx", realm + `, error="invalid_token", error_description="Invalid JWT`},
	} {
		a := post(t, url, tc.auth, sub("exec-t1"))
		if a.status != http.StatusUnauthorized || len(a.challenge) != 1 || !strings.HasPrefix(a.challenge[0], tc.wantChallenge) {
			t.Errorf("%s: got %d %q, want 401 %q", tc.name, a.status, a.challenge, tc.wantChallenge)
		}
	}
	a := post(t, url, "Bearer "+tokens["t2"], sub("exec-t1"))
	if a.status != http.StatusForbidden || !strings.Contains(a.body, "does not contain an 'eid' claim with the executor ID exec-t1") {
		t.Fatalf("t2's token for exec-t1: got %d %q, want 403", a.status, a.body)
	}
	if n := len(m.ExecutorCalls()); n != 0 {
		t.Fatalf("%d refused executor calls reached the agent", n)
	}
	if a := post(t, url, "Bearer "+tokens["t1"], sub("exec-t1")); a.status != http.StatusOK {
		t.Fatalf("t1's own token: got %d %q, want 200", a.status, a.body)
	}
}

// awaitFile waits for path to exist with content, and returns it.
func awaitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not written within 20s", path)
		}
		<-tick.C
	}
}

// newBasicClient is the library's client sending Basic credentials.
func newBasicClient(url, principal, secret string) *httpcli.Client {
	return httpcli.New(httpcli.Endpoint(url), httpcli.Do(httpcli.With(httpcli.BasicAuth(principal, secret))))
}
