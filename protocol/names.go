package protocol

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	// MaxNameLength is the longest scope or stream name.
	MaxNameLength = 255
	// MaxSegmentNameLength is the longest segment qualified name.
	MaxSegmentNameLength = 1024

	epochSep       = ".#epoch."
	transactionSep = "#transaction."
	uuidTextLength = 36
)

// ValidateName checks a scope or stream name: 1-255 characters of
// [A-Za-z0-9_.-], and not "." or ".." (names are path components in tier 2).
// Names that begin with '_' are valid but reserved for internal streams; see
// IsInternalName. The error wraps ErrInvalidArgument.
func ValidateName(name string) error {
	if len(name) == 0 || len(name) > MaxNameLength {
		return fmt.Errorf("%w: name %q: length %d not in 1..%d", ErrInvalidArgument, name, len(name), MaxNameLength)
	}
	if name == "." || name == ".." {
		return fmt.Errorf("%w: name %q is reserved", ErrInvalidArgument, name)
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			// Quote the whole UTF-8 character (or the one invalid byte),
			// not name[i] as a rune: that would show 0xC3, the first byte
			// of "é", as "Ã".
			_, size := utf8.DecodeRuneInString(name[i:])
			return fmt.Errorf("%w: name %q: character %q at byte %d not in [A-Za-z0-9_.-]", ErrInvalidArgument, name, name[i:i+size], i)
		}
	}
	return nil
}

// IsInternalName reports whether a scope or stream name is reserved for
// Sluice's internal streams (it begins with '_').
func IsInternalName(name string) bool { return strings.HasPrefix(name, "_") }

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// QualifiedName is a parsed segment name: scope/stream/N.#epoch.E, plus
// "#transaction.<uuid>" for a transaction's shadow segment.
type QualifiedName struct {
	Scope, Stream string
	Number, Epoch int64
	// Transaction is the transaction id in canonical UUID text (36
	// characters, lower-case hex), or "" for a stream segment.
	Transaction string
}

// SegmentName returns scope/stream/number.#epoch.epoch. It does not
// validate; see ParseSegmentName.
func SegmentName(scope, stream string, number, epoch int64) string {
	return QualifiedName{Scope: scope, Stream: stream, Number: number, Epoch: epoch}.String()
}

// TransactionSegmentName returns the shadow segment of transaction txn
// (canonical UUID text) for the given parent segment.
func TransactionSegmentName(parent, txn string) string {
	return parent + transactionSep + txn
}

// String returns the qualified name; ParseSegmentName(q.String()) == q for
// every q it returned.
func (q QualifiedName) String() string {
	b := make([]byte, 0, len(q.Scope)+len(q.Stream)+2+20+len(epochSep)+20+len(transactionSep)+len(q.Transaction))
	b = append(b, q.Scope...)
	b = append(b, '/')
	b = append(b, q.Stream...)
	b = append(b, '/')
	b = strconv.AppendInt(b, q.Number, 10)
	b = append(b, epochSep...)
	b = strconv.AppendInt(b, q.Epoch, 10)
	if q.Transaction != "" {
		b = append(b, transactionSep...)
		b = append(b, q.Transaction...)
	}
	return string(b)
}

// Parent returns q without its transaction: the stream segment.
func (q QualifiedName) Parent() QualifiedName {
	q.Transaction = ""
	return q
}

// ParseSegmentName parses and validates a segment name. Numbers are
// canonical non-negative decimals (no sign, no leading zero), so the
// mapping between names and QualifiedName is one to one. The error wraps
// ErrInvalidArgument.
func ParseSegmentName(s string) (QualifiedName, error) {
	var q QualifiedName
	bad := func(why string) (QualifiedName, error) {
		return QualifiedName{}, fmt.Errorf("%w: segment name %q: %s", ErrInvalidArgument, s, why)
	}
	if len(s) == 0 || len(s) > MaxSegmentNameLength {
		return bad("length not in 1.." + strconv.Itoa(MaxSegmentNameLength))
	}
	rest := s
	if i := strings.Index(rest, transactionSep); i >= 0 {
		q.Transaction = rest[i+len(transactionSep):]
		rest = rest[:i]
		if !IsCanonicalUUID(q.Transaction) {
			return bad("transaction id is not a canonical lower-case UUID")
		}
	}
	scope, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return bad("want scope/stream/N.#epoch.E")
	}
	stream, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return bad("want scope/stream/N.#epoch.E")
	}
	if err := ValidateName(scope); err != nil {
		return bad("scope: " + err.Error())
	}
	if err := ValidateName(stream); err != nil {
		return bad("stream: " + err.Error())
	}
	num, epoch, ok := strings.Cut(rest, epochSep)
	if !ok {
		return bad("want N.#epoch.E after the stream")
	}
	var err error
	if q.Number, err = parseCanonicalInt(num); err != nil {
		return bad("segment number: " + err.Error())
	}
	if q.Epoch, err = parseCanonicalInt(epoch); err != nil {
		return bad("epoch: " + err.Error())
	}
	q.Scope, q.Stream = scope, stream
	return q, nil
}

// ValidateSegmentName checks that ParseSegmentName accepts s.
func ValidateSegmentName(s string) error {
	_, err := ParseSegmentName(s)
	return err
}

func parseCanonicalInt(s string) (int64, error) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%q is not a canonical decimal", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a canonical decimal", s)
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// IsCanonicalUUID reports whether s is xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
// with lower-case hex digits: the form of a transaction id.
func IsCanonicalUUID(s string) bool {
	if len(s) != uuidTextLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// ParentSegment returns the parent of a transaction segment (the name
// before "#transaction."), or name itself for any other name.
func ParentSegment(name string) string {
	if i := strings.Index(name, transactionSep); i >= 0 {
		return name[:i]
	}
	return name
}

// ContainerOf returns the container, in [0, containers), that owns segment:
// FNV-1a 64-bit of the bytes of ParentSegment(segment), modulo containers
// (as unsigned 64-bit integers). A transaction segment therefore lands in
// its parent's container. The hash is part of the cluster's persistent
// layout: never change it. It panics if containers < 1.
func ContainerOf(segment string, containers int) int {
	if containers < 1 {
		panic("protocol: ContainerOf: containers must be >= 1")
	}
	return int(fnv1a64(ParentSegment(segment)) % uint64(containers))
}

// fnv1a64 is FNV-1a, 64-bit (offset basis 14695981039346656037, prime
// 1099511628211), the same as hash/fnv's New64a without the allocation.
func fnv1a64(s string) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}
