package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzUnmarshal: any bytes in the plan's znode give a plan or an error,
// never a panic; a plan that decodes marshals to a form that decodes and
// marshals to the same bytes.
func FuzzUnmarshal(f *testing.F) {
	old, err := os.ReadFile(filepath.Join("testdata", "before_heads.msgpack"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(old)
	p := New(headSpec(2))
	run(p, deploy)
	b, err := p.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Unmarshal(b)
		if err != nil {
			return
		}
		again, err := p.Marshal()
		if err != nil {
			t.Fatalf("a decoded plan does not marshal: %v", err)
		}
		q, err := Unmarshal(again)
		if err != nil {
			t.Fatalf("a re-marshalled plan does not decode: %v", err)
		}
		third, err := q.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, third) {
			t.Fatalf("round trip changed the plan:\n%+v\n%+v", p.Pods(), q.Pods())
		}
	})
}
