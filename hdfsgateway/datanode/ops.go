package datanode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	hpb "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
	"github.com/sluice-streams/sluice/tier2/view"
)

// ReadOnlyMessage starts the message of every refused mutating op: the
// text Hadoop clients print.
const ReadOnlyMessage = "Permission denied: the sluice HDFS head is read-only"

// lingerTime bounds how long a connection closed after an error response
// is drained, so that the client reads the response rather than a reset.
const lingerTime = time.Second

// conn is one client connection.
type conn struct {
	c   net.Conn
	r   *bufio.Reader
	s   *Server
	log logrus.FieldLogger
	buf []byte // response buffer, reused across ops
}

// packetBufSize is the size of a packet buffer for packets of size data
// bytes: the data, then the packet's head (lengths, header, CRCs).
func packetBufSize(size int) int {
	return size + packetPrefix + 64 + size/blocks.BytesPerChecksum*4
}

// serve runs one decoded op and reports whether the connection may carry
// another.
func (cn *conn) serve(req request) bool {
	switch req.op {
	case OpReadBlock:
		return cn.readBlock(req.body.(*hpb.OpReadBlockProto))
	case OpBlockChecksum:
		return cn.blockChecksum(req.body.(*hpb.OpBlockChecksumProto))
	case OpWriteBlock, OpReplaceBlock, OpCopyBlock, OpTransferBlock:
		cn.refuse(hpb.Status_ERROR_ACCESS_TOKEN, fmt.Sprintf("%s: op %s refused", ReadOnlyMessage, opName(req.op)))
	default:
		cn.refuse(hpb.Status_ERROR_UNSUPPORTED, fmt.Sprintf("op %s is not supported by the sluice HDFS head (read-only, no short-circuit reads, no erasure coding)", opName(req.op)))
	}
	return false
}

// fail answers a request that did not decode (when there is something
// to say) and logs it; the connection is then closed.
func (cn *conn) fail(op byte, err error) {
	cn.log.WithError(err).Info("datanode: closing a connection after a bad request")
	switch {
	case errors.Is(err, ErrVersion), errors.Is(err, ErrUnknownOp), errors.Is(err, ErrTooLarge):
		cn.refuse(hpb.Status_ERROR, err.Error())
	}
}

// refuse sends an error response, then drains what the client still
// sends for a moment before the caller closes the connection: closing
// with unread bytes would reset it, and the client could lose the
// response.
func (cn *conn) refuse(st hpb.Status, msg string) {
	if err := cn.respond(&hpb.BlockOpResponseProto{Status: st.Enum(), Message: proto.String(msg)}); err != nil {
		return
	}
	if tc, ok := cn.c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	cn.c.SetReadDeadline(time.Now().Add(lingerTime))
	io.CopyN(io.Discard, cn.r, 1<<20)
}

// respond writes a delimited BlockOpResponseProto.
func (cn *conn) respond(m *hpb.BlockOpResponseProto) error {
	b, err := appendResponse(cn.buf[:0], m)
	if err != nil {
		return err
	}
	cn.buf = b[:0]
	return cn.write(b)
}

// write writes bufs (with one writev on TCP) within the write timeout.
func (cn *conn) write(bufs ...[]byte) error {
	cn.c.SetWriteDeadline(time.Now().Add(cn.s.cfg.WriteTimeout))
	nb := net.Buffers(bufs)
	_, err := nb.WriteTo(cn.c)
	return err
}

// block finds the block a request names from its token and opens its
// file. The caller closes the file.
func (cn *conn) block(h *hpb.BaseHeaderProto) (blocks.Block, view.File, error) {
	eb := h.GetBlock()
	if pool := eb.GetPoolId(); pool != blocks.PoolID {
		return blocks.Block{}, nil, fmt.Errorf("%w: block pool %q, not %q", ErrBadBlock, pool, blocks.PoolID)
	}
	id := int64(eb.GetBlockId())
	path, index, err := blocks.DecodeToken(h.GetToken().GetIdentifier(), id)
	if err != nil {
		return blocks.Block{}, nil, fmt.Errorf("%w: block %d: %w", ErrBadBlock, id, err)
	}
	f, err := cn.s.v.Open(cn.s.ctx, path)
	if err != nil {
		return blocks.Block{}, nil, fmt.Errorf("%w: block %d: %w", ErrBadBlock, id, err)
	}
	bs := blocks.Of(path, f.Size(), cn.s.cfg.BlockSize)
	if index >= len(bs) {
		f.Close()
		return blocks.Block{}, nil, fmt.Errorf("%w: block %d: %q has %d blocks, not %d", ErrBadBlock, id, path, len(bs), index+1)
	}
	return bs[index], f, nil
}

