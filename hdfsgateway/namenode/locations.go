package namenode

import (
	"time"

	"net"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	common "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
	hdfs "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
	"github.com/sluice-streams/sluice/tier2/view"
)

// storageID names the head's one storage in block locations.
const storageID = "DS-sluice-head"

// located is the LocatedBlocksProto of the file e for the bytes
// [off, off+length): every block that holds one of them, and the file's
// last block. Every block has one replica: the head's data-transfer
// server.
func (s *Server) located(e view.Entry, off, length uint64) *hdfs.LocatedBlocksProto {
	bs := blocks.Of(e.Path, e.Size, s.cfg.BlockSize)
	dn := s.datanode()
	lb := &hdfs.LocatedBlocksProto{
		FileLength:          proto.Uint64(uint64(e.Size)),
		UnderConstruction:   proto.Bool(false),
		IsLastBlockComplete: proto.Bool(true),
	}
	end := off + length
	if end < off {
		end = ^uint64(0)
	}
	for _, b := range bs {
		if uint64(b.Offset+b.Len) <= off || uint64(b.Offset) >= end {
			continue
		}
		lb.Blocks = append(lb.Blocks, locatedBlock(b, dn))
	}
	if len(bs) > 0 {
		lb.LastBlock = locatedBlock(bs[len(bs)-1], dn)
	}
	return lb
}

func locatedBlock(b blocks.Block, dn *hdfs.DatanodeInfoProto) *hdfs.LocatedBlockProto {
	return &hdfs.LocatedBlockProto{
		B: &hdfs.ExtendedBlockProto{
			PoolId:          proto.String(blocks.PoolID),
			BlockId:         proto.Uint64(uint64(b.ID())),
			GenerationStamp: proto.Uint64(blocks.GenerationStamp),
			NumBytes:        proto.Uint64(uint64(b.Len)),
		},
		Offset:  proto.Uint64(uint64(b.Offset)),
		Locs:    []*hdfs.DatanodeInfoProto{dn},
		Corrupt: proto.Bool(false),
		BlockToken: &common.TokenProto{
			Identifier: blocks.EncodeToken(b),
			Password:   []byte{},
			Kind:       proto.String(blocks.TokenKind),
			Service:    proto.String(""),
		},
		IsCached:     []bool{false},
		StorageTypes: []hdfs.StorageTypeProto{hdfs.StorageTypeProto_DISK},
		StorageIDs:   []string{storageID},
	}
}

// datanode describes the head's data-transfer server as the one DataNode
// of every block. Its uuid is derived from its address so that a client
// that marks it dead marks exactly it.
func (s *Server) datanode() *hdfs.DatanodeInfoProto {
	addr := ""
	if s.cfg.DataAddr != nil {
		addr = s.cfg.DataAddr()
	}
	host, ps, err := net.SplitHostPort(addr)
	port, perr := strconv.ParseUint(ps, 10, 16)
	if err != nil || perr != nil {
		host, port = "0.0.0.0", 0 // no data server: reads fail, metadata works
	}
	return &hdfs.DatanodeInfoProto{
		Id: &hdfs.DatanodeIDProto{
			IpAddr:       proto.String(host),
			HostName:     proto.String(host),
			DatanodeUuid: proto.String("sluice-head-" + net.JoinHostPort(host, strconv.FormatUint(port, 10))),
			XferPort:     proto.Uint32(uint32(port)),
			InfoPort:     proto.Uint32(0),
			IpcPort:      proto.Uint32(0),
		},
		Location:   proto.String("/default-rack"),
		AdminState: hdfs.DatanodeInfoProto_NORMAL.Enum(),
		LastUpdate: proto.Uint64(uint64(now().UnixMilli())),
	}
}

// now is the clock of the DataNode's last update.
var now = time.Now
