package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestPrinterTable(t *testing.T) {
	var buf bytes.Buffer
	p, err := newPrinter(&buf, formatTable)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Print(output{
		Columns: []string{"SCOPE", "STREAMS"},
		Rows:    [][]string{{"a", "1"}, {"longer-name", "22"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "SCOPE        STREAMS\n" +
		"a            1\n" +
		"longer-name  22\n"
	if buf.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", buf.String(), want)
	}
}

func TestPrinterJSONFromRows(t *testing.T) {
	var buf bytes.Buffer
	p, err := newPrinter(&buf, formatJSON)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Print(output{
		Columns: []string{"SCOPE", "STREAMS"},
		Rows:    [][]string{{"a", "1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]string
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	if len(got) != 1 || got[0]["scope"] != "a" || got[0]["streams"] != "1" {
		t.Fatalf("got %v", got)
	}
}

func TestPrinterJSONValue(t *testing.T) {
	var buf bytes.Buffer
	p, _ := newPrinter(&buf, formatJSON)
	if err := p.Print(output{JSON: map[string]int{"n": 3}}); err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || got["n"] != 3 {
		t.Fatalf("got %v (%v) from %s", got, err, buf.String())
	}
}

func TestPrinterUnknownFormat(t *testing.T) {
	if _, err := newPrinter(&bytes.Buffer{}, "yaml"); err == nil {
		t.Fatal("want an error for an unknown format")
	}
}

func TestCamelKey(t *testing.T) {
	for col, want := range map[string]string{
		"SCOPE": "scope", "BYTES_BEHIND": "bytesBehind", "LAST_SEEN": "lastSeen", "TIERED TO": "tieredTo",
		"TIER-2 ERROR": "tier2Error", "TIER 2": "tier2", "event size": "eventSize", "MB/s": "mbS",
	} {
		if got := camelKey(col); got != want {
			t.Errorf("camelKey(%q) = %q, want %q", col, got, want)
		}
	}
}

func TestPrinterDone(t *testing.T) {
	var table, js bytes.Buffer
	pt, _ := newPrinter(&table, formatTable)
	pj, _ := newPrinter(&js, formatJSON)
	v := map[string]any{"stream": "s/t", "sealed": true}
	if err := pt.done("sealed stream s/t", v); err != nil || table.String() != "sealed stream s/t\n" {
		t.Fatalf("table: %v %q", err, table.String())
	}
	var got map[string]any
	if err := pj.done("sealed stream s/t", v); err != nil || json.Unmarshal(js.Bytes(), &got) != nil || got["sealed"] != true {
		t.Fatalf("json: %v %q", err, js.String())
	}
}
