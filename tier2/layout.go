package tier2

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// ChunkExt is the file extension of a chunk.
const ChunkExt = ".seq"

// tmpPrefix starts a chunk's name while it is written (Hadoop and Hive
// skip names starting with '_').
const tmpPrefix = "_tmp."

// StreamDir is the directory of a stream's chunks.
func StreamDir(scope, stream string) string { return scope + "/" + stream }

// SegmentDir is the directory of one segment's chunks.
func SegmentDir(scope, stream string, segment int64) string {
	return fmt.Sprintf("%s/%s/segment=%d", scope, stream, segment)
}

// ChunkPath is where the chunk starting at firstOffset lives.
func ChunkPath(scope, stream string, segment, firstOffset int64) string {
	return SegmentDir(scope, stream, segment) + "/" + ChunkName(firstOffset)
}

// ChunkName is the base name of the chunk starting at firstOffset.
func ChunkName(firstOffset int64) string { return fmt.Sprintf("%020d%s", firstOffset, ChunkExt) }

// TempChunkPath is the name a chunk is written under before its rename.
func TempChunkPath(scope, stream string, segment, firstOffset int64) string {
	return SegmentDir(scope, stream, segment) + "/" + tmpPrefix + ChunkName(firstOffset)
}

// HandoverPath is where the owner of a container leaves it for the next
// owner when it releases it under epoch (a hand-over; package
// node/container). The leading '_' keeps Hadoop and Hive out.
func HandoverPath(container int, epoch int64) string {
	return HandoverDir(container) + "/" + fmt.Sprintf("%020d.bin", epoch)
}

// HandoverDir holds a container's hand-overs (HandoverPath).
func HandoverDir(container int) string {
	return fmt.Sprintf("_sluice/handover/container-%d", container)
}

// ParseHandoverName returns the epoch of a hand-over's base name; ok is
// false for anything else.
func ParseHandoverName(name string) (epoch int64, ok bool) {
	digits, found := strings.CutSuffix(name, ".bin")
	if !found {
		return 0, false
	}
	return parseDigits(digits)
}

// RecoveryDir holds a container's recovery records (RecoveryPath).
func RecoveryDir(container int) string {
	return fmt.Sprintf("_sluice/recovery/container-%d", container)
}

// RecoveryPath is where the owner of a container under epoch keeps its
// recovery record number seq (package node/container, "recovery"): the
// container's metadata as of what tier 2 holds, from which a node that
// lost its disk rebuilds it. Names sort by (epoch, seq).
func RecoveryPath(container int, epoch int64, seq uint64) string {
	return RecoveryDir(container) + "/" + fmt.Sprintf("%020d-%020d.bin", epoch, seq)
}

// ParseRecoveryName returns the epoch and sequence number of a recovery
// record's base name; ok is false for anything else (temporaries
// included).
func ParseRecoveryName(name string) (epoch int64, seq uint64, ok bool) {
	digits, found := strings.CutSuffix(name, ".bin")
	if !found || len(digits) != 41 || digits[20] != '-' {
		return 0, 0, false
	}
	e, ok := parseDigits(digits[:20])
	if !ok {
		return 0, 0, false
	}
	q, ok := parseDigits(digits[21:])
	if !ok {
		return 0, 0, false
	}
	return e, uint64(q), true
}

// parseDigits parses exactly 20 decimal digits (no sign: one name, one
// number) as a non-negative int64.
func parseDigits(digits string) (int64, bool) {
	if len(digits) != 20 || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// ParseChunkName returns the first offset of a chunk's base name; ok is
// false for anything else (temporaries included).
func ParseChunkName(name string) (firstOffset int64, ok bool) {
	digits, found := strings.CutSuffix(name, ChunkExt)
	if !found || len(digits) != 20 || strings.Trim(digits, "0123456789") != "" {
		return 0, false // a sign would let two names mean one offset
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// IsTemp reports whether a base name is a chunk still being written.
func IsTemp(name string) bool { return strings.HasPrefix(name, tmpPrefix) }

// CheckPath validates a relative storage path (see the package doc).
func CheckPath(p string) error {
	if p == "" {
		return nil // the root, for List and RemoveAll
	}
	if strings.HasPrefix(p, "/") || path.Clean(p) != p || strings.Contains(p, "\\") {
		return fmt.Errorf("%w: %q", ErrInvalidPath, p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == "." || el == ".." || el == "" || strings.ContainsAny(el, "#:") {
			return fmt.Errorf("%w: %q", ErrInvalidPath, p)
		}
	}
	return nil
}
