package namenode

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	common "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
	hpb "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
	"github.com/sluice-streams/sluice/tier2"
)

// TestSmallCalls makes every served call the FsShell tests may not reach
// and decodes each answer as its method's response type (required fields
// and all).
func TestSmallCalls(t *testing.T) {
	addr, _, _ := closedConns(t, Config{BlockSize: testBlockSize})
	rc := dialRaw(t, addr)
	rc.handshake()
	file := "/" + tier2.ChunkPath("s", "a", 3, 0)
	for _, c := range []struct {
		method string
		req    proto.Message
		exc    string // "" for success
		check  func(m proto.Message) bool
	}{
		{"getServerDefaults", &hpb.GetServerDefaultsRequestProto{}, "", func(m proto.Message) bool {
			d := m.(*hpb.GetServerDefaultsResponseProto).GetServerDefaults()
			return d.GetBlockSize() == testBlockSize && d.GetBytesPerChecksum() == 512 && d.GetChecksumType() == hpb.ChecksumTypeProto_CHECKSUM_CRC32C
		}},
		{"getFsStats", &hpb.GetFsStatusRequestProto{}, "", nil},
		{"getQuotaUsage", &hpb.GetQuotaUsageRequestProto{Path: proto.String("/s")}, "", func(m proto.Message) bool {
			u := m.(*hpb.GetQuotaUsageResponseProto).GetUsage()
			return u.GetFileAndDirectoryCount() == 8 && u.GetQuota() == noQuota // s, a, 2 segments, b; 3 files
		}},
		{"getStoragePolicies", &hpb.GetStoragePoliciesRequestProto{}, "", nil},
		{"getStoragePolicy", &hpb.GetStoragePolicyRequestProto{Path: proto.String(file)}, "", nil},
		{"getHAServiceState", &hpb.HAServiceStateRequestProto{}, "", func(m proto.Message) bool {
			return m.(*hpb.HAServiceStateResponseProto).GetState() == common.HAServiceStateProto_ACTIVE
		}},
		{"msync", &hpb.MsyncRequestProto{}, "", nil},
		{"renewLease", &hpb.RenewLeaseRequestProto{ClientName: proto.String("c")}, "", nil},
		{"getDataEncryptionKey", &hpb.GetDataEncryptionKeyRequestProto{}, "", nil},
		{"getDelegationToken", &common.GetDelegationTokenRequestProto{Renewer: proto.String("r")}, "", nil},
		{"isFileClosed", &hpb.IsFileClosedRequestProto{Src: proto.String(file)}, "", nil},
		{"getPreferredBlockSize", &hpb.GetPreferredBlockSizeRequestProto{Filename: proto.String(file)}, "", nil},
		{"getLinkTarget", &hpb.GetLinkTargetRequestProto{Path: proto.String(file)}, excIO, nil},
		{"checkAccess", &hpb.CheckAccessRequestProto{Path: proto.String(file), Mode: hpb.AclEntryProto_READ.Enum()}, "", nil},
		{"checkAccess", &hpb.CheckAccessRequestProto{Path: proto.String(file), Mode: hpb.AclEntryProto_WRITE.Enum()}, excAccessControl, nil},
		{"getLocatedFileInfo", &hpb.GetLocatedFileInfoRequestProto{Src: proto.String(file)}, "", func(m proto.Message) bool {
			l := m.(*hpb.GetLocatedFileInfoResponseProto).GetFs().GetLocations()
			return len(l.GetBlocks()) == 5 && l.GetIsLastBlockComplete() && l.GetLastBlock().GetOffset() == 4*testBlockSize
		}},
		{"getBlockLocations", &hpb.GetBlockLocationsRequestProto{Src: proto.String(file), Offset: proto.Uint64(testBlockSize + 1), Length: proto.Uint64(testBlockSize)}, "", func(m proto.Message) bool {
			l := m.(*hpb.GetBlockLocationsResponseProto).GetLocations()
			bs := l.GetBlocks()
			return len(bs) == 2 && bs[0].GetOffset() == testBlockSize && bs[1].GetOffset() == 2*testBlockSize &&
				bs[0].GetLocs()[0].GetId().GetXferPort() == 9 && string(bs[0].GetBlockToken().GetKind()) == "HDFS_BLOCK_TOKEN"
		}},
		{"getBlockLocations", &hpb.GetBlockLocationsRequestProto{Src: proto.String("/s/a"), Offset: proto.Uint64(0), Length: proto.Uint64(1)}, excNotFound, nil},
		{"getXAttrs", &hpb.GetXAttrsRequestProto{Src: proto.String(file)}, "", nil},
		{"listXAttrs", &hpb.ListXAttrsRequestProto{Src: proto.String(file)}, "", nil},
		{"getEZForPath", &hpb.GetEZForPathRequestProto{Src: proto.String(file)}, "", nil},
		{"getErasureCodingPolicy", &hpb.GetErasureCodingPolicyRequestProto{Src: proto.String(file)}, "", nil},
		{"getFileLinkInfo", &hpb.GetFileLinkInfoRequestProto{Src: proto.String("/s")}, "", func(m proto.Message) bool {
			fs := m.(*hpb.GetFileLinkInfoResponseProto).GetFs()
			return fs.GetFileType() == hpb.HdfsFileStatusProto_IS_DIR && fs.GetChildrenNum() == 2
		}},
		{"getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/nope")}, "", func(m proto.Message) bool {
			return m.(*hpb.GetFileInfoResponseProto).Fs == nil
		}},
		{"getSnapshottableDirListing", &hpb.GetSnapshottableDirListingRequestProto{}, "", nil},
		{"getListing", &hpb.GetListingRequestProto{Src: proto.String("/s/a"), StartAfter: []byte("segment=0"), NeedLocation: proto.Bool(false)}, "", func(m proto.Message) bool {
			l := m.(*hpb.GetListingResponseProto).GetDirList()
			return len(l.GetPartialListing()) == 1 && string(l.GetPartialListing()[0].GetPath()) == "segment=3" && l.GetRemainingEntries() == 0
		}},
	} {
		hdr, body := rc.call(c.method, c.req)
		if c.exc != "" {
			if hdr.GetStatus() != common.RpcResponseHeaderProto_ERROR || hdr.GetExceptionClassName() != c.exc {
				t.Errorf("%s: %v, want %s", c.method, hdr, c.exc)
			}
			continue
		}
		if hdr.GetStatus() != common.RpcResponseHeaderProto_SUCCESS {
			t.Errorf("%s: %v", c.method, hdr)
			continue
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(service.Methods().ByName(protoreflect.Name(c.method)).Output().FullName())
		if err != nil {
			t.Fatal(err)
		}
		resp := mt.New().Interface()
		if err := decodeParam(body, resp); err != nil {
			t.Errorf("%s: answer does not decode: %v", c.method, err)
			continue
		}
		if c.check != nil && !c.check(resp) {
			t.Errorf("%s: %v", c.method, resp)
		}
	}
}
