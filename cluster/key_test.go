package cluster_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/clustertest"
)

func TestCheckKey(t *testing.T) {
	for _, k := range []string{"a", "a/b", "scopes/s1/streams/st", "a.b", "..a", "a..", "_x/-y/~z", "ü/名前", "a b"} {
		if err := cluster.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v, want nil", k, err)
		}
	}
	for _, k := range append(clustertest.InvalidKeys, "a\x7f", "a\u0085b") {
		if err := cluster.CheckKey(k); !errors.Is(err, cluster.ErrInvalidKey) {
			t.Errorf("CheckKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
}

func TestParents(t *testing.T) {
	for key, want := range map[string][]string{
		"a":     nil,
		"a/b":   {"a"},
		"a/b/c": {"a", "a/b"},
	} {
		if got := cluster.Parents(key); !slices.Equal(got, want) {
			t.Errorf("Parents(%q) = %q, want %q", key, got, want)
		}
	}
}
