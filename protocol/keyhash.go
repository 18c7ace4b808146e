package protocol

// KeyHash maps a routing key into the key space [0, 1): the top 53 bits of
// the FNV-1a 64-bit hash of the key's bytes (its UTF-8 text; offset basis
// 14695981039346656037, prime 1099511628211), divided by 2^53. A float64
// holds 53 bits exactly, so the result is exact and always below 1.
//
// The event of key k goes to the active segment whose range [low, high)
// holds KeyHash(k). Like ContainerOf, the hash decides where data lives: it
// is part of the data format and must never change.
func KeyHash(key string) float64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime64
	}
	return float64(h>>11) / (1 << 53)
}
