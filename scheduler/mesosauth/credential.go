package mesosauth

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Environment variables Load reads.
const (
	// ServiceAccountEnv holds a DC/OS service account's credential JSON,
	// or the path of a file holding it.
	ServiceAccountEnv = "DCOS_SERVICE_ACCOUNT_CREDENTIAL"
	// SecretEnv holds the secret of --principal for Mesos Basic
	// authentication.
	SecretEnv = "SLUICE_MESOS_SECRET"
)

// DefaultLoginEndpoint is DC/OS' IAM login, used when a credential
// names none.
const DefaultLoginEndpoint = "https://leader.mesos/acs/api/v1/auth/login"

// Source says where Load finds the credential.
type Source struct {
	// Principal is the configured Mesos principal (--principal); may be
	// empty with a service account (its uid is the principal).
	Principal string
	// SecretFile is --secret-file: the plain secret or the credential
	// JSON. It wins over the environment.
	SecretFile string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// HTTPClient makes the DC/OS login calls (default: a client with a
	// 30s timeout).
	HTTPClient *http.Client
}

// Auth is a loaded credential. Its methods are safe for concurrent use.
// Its String never shows the secret.
type Auth struct {
	principal string
	scheme    string
	basic     string         // the whole Basic header value
	tokens    *TokenProvider // DC/OS service account
}

// Schemes, as Auth.Scheme names them.
const (
	SchemeBasic          = "basic"
	SchemeServiceAccount = "dcos-service-account"
)

// Load reads the credential src names. No credential anywhere is (nil,
// nil): the scheduler then sends none.
func Load(src Source) (*Auth, error) {
	getenv := src.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var raw []byte
	from := ""
	switch {
	case src.SecretFile != "":
		b, err := os.ReadFile(src.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --secret-file: %w", ErrConfig, err)
		}
		raw, from = b, "--secret-file "+src.SecretFile
	case getenv(ServiceAccountEnv) != "":
		v := getenv(ServiceAccountEnv)
		raw, from = []byte(v), ServiceAccountEnv
		if !strings.HasPrefix(strings.TrimSpace(v), "{") {
			// A path, as dcos-commons reads the variable.
			b, err := os.ReadFile(v)
			if err != nil {
				return nil, fmt.Errorf("%w: %s is neither credential JSON nor a readable file: %w", ErrConfig, ServiceAccountEnv, err)
			}
			raw, from = b, ServiceAccountEnv+" (file "+v+")"
		}
	case getenv(SecretEnv) != "":
		raw, from = []byte(getenv(SecretEnv)), SecretEnv
	default:
		return nil, nil
	}
	text := strings.TrimSpace(string(raw))
	if text == "" {
		return nil, fmt.Errorf("%w: %s is empty", ErrConfig, from)
	}
	if strings.HasPrefix(text, "{") {
		acct, err := ParseServiceAccount([]byte(text))
		if err != nil {
			return nil, fmt.Errorf("%w (from %s)", err, from)
		}
		if src.Principal != "" && src.Principal != acct.UID {
			return nil, fmt.Errorf("%w: --principal %q differs from the service account %q of %s: the Mesos principal is the account's uid", ErrConfig, src.Principal, acct.UID, from)
		}
		hc := src.HTTPClient
		if hc == nil {
			hc = &http.Client{Timeout: 30 * time.Second}
		}
		return &Auth{principal: acct.UID, scheme: SchemeServiceAccount, tokens: NewTokenProvider(acct, hc)}, nil
	}
	if src.Principal == "" {
		return nil, fmt.Errorf("%w: a plain secret (from %s) needs --principal", ErrConfig, from)
	}
	if strings.ContainsAny(text, "\r\n") {
		return nil, fmt.Errorf("%w: the secret from %s holds a line break", ErrConfig, from)
	}
	if strings.Contains(src.Principal, ":") {
		// Mesos splits the decoded pair at ':' (libprocess'
		// BasicAuthenticator): such a principal can never authenticate.
		return nil, fmt.Errorf("%w: principal %q holds ':', which HTTP Basic authentication cannot carry", ErrConfig, src.Principal)
	}
	hdr := "Basic " + base64.StdEncoding.EncodeToString([]byte(src.Principal+":"+text))
	return &Auth{principal: src.Principal, scheme: SchemeBasic, basic: hdr}, nil
}

// Principal is the authenticated principal: FrameworkInfo.principal.
func (a *Auth) Principal() string { return a.principal }

// Scheme is SchemeBasic or SchemeServiceAccount.
func (a *Auth) Scheme() string { return a.scheme }

// String names the principal and the scheme, never the secret.
func (a *Auth) String() string { return a.scheme + " credential of principal " + a.principal }

// GoString is String, so that %#v cannot print the secret either.
func (a *Auth) GoString() string { return a.String() }

// ServiceAccount is a DC/OS service account's credential.
type ServiceAccount struct {
	UID           string
	Key           *rsa.PrivateKey
	LoginEndpoint string
}

// String never shows the key.
func (s ServiceAccount) String() string { return "service account " + s.UID }

// GoString is String.
func (s ServiceAccount) GoString() string { return s.String() }

// ParseServiceAccount parses the credential JSON: "scheme" must be
// RS256, "uid" and "private_key" (PEM, PKCS#8 or PKCS#1 RSA) are
// required, "login_endpoint" defaults to DefaultLoginEndpoint. Errors
// never quote the key.
func ParseServiceAccount(b []byte) (ServiceAccount, error) {
	var c struct {
		Scheme        string `json:"scheme"`
		UID           string `json:"uid"`
		PrivateKey    string `json:"private_key"`
		LoginEndpoint string `json:"login_endpoint"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&c); err != nil {
		return ServiceAccount{}, fmt.Errorf("%w: service account credential: not JSON (%s)", ErrConfig, jsonErrorKind(err))
	}
	switch {
	case c.UID == "":
		return ServiceAccount{}, fmt.Errorf("%w: service account credential: no \"uid\"", ErrConfig)
	case c.Scheme != "" && c.Scheme != "RS256":
		return ServiceAccount{}, fmt.Errorf("%w: service account %q: scheme %q: want RS256", ErrConfig, c.UID, c.Scheme)
	case c.PrivateKey == "":
		return ServiceAccount{}, fmt.Errorf("%w: service account %q: no \"private_key\"", ErrConfig, c.UID)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM([]byte(c.PrivateKey))
	if err != nil {
		return ServiceAccount{}, fmt.Errorf("%w: service account %q: \"private_key\" is not a PEM RSA private key", ErrConfig, c.UID)
	}
	ep := c.LoginEndpoint
	if ep == "" {
		ep = DefaultLoginEndpoint
	}
	if u, err := url.Parse(ep); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ServiceAccount{}, fmt.Errorf("%w: service account %q: login_endpoint %q: want an http(s) URL", ErrConfig, c.UID, ep)
	}
	return ServiceAccount{UID: c.UID, Key: key, LoginEndpoint: ep}, nil
}

// jsonErrorKind describes a JSON error without quoting the input (it
// may hold the key).
func jsonErrorKind(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("syntax error at byte %d", e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %q has the wrong type", e.Field)
	}
	return "unreadable"
}
