package protocol_test

import (
	"errors"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

const txn = "0f8fad5b-d9cb-469f-a165-70867728950e"

func TestValidateName(t *testing.T) {
	valid := []string{"a", "Z", "0", "my-scope", "my_stream.v2", "_internal", "..a", strings.Repeat("x", 255)}
	invalid := []string{"", ".", "..", "a/b", "a b", "é", "a#b", "a:b", strings.Repeat("x", 256), "a\x00"}
	for _, n := range valid {
		if err := protocol.ValidateName(n); err != nil {
			t.Errorf("ValidateName(%q): %v", n, err)
		}
	}
	for _, n := range invalid {
		if err := protocol.ValidateName(n); !errors.Is(err, protocol.ErrInvalidArgument) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalidArgument", n, err)
		}
	}
	if !protocol.IsInternalName("_system") || protocol.IsInternalName("system") {
		t.Error("IsInternalName")
	}
}

// TestValidateNameQuotesUTF8 checks that the character an error names is
// the one in the name, quoted as UTF-8 text: not one byte of it taken for
// a Latin-1 character ("Ã" for the first byte of "é"), and an invalid byte
// as an escape.
func TestValidateNameQuotesUTF8(t *testing.T) {
	cases := []struct{ name, want string }{
		{"aé", `character "é" at byte 1`},
		{"a日b", `character "日" at byte 1`},
		{"a\xffb", `character "\xff" at byte 1`},
		{"a\x00", `character "\x00" at byte 1`},
		{"a b", `character " " at byte 1`},
	}
	for _, tc := range cases {
		err := protocol.ValidateName(tc.name)
		if !errors.Is(err, protocol.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateName(%q) = %v, want an error saying %s", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "Ã") {
			t.Errorf("ValidateName(%q) = %v: a byte quoted as a Latin-1 character", tc.name, err)
		}
	}
}

func TestSegmentNames(t *testing.T) {
	if got := protocol.SegmentName("sc", "st", 12, 3); got != "sc/st/12.#epoch.3" {
		t.Fatalf("SegmentName = %q", got)
	}
	valid := []struct {
		s string
		q protocol.QualifiedName
	}{
		{"sc/st/0.#epoch.0", protocol.QualifiedName{Scope: "sc", Stream: "st"}},
		{"sc/st/12.#epoch.3", protocol.QualifiedName{Scope: "sc", Stream: "st", Number: 12, Epoch: 3}},
		{"_s/a.b-c/9223372036854775807.#epoch.1", protocol.QualifiedName{Scope: "_s", Stream: "a.b-c", Number: 1<<63 - 1, Epoch: 1}},
		{"sc/st/5.#epoch.2#transaction." + txn, protocol.QualifiedName{Scope: "sc", Stream: "st", Number: 5, Epoch: 2, Transaction: txn}},
	}
	for _, tt := range valid {
		q, err := protocol.ParseSegmentName(tt.s)
		if err != nil || q != tt.q {
			t.Errorf("ParseSegmentName(%q) = (%+v, %v), want %+v", tt.s, q, err, tt.q)
		}
		if q.String() != tt.s {
			t.Errorf("String() = %q, want %q", q.String(), tt.s)
		}
	}
	invalid := []string{
		"", "sc/st", "sc/st/1", "sc/st/1.#epoch.", "sc/st/.#epoch.1", "sc/st/01.#epoch.1", "sc/st/1.#epoch.01",
		"sc/st/-1.#epoch.0", "sc/st/+1.#epoch.0", "sc/st/1.#epoch.-1", "sc/st/9223372036854775808.#epoch.0",
		"/st/1.#epoch.0", "sc//1.#epoch.0", "sc/st/x/1.#epoch.0", "s c/st/1.#epoch.0", "../st/1.#epoch.0",
		"sc/st/1.#epoch.0#transaction.", "sc/st/1.#epoch.0#transaction." + strings.ToUpper(txn),
		"sc/st/1.#epoch.0#transaction.{" + txn + "}", "sc/st/1.#epoch.0#transaction." + txn + "x",
		"sc/st/1.#epoch.0#transaction." + strings.ReplaceAll(txn, "-", "") + "abcd",
		"sc/st/1.#epoch.0#transaction." + txn + "#transaction." + txn,
		"sc/st/1.#epoch.0 ", "sc/st/1.#epoch.0/",
		strings.Repeat("a", 1025),
	}
	for _, s := range invalid {
		if _, err := protocol.ParseSegmentName(s); !errors.Is(err, protocol.ErrInvalidArgument) {
			t.Errorf("ParseSegmentName(%q): %v, want ErrInvalidArgument", s, err)
		}
	}
}

