package client_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
)

// BenchmarkWriterThroughput writes 1 KiB events through one Writer to a
// stream of 1 and 4 segments of an in-process deployment, as `sluice bench
// write` does: one goroutine writes as fast as Write returns, another
// waits for the acknowledgements in write order.
//
//	go test -run '^$' -bench WriterThroughput -benchtime 2s ./client/
func BenchmarkWriterThroughput(b *testing.B) {
	for _, segs := range []int{1, 4} {
		b.Run(fmt.Sprintf("segments=%d", segs), func(b *testing.B) {
			d := clienttest.Start(b)
			stream := fmt.Sprintf("bench%d", segs)
			d.CreateStream("bench", stream, segs)
			ctx := context.Background()
			c, err := client.New(ctx, d.URL)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			w, err := c.NewWriter(ctx, "bench", stream)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close(ctx)
			event := make([]byte, 1024)
			for i := range event {
				event[i] = byte('a' + i%26)
			}
			acks := make(chan *client.Ack, 1<<14)
			errc := make(chan error, 1)
			go func() {
				var first error
				for a := range acks {
					if err := a.Err(); err != nil && first == nil {
						first = err
					}
				}
				errc <- first
			}()
			b.SetBytes(int64(len(event)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a, err := w.Write(ctx, "", event)
				if err != nil {
					b.Fatal(err)
				}
				acks <- a
			}
			close(acks)
			if err := <-errc; err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
		})
	}
}
