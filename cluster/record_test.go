package cluster_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
)

// TestRecordRoundTrip: what EncodeRecord writes, DecodeRecord returns,
// under the same key, for empty, small and binary payloads.
func TestRecordRoundTrip(t *testing.T) {
	for _, payload := range [][]byte{nil, {}, []byte(`{"minSegments":1}`), {cluster.RecordMagic, 0, 0xff}, bytes.Repeat([]byte{7}, 1<<16)} {
		raw := cluster.EncodeRecord("scopes/s/streams/st", payload)
		if len(raw) != cluster.RecordHeaderLen+len(payload) || raw[0] != cluster.RecordMagic || raw[1] != cluster.RecordVersion {
			t.Fatalf("EncodeRecord(%q) = % x", payload, raw[:min(len(raw), 16)])
		}
		got, legacy, err := cluster.DecodeRecord("scopes/s/streams/st", raw)
		if err != nil || legacy || !bytes.Equal(got, payload) {
			t.Fatalf("DecodeRecord(EncodeRecord(%q)) = %q, %v, %v", payload, got, legacy, err)
		}
	}
}

// TestRecordEveryFlipDetected flips each bit of each byte of a record (the
// review's case: a stream's config whose minSegments 1 became 0) and
// requires ErrCorrupt naming the key, never a value.
func TestRecordEveryFlipDetected(t *testing.T) {
	const key = "scopes/s/streams/st"
	raw := cluster.EncodeRecord(key, []byte(`{"scalingPolicy":{"minSegments":1}}`))
	for i := range raw {
		for bit := range 8 {
			bad := bytes.Clone(raw)
			bad[i] ^= 1 << bit
			got, legacy, err := cluster.DecodeRecord(key, bad)
			if !errors.Is(err, cluster.ErrCorrupt) {
				t.Fatalf("byte %d bit %d flipped: got %q (legacy %v), %v; want ErrCorrupt", i, bit, got, legacy, err)
			}
			if !strings.Contains(err.Error(), `"`+key+`"`) {
				t.Fatalf("error %q does not name the key", err)
			}
		}
	}
}

// TestRecordUnderAnotherKey: a record moved to another key (a damaged
// key in the store's file) fails its check.
func TestRecordUnderAnotherKey(t *testing.T) {
	raw := cluster.EncodeRecord("scopes/a", []byte("v"))
	if _, _, err := cluster.DecodeRecord("scopes/b", raw); !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("record of scopes/a read as scopes/b: %v", err)
	}
}

// TestRecordLegacy: values written before the envelope (JSON, text,
// empty) are read as they are, flagged legacy; a short or unknown-version
// record with the magic byte is corrupt, not legacy.
func TestRecordLegacy(t *testing.T) {
	for _, raw := range [][]byte{nil, {}, []byte(`{"minSegments":0}`), []byte("node-1"), {0, 0, 0, 0, 0, 0, 0, 9}} {
		got, legacy, err := cluster.DecodeRecord("k", raw)
		if err != nil || !legacy || !bytes.Equal(got, raw) {
			t.Fatalf("legacy %q: %q, %v, %v", raw, got, legacy, err)
		}
	}
	for _, raw := range [][]byte{{cluster.RecordMagic}, {cluster.RecordMagic, cluster.RecordVersion, 0, 0, 0}, {cluster.RecordMagic, 2, 0, 0, 0, 0}} {
		if _, _, err := cluster.DecodeRecord("k", raw); !errors.Is(err, cluster.ErrCorrupt) {
			t.Fatalf("% x: %v, want ErrCorrupt", raw, err)
		}
	}
}

// FuzzDecodeRecord: DecodeRecord never panics; a record it accepts with a
// checksum is exactly what EncodeRecord produces for its payload; a legacy
// value comes back whole; any encoded record survives decoding, and any
// one-byte change of it is refused.
func FuzzDecodeRecord(f *testing.F) {
	f.Add("scopes/s", []byte(`{"a":1}`), uint16(0), byte(1))
	f.Add("k", cluster.EncodeRecord("k", []byte("v")), uint16(3), byte(0x80))
	f.Add("k", []byte{cluster.RecordMagic, cluster.RecordVersion}, uint16(1), byte(2))
	f.Add("", []byte{}, uint16(0), byte(0xff))
	f.Fuzz(func(t *testing.T, key string, raw []byte, at uint16, mask byte) {
		payload, legacy, err := cluster.DecodeRecord(key, raw)
		switch {
		case err != nil:
			if !errors.Is(err, cluster.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
		case legacy:
			if !bytes.Equal(payload, raw) || (len(raw) > 0 && raw[0] == cluster.RecordMagic) {
				t.Fatalf("legacy % x returned % x", raw, payload)
			}
		default:
			if !bytes.Equal(cluster.EncodeRecord(key, payload), raw) {
				t.Fatalf("accepted % x, which EncodeRecord does not produce", raw)
			}
		}

		enc := cluster.EncodeRecord(key, raw)
		got, legacy, err := cluster.DecodeRecord(key, enc)
		if err != nil || legacy || !bytes.Equal(got, raw) {
			t.Fatalf("round trip of % x: % x, %v, %v", raw, got, legacy, err)
		}
		if mask != 0 {
			enc[int(at)%len(enc)] ^= mask
			if _, _, err := cluster.DecodeRecord(key, enc); !errors.Is(err, cluster.ErrCorrupt) {
				t.Fatalf("byte %d of % x changed by 0x%02x: %v, want ErrCorrupt", int(at)%len(enc), raw, mask, err)
			}
		}
	})
}
