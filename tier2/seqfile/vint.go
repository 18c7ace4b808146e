package seqfile

import "errors"

// errVIntTruncated and errVIntTooLong are reported by decodeVLong; the
// callers wrap them into ErrCorrupt with the position.
var (
	errVIntTruncated = errors.New("truncated VInt")
	errVIntTooLong   = errors.New("VInt does not fit in 32 bits")
)

// appendVLong appends v in Hadoop's WritableUtils VLong encoding.
func appendVLong(b []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(b, byte(int8(v)))
	}
	first := -112
	if v < 0 {
		v = ^v
		first = -120
	}
	n := 0
	for t := v; t != 0; t >>= 8 {
		n++
	}
	b = append(b, byte(int8(first-n)))
	for i := n; i > 0; i-- {
		b = append(b, byte(v>>(uint(i-1)*8)))
	}
	return b
}

// vlongSize returns how many bytes the VLong starting with first takes,
// first byte included.
func vlongSize(first byte) int {
	f := int8(first)
	switch {
	case f >= -112:
		return 1
	case f < -120:
		return 1 + int(-120-f)
	default:
		return 1 + int(-112-f)
	}
}

// decodeVLong decodes the VLong at the start of b and returns it with the
// number of bytes it took.
func decodeVLong(b []byte) (int64, int, error) {
	if len(b) == 0 {
		return 0, 0, errVIntTruncated
	}
	n := vlongSize(b[0])
	if n == 1 {
		return int64(int8(b[0])), 1, nil
	}
	if len(b) < n {
		return 0, 0, errVIntTruncated
	}
	var u uint64
	for _, c := range b[1:n] {
		u = u<<8 | uint64(c)
	}
	if int8(b[0]) < -120 {
		u = ^u
	}
	return int64(u), n, nil
}

// decodeVInt is decodeVLong for values that must fit in an int32.
func decodeVInt(b []byte) (int32, int, error) {
	v, n, err := decodeVLong(b)
	if err != nil {
		return 0, 0, err
	}
	if v < -1<<31 || v > 1<<31-1 {
		return 0, 0, errVIntTooLong
	}
	return int32(v), n, nil
}
