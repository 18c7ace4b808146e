package container

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
	"github.com/sluice-streams/sluice/node/wal"
	"github.com/sluice-streams/sluice/protocol"
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

// TestRestartAfterDiskFull fills the disk under a container (a quota of
// 256 KiB, far less than one log file), stops it, frees 64 KiB and
// restarts it: every acknowledged event is there, and it takes appends
// again.
func TestRestartAfterDiskFull(t *testing.T) {
	dir := t.TempDir()
	efs := vfstest.New(vfs.Default)
	efs.SetFreeSpace(256 << 10)
	cfg := Config{Dir: dir, FS: efs, CheckpointBytes: 64 << 10}
	c, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	var acked []string
	for i := 1; ; i++ {
		event := fmt.Sprintf("%06d%s", i, strings.Repeat("e", 994))
		_, err := c.Append(Append{Segment: seg, Writer: "w", EventNumber: int64(i), EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: block(event)})
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append %d on a full disk: %v, want ENOSPC", i, err)
			}
			break
		}
		acked = append(acked, event)
	}
	c.Close() // fails: the log failed, and there is no room for a checkpoint
	if len(acked) < 100 {
		t.Fatalf("only %d events fit", len(acked))
	}
	efs.AddFreeSpace(64 << 10)
	c = open(t, cfg)
	got := readAll(t, c, seg, 0)
	if len(got) != len(acked) || strings.Join(got, ",") != strings.Join(acked, ",") {
		t.Fatalf("after the restart the segment holds %d events, %d were acknowledged", len(got), len(acked))
	}
	appendEvents(t, c, seg, "w", int64(len(acked)+1), "after")
}
