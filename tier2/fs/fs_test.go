package fs_test

import (
	"testing"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

func newStorage(t *testing.T) *fs.Storage {
	t.Helper()
	s, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	tier2test.RunStorageTests(t, func(t *testing.T) tier2.Storage { return newStorage(t) })
}
