package boltstore_test

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/sluice-streams/sluice/cluster/boltstore"
)

// BenchmarkOpen measures what the verified open costs at each start,
// next to a plain bbolt open of the same file (same run): the page
// bounds, bbolt's check and every record's checksum.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		path, _ := fixture(b, n)
		b.Run(fmt.Sprintf("verified/keys=%d", n), func(b *testing.B) {
			for b.Loop() {
				s, err := boltstore.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
		b.Run(fmt.Sprintf("bbolt/keys=%d", n), func(b *testing.B) {
			for b.Loop() {
				db, err := bolt.Open(path, 0o600, nil)
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
			}
		})
	}
}
