package protocol

import (
	"hash/fnv"
	"math"
	"strconv"
	"testing"
)

// TestKeyHashGolden pins KeyHash: the values are part of the data format
// (a key's segment), so a change here is a breaking change, never a fix.
func TestKeyHashGolden(t *testing.T) {
	tests := []struct {
		key  string
		fnv  uint64 // FNV-1a 64 of the key (before fmix64), from the published test vectors where there is one
		want float64
	}{
		{"", 0xcbf29ce484222325, 0.93676944839044},
		{"a", 0xaf63dc4c8601ec8c, 0.5102945176565711},
		{"b", 0xaf63df4c8601f1a5, 0.43126216727822997},
		{"0", 0xaf63ad4c86019caf, 0.7573878133052826},
		{"sensor-17", 0, 0.013665995692418997},
		{"日本", 0, 0.0710566827419764},
		{"key/with/slashes", 0, 0.492336971469305},
		{"The quick brown fox", 0, 0.09898298717288334},
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
		sum ^= sum >> 33
		sum *= 0xff51afd7ed558ccd
		sum ^= sum >> 33
		sum *= 0xc4ceb9fe1a85ec53
		sum ^= sum >> 33
		if want := float64(sum>>11) / (1 << 53); KeyHash(tt.key) != want {
			t.Errorf("KeyHash(%q) = %v, not the top 53 bits of fmix64(FNV-1a) %v", tt.key, KeyHash(tt.key), want)
		}
	}
}

// TestKeyHashSpreads checks that keys differing only in their last byte
// spread over the key space (plain FNV-1a's top bits do not).
func TestKeyHashSpreads(t *testing.T) {
	var quarters [4]int
	for i := range 400 {
		quarters[int(KeyHash("k"+strconv.Itoa(i))*4)]++
	}
	for q, n := range quarters {
		if n < 60 {
			t.Errorf("quarter %d holds %d of 400 keys: %v", q, n, quarters)
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
