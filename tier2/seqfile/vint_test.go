package seqfile

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"testing"
)

func TestVLongKnownEncodings(t *testing.T) {
	// Encodings worked out from Hadoop's WritableUtils rules.
	cases := []struct {
		v   int64
		hex string
	}{
		{0, "00"}, {1, "01"}, {127, "7f"}, {-1, "ff"}, {-112, "90"},
		{128, "8f80"}, {255, "8fff"}, {256, "8e0100"}, {-113, "8770"},
		{-256, "87ff"}, {-257, "860100"}, {1000000, "8d0f4240"},
		{math.MaxInt64, "887fffffffffffffff"}, {math.MinInt64, "807fffffffffffffff"},
	}
	for _, c := range cases {
		got := hex.EncodeToString(appendVLong(nil, c.v))
		if got != c.hex {
			t.Errorf("appendVLong(%d) = %s, want %s", c.v, got, c.hex)
		}
		b, _ := hex.DecodeString(c.hex)
		v, n, err := decodeVLong(append(b, 0xaa))
		if err != nil || v != c.v || n != len(b) {
			t.Errorf("decodeVLong(%s) = %d, %d, %v; want %d, %d", c.hex, v, n, err, c.v, len(b))
		}
	}
}

func TestVLongRoundTripAndTruncation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		v := int64(rng.Uint64()) >> rng.IntN(64)
		b := appendVLong(nil, v)
		got, n, err := decodeVLong(b)
		if err != nil || got != v || n != len(b) {
			t.Fatalf("round trip %d: got %d, %d, %v (bytes %x)", v, got, n, err, b)
		}
		if len(b) > 1 {
			if _, _, err := decodeVLong(b[:len(b)-1]); err == nil {
				t.Fatalf("truncated %x decoded", b)
			}
		}
	}
	if _, _, err := decodeVInt(appendVLong(nil, 1<<31)); err == nil {
		t.Fatal("decodeVInt accepted 2^31")
	}
	if !bytes.Equal(appendVLong(nil, -1<<31), []byte{0x84, 0x7f, 0xff, 0xff, 0xff}) {
		t.Fatalf("min int32 = %x", appendVLong(nil, -1<<31))
	}
}
