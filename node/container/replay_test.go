package container

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

// comparable returns a container's durable state without the fields that
// depend on when it was applied.
func durableState(c *Container) checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := c.mu.st.snapshotLocked(0)
	cp.Time = 0
	for i := range cp.Segments {
		cp.Segments[i].Modified = 0
		cp.Segments[i].UntieredSince = 0
	}
	return cp
}

// TestReplayAndCheckpointAgreeWithLiveState runs random operations and
// checks that the state rebuilt by replaying the whole log, and the state
// loaded from a checkpoint plus the log after it, both equal the live one.
func TestReplayAndCheckpointAgreeWithLiveState(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			dir := t.TempDir()
			c := open(t, Config{Dir: dir, WALFileSize: 4096, CheckpointBytes: -1})
			names := make([]string, 6)
			for i := range names {
				names[i] = protocol.SegmentName("sc", "st", int64(i), 0)
			}
			txn := func(i int) string {
				return protocol.TransactionSegmentName(names[i], fmt.Sprintf("00000000-0000-0000-0000-%012d", rng.Intn(3)))
			}
			events := 0
			for op := 0; op < 400; op++ {
				if op == 200 {
					if err := c.Checkpoint(); err != nil {
						t.Fatal(err)
					}
				}
				i := rng.Intn(len(names))
				switch rng.Intn(10) {
				case 0:
					c.Create(names[i], map[string]int64{"a": int64(op)})
				case 1:
					c.Create(txn(i), nil)
				case 2, 3, 4:
					events++
					c.Append(Append{Segment: names[i], Writer: fmt.Sprint("w", rng.Intn(3)), EventNumber: int64(rng.Intn(events + 1)),
						EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset, Data: block(fmt.Sprint("e", op))})
				case 5:
					t := txn(i)
					c.Append(Append{Segment: t, EventCount: 1, ExpectedOffset: -1, Data: block("t")})
					c.Seal(t)
					c.Merge(names[i], t)
				case 6:
					if info, err := c.Info(names[i]); err == nil && info.Length > 0 {
						c.Truncate(names[i], rng.Int63n(info.Length+1))
					}
				case 7:
					c.UpdateAttributes(names[i], []protocol.AttributeUpdate{{Key: "k", Kind: protocol.ReplaceIfGreater, Value: int64(op)}})
				case 8:
					if rng.Intn(4) == 0 {
						c.Seal(names[i])
					}
				case 9:
					if rng.Intn(4) == 0 {
						c.Delete(names[i])
					}
				}
			}
			live := durableState(c)
			c.mu.Lock()
			c.mu.failed = fmt.Errorf("test: skip the closing checkpoint")
			c.mu.Unlock()
			c.Close()

			// From the checkpoint taken half way plus the log after it.
			withCkpt := open(t, Config{Dir: dir})
			if got := durableState(withCkpt); !reflect.DeepEqual(got, live) {
				t.Fatalf("state from checkpoint + replay differs from the live state\n got %+v\nwant %+v", got, live)
			}
			withCkpt.Close()
			// From the whole log: drop every checkpoint.
			names2, _ := os.ReadDir(dir)
			for _, e := range names2 {
				if filepath.Ext(e.Name()) == ckptSuffix {
					os.Remove(filepath.Join(dir, e.Name()))
				}
			}
			if got := durableState(open(t, Config{Dir: dir})); !reflect.DeepEqual(got, live) {
				t.Fatalf("state from full replay differs from the live state")
			}
		})
	}
}
