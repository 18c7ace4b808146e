package tier2test

import (
	"testing"

	"github.com/sluice-streams/sluice/tier2"
)

func TestMemConformance(t *testing.T) {
	RunStorageTests(t, func(t *testing.T) tier2.Storage {
		s := NewMem()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
