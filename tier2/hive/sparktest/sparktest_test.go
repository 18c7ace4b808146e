package sparktest

import (
	"reflect"
	"testing"
)

func TestStatements(t *testing.T) {
	script := "-- a comment\nCREATE TABLE `t` (\n  `x` STRING\n)\nLOCATION 'file:///a;b';\n\n" +
		"ALTER TABLE `t` ADD PARTITION (`segment`=0) LOCATION 'x';\n-- MSCK REPAIR TABLE `t`;\n\nCREATE VIEW v AS\nSELECT 1\nFROM t;\n"
	want := []string{
		"CREATE TABLE `t` (\n  `x` STRING\n)\nLOCATION 'file:///a;b'",
		"ALTER TABLE `t` ADD PARTITION (`segment`=0) LOCATION 'x'",
		"CREATE VIEW v AS\nSELECT 1\nFROM t",
	}
	if got := Statements(script); !reflect.DeepEqual(got, want) {
		t.Errorf("Statements =\n%q\nwant\n%q", got, want)
	}
}

func TestDecode(t *testing.T) {
	res, err := decode([]byte(`{"q": [[{"hex": "00ff0a"}, null, "s", 3, true]]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Result{"q": {{[]byte{0, 0xff, '\n'}, nil, "s", float64(3), true}}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("decode = %#v, want %#v", res, want)
	}
	if _, err := decode([]byte(`{"q": [[{"hex": "zz"}]]}`)); err == nil {
		t.Error("decode of a bad hex cell: no error")
	}
}
