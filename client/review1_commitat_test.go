package client_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
)

// TestReviewCommitAtAfterWriterClose: a transaction committed with a time
// after the Writer that began it was closed reports that time for the
// closed writer; nothing removes it again, so the closed writer holds the
// stream's watermarks back until the writer timeout, against "a closed
// writer never holds time back" (docs/ARCHITECTURE.md). Either CommitAt
// refuses to report for a closed writer, or the report must not count.
func TestReviewCommitAtAfterWriterClose(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(-1, time.Hour))
	d.CreateStream("sc", "ca", 1)
	c := newClient(t, d)
	ctx := testCtx(t)
	step := func() {
		t.Helper()
		if err := d.Service.WatermarkStep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tw := wmWriter(t, c, "ca", "tw")
	txn, err := tw.BeginTxn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Write(ctx, "k", []byte("e")); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(ctx); err != nil {
		t.Fatal(err)
	}
	commitErr := txn.CommitAt(ctx, ms(5000))
	if !errors.Is(commitErr, client.ErrTimeNotReported) {
		t.Errorf("CommitAt after its Writer's Close: %v, want ErrTimeNotReported", commitErr)
	}

	other := wmWriter(t, c, "ca", "other")
	wmWrite(t, other, "k", 1)
	wmNote(t, other, 9000)
	step()
	wmWrite(t, other, "k", 1)
	wmNote(t, other, 10000)
	step()
	if w, ok := wmLatest(t, d, "ca"); !ok || w.LowerTime != 10000 {
		t.Fatalf("CommitAt after its Writer's Close returned %v; the only live writer noted 10000, newest watermark %+v (ok %v): the closed writer holds time back", commitErr, w, ok)
	}
}
