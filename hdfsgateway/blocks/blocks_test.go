package blocks

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"
)

func TestOfSplitsIntoBlocks(t *testing.T) {
	for _, c := range []struct {
		size, bs int64
		want     []int64 // lengths
	}{
		{0, 10, nil},
		{1, 10, []int64{1}},
		{10, 10, []int64{10}},
		{25, 10, []int64{10, 10, 5}},
	} {
		bs := Of("p", c.size, c.bs)
		if len(bs) != len(c.want) {
			t.Fatalf("Of(%d, %d) = %d blocks, want %d", c.size, c.bs, len(bs), len(c.want))
		}
		var off int64
		for i, b := range bs {
			if b.Index != i || b.Offset != off || b.Len != c.want[i] || b.Path != "p" {
				t.Fatalf("block %d = %+v", i, b)
			}
			off += b.Len
		}
	}
	if n := len(Of("p", DefaultSize+1, 0)); n != 2 {
		t.Fatalf("default size: %d blocks", n)
	}
}

func TestTokenRoundTripAndChecks(t *testing.T) {
	b := Block{Path: "s/a/segment=0/00000000000000000009.seq", Index: 3}
	tok := EncodeToken(b)
	p, i, err := DecodeToken(tok, b.ID())
	if err != nil || p != b.Path || i != 3 {
		t.Fatalf("DecodeToken = %q %d %v", p, i, err)
	}
	if _, _, err := DecodeToken(tok, b.ID()+1); !errors.Is(err, ErrWrongBlock) {
		t.Fatalf("wrong id: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("XXXX"), tok[:len(tok)-1], append(append([]byte{}, tok...), 'x'), []byte("SLB1\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")} {
		if _, _, err := DecodeToken(bad, b.ID()); !errors.Is(err, ErrBadToken) && !errors.Is(err, ErrWrongBlock) {
			t.Errorf("DecodeToken(%q) = %v", bad, err)
		}
	}
	if ID("a", 0) == ID("a", 1) || ID("a", 0) == ID("b", 0) || ID("a", 0) <= 0 {
		t.Fatal("ids collide or are not positive")
	}
}

func FuzzDecodeToken(f *testing.F) {
	f.Add(EncodeToken(Block{Path: "x/y", Index: 1}), ID("x/y", 1))
	f.Fuzz(func(t *testing.T, tok []byte, id int64) {
		p, i, err := DecodeToken(tok, id)
		if err == nil && ID(p, i) != id {
			t.Fatalf("accepted %q for block %d", tok, id)
		}
	})
}

// refChecksum computes the file checksum the long way, from the
// definition: every 512-byte CRC32C of each block, MD5 per block, MD5 of
// the MD5s (zero-padded as HDFS's client pads them).
func refChecksum(data []byte, bs int) (int64, [16]byte) {
	var outer bytes.Buffer
	var cpb int64
	nblocks := 0
	for off := 0; off < len(data); off += bs {
		nblocks++
	}
	for bi, off := 0, 0; off < len(data); bi, off = bi+1, off+bs {
		blk := data[off:min(off+bs, len(data))]
		var crcs bytes.Buffer
		n := int64(0)
		for c := 0; c < len(blk); c += 512 {
			binary.Write(&crcs, binary.BigEndian, crc32.Checksum(blk[c:min(c+512, len(blk))], crc32.MakeTable(crc32.Castagnoli)))
			n++
		}
		if bi == 0 && nblocks > 1 {
			cpb = n
		}
		s := md5.Sum(crcs.Bytes())
		outer.Write(s[:])
	}
	// HDFS's client hashes its whole buffer of block MD5s: 32 bytes,
	// doubled until they fit, zeros after them.
	c := 32
	for c < outer.Len() {
		c *= 2
	}
	outer.Write(make([]byte, c-outer.Len()))
	return cpb, md5.Sum(outer.Bytes())
}

func TestChecksumMatchesTheDefinition(t *testing.T) {
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, c := range []struct{ size, bs int }{{0, 1024}, {100, 1024}, {1024, 1024}, {5000, 1024}, {5000, 1000}, {5000, 8192}} {
		got, err := Checksum(bytes.NewReader(data[:c.size]), "p", int64(c.size), int64(c.bs))
		if err != nil {
			t.Fatal(err)
		}
		cpb, sum := refChecksum(data[:c.size], c.bs)
		if got.CRCsPerBlock != cpb || got.MD5 != sum {
			t.Fatalf("size %d block %d: got %d %x, want %d %x", c.size, c.bs, got.CRCsPerBlock, got.MD5, cpb, sum)
		}
		if len(got.Bytes()) != 4+8+16 {
			t.Fatalf("Bytes: %d", len(got.Bytes()))
		}
	}
	if a := (FileChecksum{}).Algorithm(); a != "MD5-of-0MD5-of-512CRC32C" {
		t.Fatalf("Algorithm = %q", a)
	}
}

// shortReader returns fewer bytes than asked, with io.EOF, past its end.
type shortReader struct{ data []byte }

func (r shortReader) ReadAt(p []byte, off int64) (int, error) {
	n := copy(p, r.data[min(int(off), len(r.data)):])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func TestChecksumOfAShortFileFails(t *testing.T) {
	if _, err := Checksum(shortReader{make([]byte, 100)}, "p", 1000, 4096); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("checksum of 1000 bytes from 100: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := Checksum(shortReader{make([]byte, 1000)}, "p", 1000, 4096); err != nil {
		t.Fatalf("checksum of a whole file read with io.EOF: %v", err)
	}
}
