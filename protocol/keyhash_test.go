package protocol

import (
	"hash/fnv"
	"math"
	"testing"
)

// TestKeyHashGolden pins KeyHash: the values are part of the data format
// (a key's segment), so a change here is a breaking change, never a fix.
func TestKeyHashGolden(t *testing.T) {
	tests := []struct {
		key  string
		fnv  uint64 // FNV-1a 64 of the key, from the published test vectors where there is one
		want float64
	}{
		{"", 0xcbf29ce484222325, 0.7966707284832713},
		{"a", 0xaf63dc4c8601ec8c, 0.6851175009560461},
		{"b", 0xaf63df4c8601f1a5, 0.6851176797699805},
		{"0", 0xaf63ad4c86019caf, 0.6851146995377405},
		{"sensor-17", 0, 0.296941213327783},
		{"日本", 0, 0.07076252755980683},
		{"key/with/slashes", 0, 0.7446423804163355},
		{"The quick brown fox", 0, 0.13849171521293813},
	}
	for _, tt := range tests {
		if got := KeyHash(tt.key); got != tt.want {
			t.Errorf("KeyHash(%q) = %v, want %v", tt.key, got, tt.want)
		}
		h := fnv.New64a()
		h.Write([]byte(tt.key))
		sum := h.Sum64()
		if tt.fnv != 0 && sum != tt.fnv {
			t.Errorf("FNV-1a(%q) = %#x, want %#x", tt.key, sum, tt.fnv)
		}
		if want := float64(sum>>11) / (1 << 53); KeyHash(tt.key) != want {
			t.Errorf("KeyHash(%q) = %v, not top 53 bits of FNV-1a %v", tt.key, KeyHash(tt.key), want)
		}
	}
}

func TestKeyHashRange(t *testing.T) {
	for _, k := range []string{"", "x", string(make([]byte, 1000)), "\xff\xff\xff"} {
		if h := KeyHash(k); h < 0 || h >= 1 || math.IsNaN(h) {
			t.Errorf("KeyHash(%q) = %v, outside [0,1)", k, h)
		}
	}
}
