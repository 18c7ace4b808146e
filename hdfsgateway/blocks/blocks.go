package blocks

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
)

// Defaults of the head's block layout.
const (
	// DefaultSize is the default block size: HDFS's own default.
	DefaultSize = 128 << 20
	// BytesPerChecksum is the span of one CRC32C: HDFS's default.
	BytesPerChecksum = 512
	// GenerationStamp is every block's generation stamp (blocks never
	// change: chunks are immutable).
	GenerationStamp = 1001
	// PoolID is the block pool of every block the head serves.
	PoolID = "BP-sluice-head"
	// TokenKind is the kind of the block tokens the head hands out.
	TokenKind = "HDFS_BLOCK_TOKEN"
)

// Errors; classify with errors.Is.
var (
	// ErrBadToken: a block token that this package did not make.
	ErrBadToken = errors.New("blocks: bad block token")
	// ErrWrongBlock: a block id that is not the token's block.
	ErrWrongBlock = errors.New("blocks: block id does not match its token")
)

// Block is one block of a file.
type Block struct {
	Path   string // the file's path in the view
	Index  int
	Offset int64 // in the file
	Len    int64
}

// ID is the block's id: a positive int64 from its path and index.
func (b Block) ID() int64 { return ID(b.Path, b.Index) }

// ID returns the id of block index of the file at path.
func ID(path string, index int) int64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	var i [8]byte
	binary.BigEndian.PutUint64(i[:], uint64(index))
	h.Write(i[:])
	id := int64(h.Sum64() &^ (1 << 63))
	if id == 0 {
		id = 1
	}
	return id
}

// Of returns the blocks of a file of size bytes at path, of size
// blockSize each (DefaultSize if not positive).
func Of(path string, size, blockSize int64) []Block {
	if blockSize <= 0 {
		blockSize = DefaultSize
	}
	var out []Block
	for off, i := int64(0), 0; off < size; off, i = off+blockSize, i+1 {
		out = append(out, Block{Path: path, Index: i, Offset: off, Len: min(blockSize, size-off)})
	}
	return out
}

// tokenMagic starts every token identifier of this package.
const tokenMagic = "SLB1"

// EncodeToken returns the block token identifier of b.
func EncodeToken(b Block) []byte {
	buf := []byte(tokenMagic)
	buf = binary.AppendUvarint(buf, uint64(b.Index))
	buf = binary.AppendUvarint(buf, uint64(len(b.Path)))
	return append(buf, b.Path...)
}

// DecodeToken returns the path and index a token identifier names,
// checking that blockID is that block's id.
func DecodeToken(ident []byte, blockID int64) (path string, index int, err error) {
	rest, ok := bytes.CutPrefix(ident, []byte(tokenMagic))
	if !ok {
		return "", 0, fmt.Errorf("%w: no %q prefix", ErrBadToken, tokenMagic)
	}
	idx, n := binary.Uvarint(rest)
	if n <= 0 || idx > 1<<31 {
		return "", 0, fmt.Errorf("%w: bad block index", ErrBadToken)
	}
	rest = rest[n:]
	l, n := binary.Uvarint(rest)
	if n <= 0 || l != uint64(len(rest)-n) {
		return "", 0, fmt.Errorf("%w: bad path length", ErrBadToken)
	}
	path = string(rest[n:])
	if ID(path, int(idx)) != blockID {
		return "", 0, fmt.Errorf("%w: block %d, token names %q block %d", ErrWrongBlock, blockID, path, idx)
	}
	return path, int(idx), nil
}

// castagnoli is CRC32C's table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendCRCs appends the big-endian CRC32C of every BytesPerChecksum
// bytes of data (the last span may be shorter) to dst, as HDFS sends them
// in a packet.
func AppendCRCs(dst, data []byte) []byte {
	for len(data) > 0 {
		n := min(len(data), BytesPerChecksum)
		dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(data[:n], castagnoli))
		data = data[n:]
	}
	return dst
}

// BlockMD5 returns the MD5 of the CRC32Cs of a block's bytes (read from r
// at [b.Offset, b.Offset+b.Len)) and the number of CRCs: what a DataNode
// answers to OpBlockChecksum.
func BlockMD5(r io.ReaderAt, b Block) (sum [md5.Size]byte, crcs int64, err error) {
	h := md5.New()
	buf := make([]byte, 64*BytesPerChecksum)
	var crcBuf []byte
	for off := int64(0); off < b.Len; {
		n := int(min(int64(len(buf)), b.Len-off))
		// io.EOF with every byte read is success; fewer bytes are not,
		// whatever the error.
		if k, err := r.ReadAt(buf[:n], b.Offset+off); k < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return sum, 0, fmt.Errorf("blocks: read %q at %d: %w", b.Path, b.Offset+off, err)
		}
		crcBuf = AppendCRCs(crcBuf[:0], buf[:n])
		h.Write(crcBuf)
		crcs += int64(len(crcBuf) / 4)
		off += int64(n)
	}
	copy(sum[:], h.Sum(nil))
	return sum, crcs, nil
}

// FileChecksum is an HDFS file checksum: MD5-of-<CRCsPerBlock>MD5-of-512CRC32C.
type FileChecksum struct {
	// CRCsPerBlock is the number of CRCs in the file's first block when
	// the file has more than one block, else 0: as HDFS's client
	// reports it ("MD5-of-0MD5-of-512CRC32C" for a one-block file).
	CRCsPerBlock int64
	// MD5 is the MD5 of the concatenated block MD5s, zero-padded as
	// HDFS's client pads them (see md5Padding).
	MD5 [md5.Size]byte
}

// Algorithm is the checksum's name as Hadoop prints it.
func (c FileChecksum) Algorithm() string {
	return fmt.Sprintf("MD5-of-%dMD5-of-%dCRC32C", c.CRCsPerBlock, BytesPerChecksum)
}

// Bytes is the checksum's serialized form (Hadoop's
// MD5MD5CRC32FileChecksum.write): bytesPerCRC, crcPerBlock, then the MD5.
func (c FileChecksum) Bytes() []byte {
	b := binary.BigEndian.AppendUint32(nil, BytesPerChecksum)
	b = binary.BigEndian.AppendUint64(b, uint64(c.CRCsPerBlock))
	return append(b, c.MD5[:]...)
}

// Checksum computes the file checksum of the file at path of size bytes,
// read from r, with blocks of blockSize.
func Checksum(r io.ReaderAt, path string, size, blockSize int64) (FileChecksum, error) {
	var c FileChecksum
	h := md5.New()
	bs := Of(path, size, blockSize)
	for i, b := range bs {
		sum, crcs, err := BlockMD5(r, b)
		if err != nil {
			return FileChecksum{}, err
		}
		if i == 0 && len(bs) > 1 {
			c.CRCsPerBlock = crcs
		}
		h.Write(sum[:])
	}
	h.Write(make([]byte, md5Padding(16*len(bs))))
	copy(c.MD5[:], h.Sum(nil))
	return c, nil
}

// md5Padding is how many zero bytes follow n bytes of block MD5s in what
// HDFS's client hashes into the file MD5: it digests the whole backing
// array of the buffer it collected them in (a DataOutputBuffer: 32 bytes
// at first, doubling when full), not only the bytes written. Checked
// against a real HDFS by hdfsgateway/webhdfs's TestChecksumMatchesRealHDFS.
func md5Padding(n int) int {
	c := 32
	for c < n {
		c *= 2
	}
	return c - n
}
