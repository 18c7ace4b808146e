package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// TestProduceFixed: with -seed the producer writes the same readings every
// time (sensors drawn from the seed, times from -start by -step), notes
// event time as it goes, and its final note (-final-note past the next
// reading's time) is in the stream's watermarks when it returns.
func TestProduceFixed(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(50*time.Millisecond, 10*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	read := func(stream string, n int) []Reading {
		cl, err := client.New(ctx, d.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		r, err := cl.NewReader(ctx, "demo", stream)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []Reading
		for range n {
			ev, err := r.ReadNext(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var rd Reading
			if err := json.Unmarshal(ev.Data, &rd); err != nil {
				t.Fatal(err)
			}
			out = append(out, rd)
		}
		return out
	}
	bySensor := func(rs []Reading) map[string][]Reading {
		m := map[string][]Reading{}
		for _, r := range rs {
			m[r.Sensor] = append(m[r.Sensor], r)
		}
		return m
	}
	var runs []map[string][]Reading
	for _, stream := range []string{"fixed1", "fixed2"} {
		cfg := config{Controller: d.URL, Stream: "demo/" + stream, Segments: 2, Sensors: 4, Rate: 5000, Count: 200,
			Timeout: 10 * time.Second, Seed: 42, Start: start, Step: 10 * time.Millisecond, NoteEvery: 50, FinalNote: time.Hour}
		if n, err := produce(ctx, cfg, io.Discard); err != nil || n != 200 {
			t.Fatalf("produce: %d, %v", n, err)
		}
		marks, err := d.Controller.Watermarks(ctx, "demo", stream, 0)
		if err != nil {
			t.Fatal(err)
		}
		final := start.Add(200 * 10 * time.Millisecond).Add(time.Hour)
		if len(marks) == 0 || marks[len(marks)-1].LowerTime != final.UnixMilli() {
			t.Fatalf("watermarks %+v: want the last at the final note %v", marks, final)
		}
		runs = append(runs, bySensor(read(stream, 200)))
	}
	// Per sensor (the order across sensors depends on the segments), the
	// same readings, at the fixed times, in seq order.
	if fmt.Sprint(runs[0]) != fmt.Sprint(runs[1]) {
		t.Fatalf("two runs with the same seed differ:\n%v\n%v", runs[0], runs[1])
	}
	var times []time.Time
	for _, rs := range runs[0] {
		for i, r := range rs {
			if r.Seq != int64(i) {
				t.Fatalf("%s: seq %d at %d", r.Sensor, r.Seq, i)
			}
			times = append(times, r.Time)
		}
	}
	if len(runs[0]) != 4 || len(times) != 200 {
		t.Fatalf("%d sensors, %d readings", len(runs[0]), len(times))
	}
	seen := map[time.Time]bool{}
	for _, tm := range times {
		off := tm.Sub(start)
		if off < 0 || off >= 2*time.Second || off%(10*time.Millisecond) != 0 || seen[tm] {
			t.Fatalf("reading time %v: want a distinct one of start + n*10ms, n < 200", tm)
		}
		seen[tm] = true
	}
}
