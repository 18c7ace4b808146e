package executor

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
)

// TestBearer: with a token every request carries "Authorization: Bearer
// <token>" (what the agent's JWT authenticator reads); without one, no
// Authorization at all.
func TestBearer(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
	}))
	defer srv.Close()
	for _, tc := range []struct{ token, want string }{{"eyJ.abc.def", "Bearer eyJ.abc.def"}, {"", ""}} {
		req, err := http.NewRequest(http.MethodPost, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := httpcli.With(bearer(tc.token))(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h := <-got; h != tc.want {
			t.Errorf("token %q: Authorization %q, want %q", tc.token, h, tc.want)
		}
		if req.Header.Get("Authorization") != "" {
			t.Error("the caller's request was changed")
		}
	}
}

// TestChildEnv: the role's process gets the executor's environment
// without the token.
func TestChildEnv(t *testing.T) {
	in := []string{"A=1", TokenEnv + "=secret-token", "MESOS_SANDBOX=/s", TokenEnv + "X=kept"}
	want := []string{"A=1", "MESOS_SANDBOX=/s", TokenEnv + "X=kept"}
	if got := childEnv(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("childEnv = %q, want %q", got, want)
	}
}
