package clustertest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
)

// Damager gives the record tests access to a backend's stored bytes,
// below the Store interface.
type Damager interface {
	// Damage replaces the stored bytes of key (the whole value as the
	// backend stores it: the record envelope, and for bbolt the version
	// inside it) with fn's result, and returns the store to go on with:
	// the same one, or, for a backend that must be closed to be written
	// behind its back, the store opened again, or the error of opening
	// it.
	Damage(t *testing.T, s cluster.Store, key string, fn func(raw []byte) []byte) (cluster.Store, error)
}

// RunRecordTests runs the tests of the record envelope (package cluster's
// EncodeRecord) against a backend: every one-byte change of a stored
// record is refused with an error that wraps cluster.ErrCorrupt and names
// the key (by Get and List of the key, or by opening the store again),
// never read as a changed value, and the other records stay readable.
// open is as for RunStoreTests; the Damager works on the store it opened.
func RunRecordTests(t *testing.T, open func(t *testing.T) (cluster.Store, Damager)) {
	t.Run("StoredRecordHasChecksum", func(t *testing.T) {
		s, d := open(t)
		const key = "scopes/s/streams/st"
		mustPut(t, s, key, `{"scalingPolicy":{"minSegments":1}}`)
		var raw []byte
		s, err := d.Damage(t, s, key, func(b []byte) []byte {
			raw = bytes.Clone(b)
			return b
		})
		if err != nil {
			t.Fatalf("reopen after an unchanged Damage: %v", err)
		}
		if len(raw) < cluster.RecordHeaderLen || raw[0] != cluster.RecordMagic || raw[1] != cluster.RecordVersion {
			t.Fatalf("stored bytes % x are not a record envelope", raw[:min(len(raw), 16)])
		}
		mustGet(t, s, key)
	})
	t.Run("EveryByteChangeRefused", func(t *testing.T) {
		s, d := open(t)
		const key = "scopes/s/streams/st"
		const value = `{"scalingPolicy":{"minSegments":1}}`
		mustPut(t, s, key, value)
		mustPut(t, s, "scopes/s/streams/other", "kept")
		var n int
		s, err := d.Damage(t, s, key, func(b []byte) []byte { n = len(b); return b })
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			var orig []byte
			s, err = d.Damage(t, s, key, func(b []byte) []byte {
				orig = bytes.Clone(b)
				b[i] ^= 0x01
				return b
			})
			if err != nil {
				wantCorrupt(t, "open", err, key)
			} else {
				kv, err := s.Get(testCtx(t), key)
				if err == nil {
					t.Fatalf("byte %d of %d changed: Get = %q, want ErrCorrupt", i, n, kv.Value)
				}
				wantCorrupt(t, "Get", err, key)
				_, err = s.List(testCtx(t), "scopes/s/streams")
				wantCorrupt(t, "List", err, key)
			}
			// Put the byte back: the store serves the record again.
			s, err = d.Damage(t, s, key, func([]byte) []byte { return orig })
			if err != nil {
				t.Fatalf("reopen after the damage was undone: %v", err)
			}
			if kv := mustGet(t, s, key); string(kv.Value) != value {
				t.Fatalf("after undoing the damage: %q", kv.Value)
			}
		}
		if kv := mustGet(t, s, "scopes/s/streams/other"); string(kv.Value) != "kept" {
			t.Fatalf("other record: %q", kv.Value)
		}
	})
}

func wantCorrupt(t *testing.T, what string, err error, key string) {
	t.Helper()
	if !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("%s: %v, want cluster.ErrCorrupt", what, err)
	}
	if !strings.Contains(err.Error(), `"`+key+`"`) {
		t.Fatalf("%s: error %q does not name the key %q", what, err, key)
	}
}
