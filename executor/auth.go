package executor

import (
	"net/http"
	"os"
	"strings"

	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
)

// TokenEnv is the variable in which a Mesos agent started with
// --authenticate_http_executors gives each executor its token (a JWT
// bound to the executor's framework, executor and container ids).
// mesos-go's executor/config does not read it: TokenFromEnv does.
const TokenEnv = "MESOS_EXECUTOR_AUTHENTICATION_TOKEN"

// TokenFromEnv is the agent's token for this executor, or "" when the
// agent does not authenticate executors.
func TokenFromEnv() string { return os.Getenv(TokenEnv) }

// bearer is the httpcli option that adds "Authorization: Bearer token"
// to every call to the agent; nothing when token is empty. The agent's
// JWT authenticator refuses any other scheme (401).
func bearer(token string) httpcli.ConfigOpt {
	if token == "" {
		return nil
	}
	return httpcli.WrapRoundTripper(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			r := req.Clone(req.Context()) // a RoundTripper must not change its request
			r.Header.Set("Authorization", "Bearer "+token)
			return rt.RoundTrip(r)
		})
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// childEnv is env without the executor's token: the role's process
// never talks to the agent, and a token it could read could impersonate
// the executor.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, TokenEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}