// readBlock answers OP_READ_BLOCK: the response, the packets from the
// chunk boundary at or before the offset to the one at or after its end
// (or the block's end), the empty last packet, then the client's status.
func (cn *conn) readBlock(m *hpb.OpReadBlockProto) bool {
	b, f, err := cn.block(m.GetHeader().GetBaseHeader())
	if err != nil {
		cn.log.WithError(err).Info("datanode: read refused")
		cn.refuse(hpb.Status_ERROR, err.Error())
		return false
	}
	defer f.Close()
	start, end, err := readRange(b, m.GetOffset(), m.GetLen())
	if err != nil {
		cn.log.WithError(err).Info("datanode: read refused")
		cn.refuse(hpb.Status_ERROR, err.Error())
		return false
	}
	sums := m.GetSendChecksums()
	ctype := hpb.ChecksumTypeProto_CHECKSUM_CRC32C
	if !sums {
		ctype = hpb.ChecksumTypeProto_CHECKSUM_NULL
	}
	err = cn.respond(&hpb.BlockOpResponseProto{
		Status: hpb.Status_SUCCESS.Enum(),
		ReadOpChecksumInfo: &hpb.ReadOpChecksumInfoProto{
			Checksum:    &hpb.ChecksumProto{Type: ctype.Enum(), BytesPerChecksum: proto.Uint32(blocks.BytesPerChecksum)},
			ChunkOffset: proto.Uint64(uint64(start)),
		},
	})
	if err != nil {
		return false
	}
	if err := cn.sendPackets(f, b, start, end, sums); err != nil {
		cn.log.WithError(err).Debug("datanode: read ended early")
		return false
	}
	// The read status follows the last packet at once; however long
	// the packets took, the client gets the whole timeout for it.
	cn.c.SetReadDeadline(time.Now().Add(cn.s.cfg.HandshakeTimeout))
	st, err := readStatus(cn.r)
	if err != nil {
		cn.log.WithError(err).Debug("datanode: no read status")
		return false
	}
	if s := st.GetStatus(); s != hpb.Status_SUCCESS && s != hpb.Status_CHECKSUM_OK {
		cn.log.WithField("block", b.ID()).Warnf("datanode: client reports %s reading %q block %d", s, b.Path, b.Index)
	}
	return true
}

// readRange checks a requested range of block b and returns what is
// sent: [start, end) in the block, start and end on chunk boundaries (or
// end at the block's end). A length beyond int64 means "to the end", as
// in HDFS.
func readRange(b blocks.Block, offset, length uint64) (start, end int64, err error) {
	if offset > uint64(b.Len) {
		return 0, 0, fmt.Errorf("%w: offset %d beyond block %d of %q (%d bytes)", ErrBadBlock, offset, b.ID(), b.Path, b.Len)
	}
	if int64(length) < 0 {
		length = uint64(b.Len) - offset
	}
	if length > uint64(b.Len)-offset {
		return 0, 0, fmt.Errorf("%w: offset %d and length %d don't match block %d of %q (%d bytes)", ErrBadBlock, offset, length, b.ID(), b.Path, b.Len)
	}
	const chunk = blocks.BytesPerChecksum
	start = int64(offset) - int64(offset)%chunk
	end = int64(offset + length)
	if r := end % chunk; r != 0 {
		end = min(end+chunk-r, b.Len)
	}
	return start, end, nil
}

// sendPackets sends [start, end) of block b from f in packets, then the
// empty last packet. Each packet's head (lengths, header, CRCs) and data
// go out in one writev, the data never copied.
func (cn *conn) sendPackets(f view.File, b blocks.Block, start, end int64, sums bool) error {
	size := cn.s.cfg.PacketSize
	bp := cn.s.packets.Get().(*[]byte)
	defer cn.s.packets.Put(bp)
	data, head := (*bp)[:size], (*bp)[size:size]
	seq := int64(0)
	for pos := start; pos < end; seq++ {
		n := int(min(int64(size), end-pos))
		if err := readFull(f, data[:n], b.Offset+pos); err != nil {
			return fmt.Errorf("datanode: read %q: %w", b.Path, err)
		}
		sumLen := 0
		if sums {
			sumLen = (n + blocks.BytesPerChecksum - 1) / blocks.BytesPerChecksum * 4
		}
		h, err := appendPacketHead(head[:0], pos, seq, false, sumLen, n)
		if err != nil {
			return err
		}
		if sums {
			h = blocks.AppendCRCs(h, data[:n])
		}
		if err := cn.write(h, data[:n]); err != nil {
			return err
		}
		pos += int64(n)
	}
	h, err := appendPacketHead(head[:0], end, seq, true, 0, 0)
	if err != nil {
		return err
	}
	return cn.write(h)
}

