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
	res, err := consume(ctx, config{Controller: d.URL, Stream: "demo/sensors", Readers: 3, Idle: 500 * time.Millisecond}, &out)
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
	if res.Stats["sensor-01"].Gaps != 3 {
		t.Fatalf("stats %+v", res.Stats["sensor-01"])
	}

	// The group left at its exact position: a second run reads nothing.
	out.Reset()
	if _, err := consume(ctx, config{Controller: d.URL, Stream: "demo/sensors", Readers: 2, Idle: 300 * time.Millisecond}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "0 readings from 0 sensors\n") {
		t.Fatalf("second run of the group printed:\n%s", out.String())
	}

	// -max stops after that many events (another group, from the head).
	out.Reset()
	if _, err := consume(ctx, config{Controller: d.URL, Stream: "demo/sensors", Group: "other", Readers: 3, Max: 3}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "3 readings from ") {
		t.Fatalf("-max 3 printed:\n%s", out.String())
	}
}

// TestConsumeReaderDies: three readers in a group over six sensors' readings
// in six segments; reader 1 dies after 150 readings (no leave, no last
// commit). The other two take its segments after the session timeout: every
// reading is counted, with no gap, and the only repeats are the dead
// reader's readings after its last commit, which is the bound the group
// gives (at least once, at most one commit interval's worth read twice).
func TestConsumeReaderDies(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("demo", "sensors", 6)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
	const sensors, perSensor = 6, 400
	for seq := int64(0); seq < perSensor; seq++ {
		for i := 0; i < sensors; i++ {
			sensor := fmt.Sprintf("sensor-%02d", i)
			ev, _ := json.Marshal(Reading{Sensor: sensor, Seq: seq, Time: time.Now(), TemperatureC: 20})
			if _, err := w.Write(ctx, sensor, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	res, err := consume(ctx, config{Controller: d.URL, Stream: "demo/sensors", Readers: 3, KillAfter: 150,
		SessionTimeout: time.Second, CommitInterval: 100 * time.Millisecond, Idle: 2500 * time.Millisecond}, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("printed:\n%s", out.String())
	t.Logf("per reader %v; %s died, replay %d", res.PerReader, res.Killed, res.Replay)
	if res.Killed == "" || res.PerReader[res.Killed] != 150 {
		t.Fatalf("the reader to kill read %d readings, want 150 (killed %q)", res.PerReader[res.Killed], res.Killed)
	}
	var repeats int64
	for i := 0; i < sensors; i++ {
		s := res.Stats[fmt.Sprintf("sensor-%02d", i)]
		if s == nil || s.LastSeq != perSensor-1 || s.Gaps != 0 || s.Count-s.Repeats != perSensor {
			t.Fatalf("sensor-%02d: %+v: want every reading 0..%d, no gap", i, s, perSensor-1)
		}
		repeats += s.Repeats
	}
	if repeats > res.Replay {
		t.Fatalf("%d readings read twice, more than the %d the dead reader returned after its last commit", repeats, res.Replay)
	}
	var others int64
	for id, n := range res.PerReader {
		if id != res.Killed {
			others += n
		}
	}
	if others+150 != sensors*perSensor+repeats {
		t.Fatalf("readers read %d + 150, want %d readings plus %d repeats", others, sensors*perSensor, repeats)
	}
}
