package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
)

// notedWriter is a writer w1 on a new stream sc/<stream> that wrote 5
// events, noted the time 1000 and flushed (the controller computes no
// watermarks and times writers out after a minute).
func notedWriter(t *testing.T, stream string) (*clienttest.Deployment, *client.Writer) {
	t.Helper()
	d := clienttest.Start(t, clienttest.WithWatermarks(-1, time.Minute))
	d.CreateStream("sc", stream, 1)
	c := newClient(t, d)
	w := wmWriter(t, c, stream, "w1")
	wmWrite(t, w, "k", 5)
	wmNote(t, w, 1000)
	if err := w.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return d, w
}

// TestReviewCloseAfterNoteTimeDoneCtx: Close's contract says that with a
// ctx already done it only stops, and that it returns Flush's error. A
// writer whose every event is acknowledged flushes with nil; after a
// NoteTime, Close(done ctx) must still return nil, not the failure of the
// controller call it added (the controller times the writer out anyway).
func TestReviewCloseAfterNoteTimeDoneCtx(t *testing.T) {
	_, w := notedWriter(t, "cl")
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Close(done); err != nil {
		t.Fatalf("Close(done ctx) of a flushed writer: %v", err)
	}
}

// TestReviewCloseAfterNoteTimeStreamDeleted: a writer that noted a time
// and whose events are all acknowledged; the stream is then sealed and
// deleted (which removes the writer records itself). Close used to
// succeed here and must still: there is nothing left to forget.
func TestReviewCloseAfterNoteTimeStreamDeleted(t *testing.T) {
	d, w := notedWriter(t, "cd")
	if err := d.Controller.SealStream(testCtx(t), "sc", "cd"); err != nil {
		t.Fatal(err)
	}
	if err := d.Controller.DeleteStream(testCtx(t), "sc", "cd"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(testCtx(t)); err != nil {
		t.Fatalf("Close of a flushed writer after its stream was deleted: %v", err)
	}
}
