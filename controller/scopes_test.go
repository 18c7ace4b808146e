package controller

import (
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/protocol/api"
)

// TestDeleteScopeWithReaderGroups: a scope whose streams are gone but that
// still has reader groups is not deleted, and the error names the groups
// rather than blaming a stream being created; once they are deleted, the
// scope is.
func TestDeleteScopeWithReaderGroups(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	ctx := ctxT(t)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, fixed("sc", "st", 1))
	must(t, err)
	for _, g := range []string{"billing", "audit"} {
		_, err := s.CreateReaderGroup(ctx, "sc", api.ReaderGroupConfig{GroupName: g, Streams: []string{"sc/st"}, State: []byte(`{}`)})
		must(t, err)
	}
	must(t, s.SealStream(ctx, "sc", "st"))
	must(t, s.DeleteStream(ctx, "sc", "st"))

	err = s.DeleteScope(ctx, "sc")
	wantErr(t, "delete a scope with reader groups", err, ErrConflict)
	if want := "scope sc has reader groups: delete them first (audit, billing)"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to say %q", err, want)
	}
	must(t, s.DeleteReaderGroup(ctx, "sc", "billing"))
	err = s.DeleteScope(ctx, "sc")
	if err == nil || !strings.Contains(err.Error(), "scope sc has reader groups: delete them first (audit)") {
		t.Fatalf("with one group left: err = %v", err)
	}
	must(t, s.DeleteReaderGroup(ctx, "sc", "audit"))
	must(t, s.DeleteScope(ctx, "sc"))
	if _, err := s.GetScope(ctx, "sc"); !strings.Contains(err.Error(), "not found") {
		t.Fatalf("scope after delete: %v", err)
	}
}
