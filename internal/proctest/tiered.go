package proctest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
)

// WriteTiered creates scope (if missing) and stream with segments fixed
// segments at the controller ctl, writes evs through the client library
// (routing key "key<i%7>"), and waits until every byte is in tier 2 (the
// stream's StreamTier: nothing waiting, something tiered), failing t
// after timeout. For tests that read tier 2 afterwards (Hadoop, Spark,
// the heads).
func WriteTiered(t testing.TB, ctl *ctlclient.Client, scope, stream string, segments int, evs [][]byte, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := ctl.CreateScope(ctx, scope); err != nil && !errors.Is(err, ctlclient.ErrExists) {
		t.Fatal(err)
	}
	if _, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: scope, StreamName: stream,
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: int32(segments)}}); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(ctx, ctl.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	w, err := cl.NewWriter(ctx, scope, stream)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if _, err := w.Write(ctx, fmt.Sprint("key", i%7), ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	poll := time.NewTicker(20 * time.Millisecond) // polling the controller's view of tier 2
	defer poll.Stop()
	for {
		st, err := ctl.StreamTier(ctx, scope, stream)
		if err == nil && st.UntieredBytes == 0 && st.TieredBytes > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s/%s not all in tier 2 after %v: %+v, %v", scope, stream, timeout, st, err)
		case <-poll.C:
		}
	}
}
