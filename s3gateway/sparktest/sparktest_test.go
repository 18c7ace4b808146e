package sparktest

import (
	"reflect"
	"testing"
	"time"
)

func TestDecode(t *testing.T) {
	res, timings, err := decode([]byte(`{"seq": {"records": [[0, "00ff0a"], [13, ""]]},
		"files": {"files": [["s3a://b/k", 3, 1764547200, "616263"]]},
		"bad": {"error": "java.nio.file.AccessDeniedException: x\nS3Exception: (Status Code: 403)"},
		"_timings": [["session", 9.5]]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		"seq":   {Records: []Record{{0, []byte{0, 0xff, '\n'}}, {13, []byte{}}}},
		"files": {Files: []File{{Path: "s3a://b/k", Length: 3, ModTime: time.Unix(1764547200, 0), Content: []byte("abc")}}},
		"bad":   {Error: "java.nio.file.AccessDeniedException: x\nS3Exception: (Status Code: 403)"},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("decode =\n%#v\nwant\n%#v", res, want)
	}
	if timings != `[["session", 9.5]]` {
		t.Errorf("timings = %s", timings)
	}
	if !HasStatus(res["bad"].Error, 403) || HasStatus(res["bad"].Error, 404) {
		t.Errorf("HasStatus(%q) wrong", res["bad"].Error)
	}
	for _, bad := range []string{`{"q": {"records": [[0, "zz"]]}}`, `{"q": {"records": [["x", ""]]}}`, `{"q": []}`, `nope`} {
		if _, _, err := decode([]byte(bad)); err == nil {
			t.Errorf("decode(%s): no error", bad)
		}
	}
}
