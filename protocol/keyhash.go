package protocol

// KeyHash maps a routing key into the key space [0, 1):
//
//	h = FNV-1a 64 of the key's bytes (its UTF-8 text; offset basis
//	    14695981039346656037, prime 1099511628211)
//	h = fmix64(h): MurmurHash3's 64-bit finalizer,
//	    h ^= h>>33; h *= 0xff51afd7ed558ccd; h ^= h>>33;
//	    h *= 0xc4ceb9fe1a85ec53; h ^= h>>33
//	KeyHash = (h >> 11) / 2^53
//
// The finalizer matters: FNV-1a's top bits hardly change between keys that
// differ only in their last bytes ("k1", "k2"), so without it such keys
// would all land in one segment. A float64 holds 53 bits exactly, so the
// result is exact and always below 1.
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
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return float64(h>>11) / (1 << 53)
}
