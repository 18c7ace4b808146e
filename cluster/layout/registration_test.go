package layout

import (
	"reflect"
	"testing"
	"time"
)

// The values below were written by the encoders this package replaced
// (node/membership's and controller/leader's Registration): registrations
// already in ZooKeeper decode, and encoding gives the same bytes back.
func TestNodeRegistrationKeepsItsBytes(t *testing.T) {
	started := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("", 3600))
	tests := []struct {
		old  string
		want NodeRegistration
	}{
		{`{"id":"n1","addr":"10.0.0.1:12345","started":"2026-01-02T03:04:05.000006+01:00","tier2":true}`,
			NodeRegistration{ID: "n1", Addr: "10.0.0.1:12345", Started: started, Tier2: true}},
		{`{"id":"n2","addr":"10.0.0.2:12345","started":"2026-01-02T02:04:05.000006Z"}`,
			NodeRegistration{ID: "n2", Addr: "10.0.0.2:12345", Started: started.UTC()}},
	}
	for _, tt := range tests {
		got, err := ParseNodeRegistration([]byte(tt.old))
		if err != nil {
			t.Fatalf("decode %s: %v", tt.old, err)
		}
		if !got.Started.Equal(tt.want.Started) || got.ID != tt.want.ID || got.Addr != tt.want.Addr || got.Tier2 != tt.want.Tier2 {
			t.Errorf("decode %s: %+v, want %+v", tt.old, got, tt.want)
		}
		if enc := string(got.Encode()); enc != tt.old {
			t.Errorf("round trip of %s: %s", tt.old, enc)
		}
		if enc := string(tt.want.Encode()); enc != tt.old {
			t.Errorf("encode %+v: %s, want %s", tt.want, enc, tt.old)
		}
	}
}

func TestControllerRegistrationKeepsItsBytes(t *testing.T) {
	const old = `{"id":"c1","addr":"10.0.0.3:10080"}`
	want := ControllerRegistration{ID: "c1", Addr: "10.0.0.3:10080"}
	got, err := ParseControllerRegistration([]byte(old))
	if err != nil || got != want {
		t.Fatalf("decode %s: %+v, %v; want %+v", old, got, err, want)
	}
	if enc := string(got.Encode()); enc != old {
		t.Errorf("round trip of %s: %s", old, enc)
	}
}

// A value that is not a registration is an error, not a zero registration
// taken for a live one.
func TestParseRegistrationRefusesGarbage(t *testing.T) {
	for _, b := range []string{``, `{`, `[]`, `{"id":"n1","started":"yesterday"}`} {
		if r, err := ParseNodeRegistration([]byte(b)); err == nil {
			t.Errorf("node registration %q: %+v, want an error", b, r)
		}
		if b == `{"id":"n1","started":"yesterday"}` {
			continue // a controller registration has no started
		}
		if r, err := ParseControllerRegistration([]byte(b)); err == nil {
			t.Errorf("controller registration %q: %+v, want an error", b, r)
		}
	}
}

// ParseNodeRegistration keeps what it decoded before an error, as the
// readers that take what they can (the node list) always did.
func TestParseNodeRegistrationKeepsWhatItDecoded(t *testing.T) {
	r, err := ParseNodeRegistration([]byte(`{"id":"n1","addr":"a:1","started":5}`))
	if err == nil {
		t.Fatal("want an error for a numeric started")
	}
	if want := (NodeRegistration{ID: "n1", Addr: "a:1"}); !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v, want %+v", r, want)
	}
}