// blockChecksum answers OP_BLOCK_CHECKSUM over the block's first
// numBytes (or all of it): MD5CRC, the MD5 of the block's CRC32Cs
// (blocks.BlockMD5), or COMPOSITE_CRC, the CRC32C of each stripe of the
// block (the whole block when the stripe length is 0).
func (cn *conn) blockChecksum(m *hpb.OpBlockChecksumProto) bool {
	opts := m.GetBlockChecksumOptions()
	kind := opts.GetBlockChecksumType()
	if kind != hpb.BlockChecksumTypeProto_MD5CRC && kind != hpb.BlockChecksumTypeProto_COMPOSITE_CRC {
		cn.refuse(hpb.Status_ERROR_UNSUPPORTED, fmt.Sprintf("block checksum type %s is not supported by the sluice HDFS head", kind))
		return false
	}
	b, f, err := cn.block(m.GetHeader())
	if err != nil {
		cn.log.WithError(err).Info("datanode: checksum refused")
		cn.refuse(hpb.Status_ERROR, err.Error())
		return false
	}
	defer f.Close()
	if n := int64(m.GetHeader().GetBlock().GetNumBytes()); n > 0 && n < b.Len {
		b.Len = n
	}
	var sum []byte
	crcs := (b.Len + blocks.BytesPerChecksum - 1) / blocks.BytesPerChecksum
	if kind == hpb.BlockChecksumTypeProto_MD5CRC {
		var md5 [16]byte
		md5, crcs, err = blocks.BlockMD5(f, b)
		sum = md5[:]
	} else {
		sum, err = stripeCRCs(f, b, int64(opts.GetStripeLength()))
	}
	if err != nil {
		cn.log.WithError(err).Warn("datanode: checksum failed")
		cn.refuse(hpb.Status_ERROR, err.Error())
		return false
	}
	resp := &hpb.OpBlockChecksumResponseProto{
		BytesPerCrc:   proto.Uint32(blocks.BytesPerChecksum),
		CrcPerBlock:   proto.Uint64(uint64(crcs)),
		BlockChecksum: sum,
		CrcType:       hpb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(),
	}
	if opts != nil {
		resp.BlockChecksumOptions = opts
	}
	err = cn.respond(&hpb.BlockOpResponseProto{Status: hpb.Status_SUCCESS.Enum(), ChecksumResponse: resp})
	return err == nil
}

// stripeCRCs returns the big-endian CRC32C of each stripe of block b
// (stripe bytes each, the last one shorter; one stripe if stripe is 0 or
// longer than the block): what a DataNode composes from the chunk CRCs
// for COMPOSITE_CRC.
func stripeCRCs(r io.ReaderAt, b blocks.Block, stripe int64) ([]byte, error) {
	if stripe <= 0 || stripe > b.Len {
		stripe = b.Len
	}
	if b.Len/stripe > 1<<16 {
		return nil, fmt.Errorf("%w: stripe length %d gives more than %d CRCs", ErrBadBlock, stripe, 1<<16)
	}
	var out []byte
	buf := make([]byte, 64<<10)
	for s := int64(0); s < b.Len; s += stripe {
		var crc uint32
		for off, end := s, min(s+stripe, b.Len); off < end; {
			n := int(min(int64(len(buf)), end-off))
			if err := readFull(r, buf[:n], b.Offset+off); err != nil {
				return nil, fmt.Errorf("datanode: read %q: %w", b.Path, err)
			}
			crc = crc32.Update(crc, castagnoli, buf[:n])
			off += int64(n)
		}
		out = binary.BigEndian.AppendUint32(out, crc)
	}
	return out, nil
}

// readFull reads len(p) bytes at off: io.EOF with all of them is
// success, fewer is io.ErrUnexpectedEOF (a chunk shorter than its size).
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%d bytes at %d: %w", len(p), off, err)
}

// castagnoli is CRC32C's table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// opName names an op code as Hadoop's Op enum does.
func opName(op byte) string {
	switch op {
	case OpWriteBlock:
		return "WRITE_BLOCK"
	case OpReadBlock:
		return "READ_BLOCK"
	case OpReadMetadata:
		return "READ_METADATA"
	case OpReplaceBlock:
		return "REPLACE_BLOCK"
	case OpCopyBlock:
		return "COPY_BLOCK"
	case OpBlockChecksum:
		return "BLOCK_CHECKSUM"
	case OpTransferBlock:
		return "TRANSFER_BLOCK"
	case OpRequestShortCircuitFDs:
		return "REQUEST_SHORT_CIRCUIT_FDS"
	case OpReleaseShortCircuitFDs:
		return "RELEASE_SHORT_CIRCUIT_FDS"
	case OpRequestShortCircuitShm:
		return "REQUEST_SHORT_CIRCUIT_SHM"
	case OpBlockGroupChecksum:
		return "BLOCK_GROUP_CHECKSUM"
	case OpCustom:
		return "CUSTOM"
	}
	return fmt.Sprintf("%d", op)
}
