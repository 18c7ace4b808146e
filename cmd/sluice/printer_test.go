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
