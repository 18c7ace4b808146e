package mesostest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Auth makes the master and its agents authenticate as Mesos does when
// started with --authenticate_http_frameworks (and DC/OS strict mode)
// and --authenticate_http_executors (Options.Auth). The zero value
// authenticates nothing.
type Auth struct {
	// Credentials are the principals and secrets of the master's basic
	// HTTP authenticator (its --credentials): a scheduler call must carry
	// "Authorization: Basic base64(PRINCIPAL:SECRET)" of one of them.
	Credentials map[string]string
	// ServiceAccounts are DC/OS service accounts by uid, with the public
	// key of each: the fake IAM at Master.LoginURL exchanges a service
	// login token signed with the account's private key for an
	// authentication token, and a scheduler call may carry
	// "Authorization: token=T" instead of Basic.
	ServiceAccounts map[string]*rsa.PublicKey
	// TokenTTL is the lifetime of the IAM's tokens (default five days,
	// DC/OS' default).
	TokenTTL time.Duration
	// Executors has every agent give each executor its own token in
	// MESOS_EXECUTOR_AUTHENTICATION_TOKEN and require it on every call
	// to the executor API.
	Executors bool
}

// LoginPath is where DC/OS serves the IAM's login (on the master's
// host, behind Admin Router); the fake serves it on the master's port.
const LoginPath = "/acs/api/v1/auth/login"

// Realms and challenges, as Mesos and DC/OS answer a 401.
const (
	// schedulerRealm is Mesos' DEFAULT_HTTP_FRAMEWORK_AUTHENTICATION_REALM
	// (src/master/constants.hpp).
	schedulerRealm = "mesos-master-scheduler"
	// executorRealm is Mesos' EXECUTOR_HTTP_AUTHENTICATION_REALM
	// (src/slave/constants.hpp).
	executorRealm = "mesos-agent-executor"
	// dcosChallenge is DC/OS' challenge for a missing or bad token.
	dcosChallenge = "acsjwt"
)

// authState is the master's side of Auth.
type authState struct {
	opts    Auth
	iamKey  *rsa.PrivateKey // signs the IAM's tokens (generated when ServiceAccounts is set)
	execKey []byte          // signs executor tokens (HS256, as an agent's --jwt_secret_key)
	now     func() time.Time

	mu struct {
		sync.Mutex
		cid    map[*executorRun]string // container id in each executor's token
		logins int
		gen    int64 // the generation of the next IAM token
		minGen int64 // IAM tokens of an older generation are revoked
	}
}

// startAuth sets up Options.Auth: the IAM's key and login route, the
// executor tokens' key.
func (m *Master) startAuth(mux *http.ServeMux) error {
	a := &authState{opts: m.opts.Auth, now: m.opts.Now}
	if a.opts.TokenTTL <= 0 {
		a.opts.TokenTTL = 5 * 24 * time.Hour
	}
	a.mu.cid = map[*executorRun]string{}
	if len(a.opts.ServiceAccounts) > 0 {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return fmt.Errorf("mesostest: IAM key: %w", err)
		}
		a.iamKey = k
		mux.HandleFunc(LoginPath, m.serveLogin)
	}
	a.execKey = make([]byte, 32)
	if _, err := rand.Read(a.execKey); err != nil {
		return fmt.Errorf("mesostest: executor token key: %w", err)
	}
	m.auth = a
	return nil
}

// LoginURL is the fake DC/OS IAM's login endpoint (the credential's
// "login_endpoint").
func (m *Master) LoginURL() string { return m.srv.URL + LoginPath }

// Logins counts the IAM's successful logins.
func (m *Master) Logins() int {
	m.auth.mu.Lock()
	defer m.auth.mu.Unlock()
	return m.auth.mu.logins
}

// RevokeTokens makes every IAM token issued so far invalid, as their
// expiry or a revocation would: calls carrying one get 401.
func (m *Master) RevokeTokens() {
	a := m.auth
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.minGen = a.mu.gen
}

// iamError answers as the DC/OS IAM does: a JSON body with a title, a
// description and a code.
func iamError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", dcosChallenge)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"title": http.StatusText(status), "description": desc, "code": code})
}

