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
	return fmt.Sprintf("_sluice/handover/container-%d/%020d.bin", container, epoch)
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
