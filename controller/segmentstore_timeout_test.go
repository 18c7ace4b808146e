package controller

import (
	"testing"
	"time"
)

// Every NodeSegments operation ends after CallTimeout, so a node that
// accepts connections and never answers fails the call (and the workflow
// step or retention pass that needs it) instead of holding it for ever.
func TestNodeSegmentsCallTimeout(t *testing.T) {
	n := NewNodeSegments(StaticLocator(hungNode(t)))
	n.CallTimeout = 200 * time.Millisecond
	t.Cleanup(func() { n.Close() })
	ctx := ctxT(t)
	for name, call := range map[string]func() error{
		"GetSegmentInfo":  func() error { _, err := n.GetSegmentInfo(ctx, "sc/st/0.#epoch.0"); return err },
		"TruncateSegment": func() error { return n.TruncateSegment(ctx, "sc/st/0.#epoch.0", 10) },
		"SealSegment":     func() error { _, err := n.SealSegment(ctx, "sc/st/0.#epoch.0"); return err },
	} {
		start := time.Now()
		err := call()
		if err == nil {
			t.Fatalf("%s on a node that never answers: no error", name)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s took %v with a CallTimeout of 200ms", name, d)
		}
	}
}