// serveLogin is the IAM's service login: POST {"uid", "token"} where
// token is an RS256 JWT with the claims uid (the same) and exp, signed
// with the account's private key; the answer is {"token": T}, an RS256
// JWT of the IAM with the claims uid and exp.
func (m *Master) serveLogin(w http.ResponseWriter, r *http.Request) {
	a := m.auth
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		iamError(w, http.StatusMethodNotAllowed, "ERR_METHOD_NOT_ALLOWED", "use POST")
		return
	}
	var in struct {
		UID      string `json:"uid"`
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil || in.UID == "" {
		iamError(w, http.StatusBadRequest, "ERR_INVALID_DATA", "request body must be JSON with \"uid\" and \"token\"")
		return
	}
	key, ok := a.opts.ServiceAccounts[in.UID]
	if !ok || in.Token == "" {
		iamError(w, http.StatusUnauthorized, "ERR_INVALID_CREDENTIALS", "The account "+in.UID+" cannot log in with these credentials.")
		return
	}
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithTimeFunc(a.now)).
		ParseWithClaims(in.Token, claims, func(*jwt.Token) (any, error) { return key, nil })
	if err != nil {
		iamError(w, http.StatusUnauthorized, "ERR_INVALID_CREDENTIALS", "Login token verification failed: "+err.Error())
		return
	}
	if uid, _ := claims["uid"].(string); uid != in.UID {
		iamError(w, http.StatusUnauthorized, "ERR_INVALID_CREDENTIALS", "The login token's uid claim does not name "+in.UID+".")
		return
	}
	a.mu.Lock()
	gen := a.mu.gen
	a.mu.gen++
	a.mu.Unlock()
	t, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"uid": in.UID, "exp": a.now().Add(a.opts.TokenTTL).Unix(), "gen": gen,
	}).SignedString(a.iamKey)
	if err != nil {
		iamError(w, http.StatusInternalServerError, "ERR_INTERNAL", err.Error())
		return
	}
	a.mu.Lock()
	a.mu.logins++
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"token": t})
}

// schedulerAuthRequired reports whether scheduler calls must
// authenticate.
func (a *authState) schedulerAuthRequired() bool {
	return len(a.opts.Credentials) > 0 || len(a.opts.ServiceAccounts) > 0
}

// authenticateScheduler authenticates a scheduler call, then checks its
// principal against the framework's, as the master does; false means
// it has answered. A SUBSCRIBE without FrameworkInfo.principal gets the
// authenticated one.
//
// Mesos authenticates a request before its handler parses it (libprocess'
// authenticator; with several, their challenges are combined): a missing
// or wrong credential is 401 with WWW-Authenticate and an empty body.
// Then (src/master/validation.cpp, scheduler::call::validate) a SUBSCRIBE
// whose FrameworkInfo.principal differs from the authenticated one is
// 400 "Failed to validate scheduler::Call: Authenticated principal 'P'
// does not match principal 'Q' set in `FrameworkInfo`"; one without it
// takes the authenticated principal (src/master/http.cpp). Any other
// call by a principal other than its framework's is 400 "Authenticated
// principal 'P' does not match principal 'Q' set in `FrameworkInfo`"
// (src/master/http.cpp, after the framework lookup).
func (m *Master) authenticateScheduler(w http.ResponseWriter, r *http.Request, call *scheduler.Call) bool {
	a := m.auth
	if !a.schedulerAuthRequired() {
		return true
	}
	principal, ok := a.schedulerPrincipal(r.Header.Get("Authorization"))
	if !ok {
		if len(a.opts.Credentials) > 0 {
			w.Header().Add("WWW-Authenticate", `Basic realm="`+schedulerRealm+`"`)
		}
		if len(a.opts.ServiceAccounts) > 0 {
			w.Header().Add("WWW-Authenticate", dcosChallenge)
		}
		w.WriteHeader(http.StatusUnauthorized)
		return false
	}
	if call.Type == scheduler.Call_SUBSCRIBE {
		info := call.GetSubscribe().GetFrameworkInfo()
		if info == nil {
			return true // the handler refuses it
		}
		if info.Principal == nil {
			info.Principal = strPtr(principal)
			return true
		}
		if *info.Principal != principal {
			http.Error(w, "Failed to validate scheduler::Call: Authenticated principal '"+principal+"' does not match principal '"+*info.Principal+"' set in `FrameworkInfo`", http.StatusBadRequest)
			return false
		}
		return true
	}
	m.mu.Lock()
	fwPrincipal, found := m.frameworkPrincipalLocked(call.GetFrameworkID().GetValue())
	m.mu.Unlock()
	if found && fwPrincipal != principal {
		http.Error(w, "Authenticated principal '"+principal+"' does not match principal '"+fwPrincipal+"' set in `FrameworkInfo`", http.StatusBadRequest)
		return false
	}
	return true
}

// frameworkPrincipalLocked is the principal of the framework with id,
// if there is one.
func (m *Master) frameworkPrincipalLocked(id string) (string, bool) {
	fw := m.mu.fws[id]
	if fw == nil || id == "" {
		return "", false
	}
	return fw.info.GetPrincipal(), true
}

// schedulerPrincipal checks an Authorization header against the
// credentials and the IAM's tokens.
func (a *authState) schedulerPrincipal(h string) (string, bool) {
	scheme, value, _ := strings.Cut(h, " ")
	if scheme == "Basic" && len(a.opts.Credentials) > 0 {
		// As libprocess' BasicAuthenticator: base64 of exactly
		// "principal:secret".
		b, err := base64.StdEncoding.DecodeString(value)
		if err != nil {
			return "", false
		}
		parts := strings.Split(string(b), ":")
		if len(parts) != 2 {
			return "", false
		}
		if s, ok := a.opts.Credentials[parts[0]]; ok && s == parts[1] {
			return parts[0], true
		}
		return "", false
	}
	if t, ok := strings.CutPrefix(h, "token="); ok && a.iamKey != nil {
		return a.verifyIAMToken(t)
	}
	return "", false
}

