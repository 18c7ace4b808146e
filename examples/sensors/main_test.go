package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
)

// TestProduce runs the producer against an in-process deployment and reads
// back what it wrote: every reading once, each sensor's in order.
func TestProduce(t *testing.T) {
	d := clienttest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	cfg := config{Controller: d.URL, Stream: "demo/sensors", Segments: 2, Sensors: 3, Rate: 1000, Count: 30, Timeout: 10 * time.Second}
	n, err := produce(ctx, cfg, &out)
	if err != nil || n != 30 {
		t.Fatalf("produce: %d, %v", n, err)
	}
	if !strings.HasPrefix(out.String(), "wrote 30 readings from 3 sensors to demo/sensors in ") {
		t.Fatalf("printed %q", out.String())
	}

	cl, err := client.New(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	r, err := cl.NewReader(ctx, "demo", "sensors")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	next := map[string]int64{}
	for range 30 {
		ev, err := r.ReadNext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var rd Reading
		if err := json.Unmarshal(ev.Data, &rd); err != nil {
			t.Fatalf("%q: %v", ev.Data, err)
		}
		if rd.Seq != next[rd.Sensor] {
			t.Fatalf("%s: seq %d, want %d", rd.Sensor, rd.Seq, next[rd.Sensor])
		}
		next[rd.Sensor]++
	}
	if len(next) != 3 || next["sensor-00"] != 10 || next["sensor-02"] != 10 {
		t.Fatalf("readings per sensor: %v", next)
	}

	// A second run continues on the existing stream.
	if n, err := produce(ctx, config{Controller: d.URL, Stream: "demo/sensors", Sensors: 1, Rate: 1000, Count: 2, Timeout: 10 * time.Second}, &out); err != nil || n != 2 {
		t.Fatalf("second produce: %d, %v", n, err)
	}
}
