package client_test

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestReviewNoteTimeWriterIDs: any writer id NewWriter accepts (1..200
// bytes of UTF-8) must work with NoteTime and Close's removal: the
// controller's route takes the id as one path segment. "." and "..",
// which no route can carry, are refused by NewWriter and
// api.ValidateWriterID.
func TestReviewNoteTimeWriterIDs(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(-1, time.Minute))
	d.CreateStream("sc", "ids", 1)
	c := newClient(t, d)
	for _, id := range []string{".", ".."} {
		if w, err := c.NewWriter(testCtx(t), "sc", "ids", client.WithWriterID(id)); err == nil {
			abandon(t, w)
			t.Errorf("NewWriter accepted writer id %q", id)
		}
		if api.ValidateWriterID(id) == nil {
			t.Errorf("api.ValidateWriterID accepted writer id %q", id)
		}
	}
	for _, id := range []string{"app/host-1", "...", ".a", "a b", "100%", "x?y#z"} {
		w := wmWriter(t, c, "ids", id)
		wmWrite(t, w, "k", 1)
		if err := w.NoteTime(testCtx(t), ms(1000)); err != nil {
			t.Errorf("writer id %q: NoteTime: %v", id, err)
			continue
		}
		if err := w.Close(testCtx(t)); err != nil {
			t.Errorf("writer id %q: Close: %v", id, err)
		}
	}
}