// verifyIAMToken checks a token the IAM issued: its signature, expiry,
// an account that still exists, and not revoked.
func (a *authState) verifyIAMToken(t string) (string, bool) {
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithTimeFunc(a.now)).
		ParseWithClaims(t, claims, func(*jwt.Token) (any, error) { return &a.iamKey.PublicKey, nil })
	if err != nil {
		return "", false
	}
	uid, _ := claims["uid"].(string)
	if _, ok := a.opts.ServiceAccounts[uid]; !ok {
		return "", false
	}
	gen, _ := claims["gen"].(float64)
	a.mu.Lock()
	defer a.mu.Unlock()
	if int64(gen) < a.mu.minGen {
		return "", false
	}
	return uid, true
}

// executorTokenEnvLocked is what an agent with executor authentication
// adds to an executor's environment: its token, a JWT with the claims
// fid, eid and cid (its framework, executor and container ids), signed
// with the agent's key, as Mesos' JWT secret generator makes it
// (src/authentication/executor/jwt_secret_generator.cpp); nothing when
// executors are not authenticated. The cid is the run's container id.
func (m *Master) executorTokenEnvLocked(er *executorRun) ([]string, error) {
	a := m.auth
	if !a.opts.Executors || er.command {
		return nil, nil
	}
	cid := er.id + "-" + itoa(er.agent.runs)
	t, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"fid": er.fwID, "eid": er.id, "cid": cid}).SignedString(a.execKey)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.mu.cid[er] = cid
	a.mu.Unlock()
	return []string{"MESOS_EXECUTOR_AUTHENTICATION_TOKEN=" + t}, nil
}

// authenticateExecutor authenticates a call to agent ag's executor API;
// false means it has answered. As the agent's JWT authenticator
// (libprocess' jwt_authenticator.cpp): no Authorization is 401 with the
// challenge `Bearer realm="mesos-agent-executor"` alone; a header that
// is not "Bearer <JWT>" or a JWT that does not verify is 401 with
// error="invalid_token" and a description. A valid token whose claims
// do not name the call's framework, executor and the executor's current
// container is 403 (src/slave/http.cpp, verifyExecutorClaims).
func (m *Master) authenticateExecutor(w http.ResponseWriter, r *http.Request, ag *agent, call *executor.Call) bool {
	a := m.auth
	if !a.opts.Executors {
		return true
	}
	unauthorized := func(desc string) bool {
		c := `Bearer realm="` + executorRealm + `"`
		if desc != "" {
			c += `, error="invalid_token", error_description="` + desc + `"`
		}
		w.Header().Set("WWW-Authenticate", c)
		w.WriteHeader(http.StatusUnauthorized)
		return false
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return unauthorized("")
	}
	parts := strings.Split(h, " ")
	if len(parts) != 2 {
		return unauthorized("Malformed 'Authorization' header")
	}
	if parts[0] != "Bearer" {
		return unauthorized("Scheme '" + parts[0] + "' unsupported")
	}
	claims := jwt.MapClaims{}
	if _, err := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"})).
		ParseWithClaims(parts[1], claims, func(*jwt.Token) (any, error) { return a.execKey, nil }); err != nil {
		return unauthorized("Invalid JWT: " + err.Error())
	}
	if len(claims) == 0 {
		return unauthorized("JWT claims missing")
	}
	claim := func(k string) string { s, _ := claims[k].(string); return s }
	principal := fmt.Sprintf("{fid: %s, eid: %s, cid: %s}", claim("fid"), claim("eid"), claim("cid"))
	forbid := func(msg string) bool {
		http.Error(w, "Authenticated principal '"+principal+"' does not "+msg, http.StatusForbidden)
		return false
	}
	fid, eid := call.FrameworkID.GetValue(), call.ExecutorID.GetValue()
	if claim("fid") != fid {
		return forbid("contain an 'fid' claim with the framework ID " + fid + ", which is set in the call")
	}
	if claim("eid") != eid {
		return forbid("contain an 'eid' claim with the executor ID " + eid + ", which is set in the call")
	}
	m.mu.Lock()
	er := ag.executors[eid]
	m.mu.Unlock()
	if er == nil {
		return true // the handler answers "Executor not found"
	}
	a.mu.Lock()
	cid, ok := a.mu.cid[er]
	a.mu.Unlock()
	if !ok || claim("cid") != cid {
		return forbid("contain a 'cid' claim with the correct active ContainerID")
	}
	return true
}
