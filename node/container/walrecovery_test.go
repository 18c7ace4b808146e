package container

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/node/wal"
)

// TestDamageAfterACleanStopIsRefusedUntouched: a clean stop checkpoints
// every record, so damage to the last one afterwards is damage to
// acknowledged data. Open refuses, naming the log file and the damaged
// record's offset, and leaves the file as it was (it used to zero the
// record as a torn tail and then refuse because the checkpoint was ahead
// of the log, naming no file).
func TestDamageAfterACleanStopIsRefusedUntouched(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{Dir: dir, CheckpointBytes: -1})
	c.Create(seg, nil)
	appendEvents(t, c, seg, "w", 1, "a")
	appendEvents(t, c, seg, "w", 2, "the-last-event")
	if err := c.Close(); err != nil { // the closing checkpoint covers every record
		t.Fatal(err)
	}
	name := filepath.Join(dir, "wal", "0000000000000001.wal")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.LastIndex(b, []byte("the-last-event"))
	if at < 0 {
		t.Fatal("the last event is not in the log file")
	}
	b[at] ^= 1
	os.WriteFile(name, b, 0o644)
	_, err = Open(Config{Dir: dir})
	var ce *wal.CorruptError
	if !errors.Is(err, wal.ErrCorrupt) || !errors.As(err, &ce) || ce.File != name || ce.Offset <= wal.FileHeaderSize || ce.Offset > int64(at) ||
		!strings.Contains(err.Error(), fmt.Sprint("offset ", ce.Offset)) {
		t.Fatalf("Open after damage to the last record of a cleanly stopped log = %v", err)
	}
	after, _ := os.ReadFile(name)
	if !bytes.Equal(after, b) {
		t.Fatal("the refused recovery changed the log file")
	}
}