func TestTransactionSegments(t *testing.T) {
	parent := protocol.SegmentName("sc", "st", 4, 1)
	tx := protocol.TransactionSegmentName(parent, txn)
	if tx != parent+"#transaction."+txn {
		t.Fatalf("TransactionSegmentName = %q", tx)
	}
	if got := protocol.ParentSegment(tx); got != parent {
		t.Errorf("ParentSegment(%q) = %q", tx, got)
	}
	if got := protocol.ParentSegment(parent); got != parent {
		t.Errorf("ParentSegment(%q) = %q", parent, got)
	}
	q, err := protocol.ParseSegmentName(tx)
	if err != nil || q.Parent().String() != parent {
		t.Errorf("Parent of %q: %v %v", tx, q.Parent(), err)
	}
	for _, n := range []int{1, 2, 7, 64, 1000} {
		if a, b := protocol.ContainerOf(tx, n), protocol.ContainerOf(parent, n); a != b {
			t.Errorf("containers=%d: transaction in %d, parent in %d", n, a, b)
		}
	}
}

// The container mapping is persistent cluster state: these values were
// computed once and must never change.
func TestContainerOfGolden(t *testing.T) {
	golden := []struct {
		segment    string
		containers int
		want       int
	}{
		{"scope/stream/0.#epoch.0", 4, 3},
		{"scope/stream/1.#epoch.0", 4, 2},
		{"scope/stream/0.#epoch.0", 16, 15},
		{"examples/sensors/17.#epoch.3", 64, 54},
		{"_system/_readergroups/2.#epoch.5", 1000, 528},
		{"", 7, 2},
		{"scope/stream/1.#epoch.0", 1, 0},
	}
	for _, g := range golden {
		if got := protocol.ContainerOf(g.segment, g.containers); got != g.want {
			t.Errorf("ContainerOf(%q, %d) = %d, want %d", g.segment, g.containers, got, g.want)
		}
		// Cross-check against the standard library's FNV-1a.
		h := fnv.New64a()
		h.Write([]byte(g.segment))
		if want := int(h.Sum64() % uint64(g.containers)); want != g.want {
			t.Errorf("golden value for %q differs from hash/fnv: %d", g.segment, want)
		}
	}
}

func FuzzParseSegmentName(f *testing.F) {
	f.Add("sc/st/0.#epoch.0")
	f.Add("sc/st/12.#epoch.3#transaction." + txn)
	f.Add("a/b/01.#epoch.1")
	f.Fuzz(func(t *testing.T, s string) {
		q, err := protocol.ParseSegmentName(s)
		if err != nil {
			if !errors.Is(err, protocol.ErrInvalidArgument) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if q.String() != s {
			t.Fatalf("%q parsed to %+v, prints %q", s, q, q.String())
		}
		if protocol.ValidateName(q.Scope) != nil || protocol.ValidateName(q.Stream) != nil || q.Number < 0 || q.Epoch < 0 {
			t.Fatalf("%q parsed to invalid %+v", s, q)
		}
		if protocol.ParentSegment(s) != q.Parent().String() {
			t.Fatalf("ParentSegment(%q) = %q, Parent() = %q", s, protocol.ParentSegment(s), q.Parent())
		}
		if protocol.ContainerOf(s, 13) != protocol.ContainerOf(q.Parent().String(), 13) {
			t.Fatalf("%q and its parent in different containers", s)
		}
	})
}
