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
	for _, name := range []string{"before_heads.msgpack", "before_nfs_s3_heads.msgpack"} {
		old, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(old)
	}
	sp := headSpec(2)
	sp.NFSHeads = HeadSpec{Count: 1, Resources: Resources{CPUs: 0.5, MemMB: 256}}
	sp.S3Heads = HeadSpec{Count: 2, Resources: Resources{CPUs: 0.5, MemMB: 256}}
	p := New(sp)
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
