package clustertest

import (
	"context"

	"github.com/sluice-streams/sluice/cluster"
)

// Keys lists every key in s, each before its children; a key whose
// children cannot be listed is listed without them.
func Keys(ctx context.Context, s cluster.Store) []string {
	var out []string
	var walk func(string)
	walk = func(k string) {
		kids, _ := s.List(ctx, k)
		for _, kv := range kids {
			out = append(out, kv.Key)
			walk(kv.Key)
		}
	}
	walk("")
	return out
}
