package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
)

// TestConsume writes readings of three sensors (one with a gap, one with a
// repeat) and an event that is not a reading, then runs the consumer and
// checks the statistics it printed.
func TestConsume(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("demo", "sensors", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := client.New(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	w, err := cl.NewWriter(ctx, "demo", "sensors")
	if err != nil {
		t.Fatal(err)
	}
	write := func(sensor string, seq int64, temp float64) {
		ev, _ := json.Marshal(Reading{Sensor: sensor, Seq: seq, Time: time.Now(), TemperatureC: temp})
		if _, err := w.Write(ctx, sensor, ev); err != nil {
			t.Fatal(err)
		}
	}
	for seq := int64(0); seq < 4; seq++ {
		write("sensor-00", seq, 20+float64(seq)) // 20 21 22 23
		write("sensor-01", seq*2, 10)            // 0 2 4 6: three gaps
	}
	write("sensor-02", 0, 5)
	write("sensor-02", 0, 7) // a repeat
	if _, err := w.Write(ctx, "", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	stats, err := consume(ctx, config{Controller: d.URL, Stream: "demo/sensors", Idle: 500 * time.Millisecond}, &out)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Logf("printed:\n%s", got)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 5 || lines[0] != "10 readings from 3 sensors (and 1 other events)" {
		t.Fatalf("printed:\n%s", got)
	}
	for i, want := range [][]string{
		{"sensor-00", "4", "20.0", "21.50", "23.0", "3", "0", "0"},
		{"sensor-01", "4", "10.0", "10.00", "10.0", "6", "3", "0"},
		{"sensor-02", "2", "5.0", "6.00", "7.0", "0", "0", "1"},
	} {
		if f := strings.Fields(lines[2+i]); fmt.Sprint(f) != fmt.Sprint(want) {
			t.Fatalf("row %d = %v, want %v", i, f, want)
		}
	}
	if stats["sensor-01"].Gaps != 3 {
		t.Fatalf("stats %+v", stats["sensor-01"])
	}

	// -max stops after that many events.
	out.Reset()
	if _, err := consume(ctx, config{Controller: d.URL, Stream: "demo/sensors", Max: 3}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "3 readings from ") {
		t.Fatalf("-max 3 printed:\n%s", out.String())
	}
}
