package namenode

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	common "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
	hdfs "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
	"github.com/sluice-streams/sluice/tier2/view"
)

// clientProtocol is the protocol the server speaks (the Java interface
// behind ClientNamenodeProtocol).
const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// service describes every method of ClientNamenodeProtocol.
var service = hdfs.File_sluice_hadoop_ClientNamenodeProtocol_proto.Services().ByName("ClientNamenodeProtocol")

// Java exception classes the client maps back to its own exceptions.
const (
	excAccessControl = "org.apache.hadoop.security.AccessControlException"
	excNotFound      = "java.io.FileNotFoundException"
	excRetriable     = "org.apache.hadoop.ipc.RetriableException"
	excIO            = "java.io.IOException"
	excNoSuchMethod  = "org.apache.hadoop.ipc.RpcNoSuchMethodException"
	excNoSuchProto   = "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
	excServer        = "org.apache.hadoop.ipc.RpcServerException"
)

// callError is the ERROR answer to one call.
type callError struct {
	class string
	msg   string
	code  common.RpcResponseHeaderProto_RpcErrorCodeProto
}

func (e *callError) Error() string { return e.class + ": " + e.msg }

func appErr(class, format string, a ...any) *callError {
	return &callError{class: class, msg: fmt.Sprintf(format, a...), code: common.RpcResponseHeaderProto_ERROR_APPLICATION}
}

// handler serves one method: it decodes param itself (its type is the
// method's) and returns the response message or an error.
type handler func(s *Server, ctx context.Context, param []byte) (proto.Message, error)

// unary adapts a typed method to a handler.
func unary[Req any, PReq interface {
	*Req
	proto.Message
}, Resp proto.Message](f func(s *Server, ctx context.Context, req PReq) (Resp, error)) handler {
	return func(s *Server, ctx context.Context, param []byte) (proto.Message, error) {
		req := PReq(new(Req))
		if err := decodeParam(param, req); err != nil {
			return nil, err
		}
		return f(s, ctx, req)
	}
}

// served is every method the server answers, by name. Every other method
// of the service either changes the namespace (refused as read-only) or
// administers a real cluster (refused as unknown).
var served = map[string]handler{
	"getFileInfo":                unary((*Server).getFileInfo),
	"getFileLinkInfo":            unary((*Server).getFileLinkInfo),
	"getLocatedFileInfo":         unary((*Server).getLocatedFileInfo),
	"getListing":                 unary((*Server).getListing),
	"getBlockLocations":          unary((*Server).getBlockLocations),
	"getServerDefaults":          unary((*Server).getServerDefaults),
	"getFsStats":                 unary((*Server).getFsStats),
	"getContentSummary":          unary((*Server).getContentSummary),
	"getQuotaUsage":              unary((*Server).getQuotaUsage),
	"getPreferredBlockSize":      unary((*Server).getPreferredBlockSize),
	"getLinkTarget":              unary((*Server).getLinkTarget),
	"getStoragePolicies":         unary((*Server).getStoragePolicies),
	"getStoragePolicy":           unary((*Server).getStoragePolicy),
	"getAclStatus":               unary((*Server).getAclStatus),
	"checkAccess":                unary((*Server).checkAccess),
	"isFileClosed":               unary((*Server).isFileClosed),
	"getHAServiceState":          unary((*Server).getHAServiceState),
	"getXAttrs":                  unary((*Server).getXAttrs),
	"listXAttrs":                 unary((*Server).listXAttrs),
	"getEZForPath":               unary((*Server).getEZForPath),
	"getErasureCodingPolicy":     unary((*Server).getErasureCodingPolicy),
	"renewLease":                 empty[*hdfs.RenewLeaseRequestProto, *hdfs.RenewLeaseResponseProto](),
	"msync":                      empty[*hdfs.MsyncRequestProto, *hdfs.MsyncResponseProto](),
	"getDataEncryptionKey":       empty[*hdfs.GetDataEncryptionKeyRequestProto, *hdfs.GetDataEncryptionKeyResponseProto](),
	"getDelegationToken":         empty[*common.GetDelegationTokenRequestProto, *common.GetDelegationTokenResponseProto](),
	"getSnapshottableDirListing": empty[*hdfs.GetSnapshottableDirListingRequestProto, *hdfs.GetSnapshottableDirListingResponseProto](),
}

// unservedReads are the methods of the service that change nothing but
// are not served: cluster administration and reports a head has no
// answer to. Every other method that is not served writes, and is refused
// as the tree is read-only.
var unservedReads = map[string]bool{
	"getDatanodeReport": true, "getDatanodeStorageReport": true, "getFsReplicatedBlockStats": true,
	"getFsECBlockGroupStats": true, "listCorruptFileBlocks": true, "listCacheDirectives": true,
	"listCachePools": true, "getSnapshotDiffReport": true, "getSnapshotDiffReportListing": true,
	"listEncryptionZones": true, "listReencryptionStatus": true, "getECTopologyResultForPolicies": true,
	"getCurrentEditLogTxid": true, "getEditsFromTxid": true, "getErasureCodingPolicies": true,
	"getErasureCodingCodecs": true, "listOpenFiles": true, "upgradeStatus": true, "getBatchedListing": true,
}

// empty answers a method with its empty response: success with nothing
// (no lease to renew, no key, no token, nothing to sync).
func empty[Req, Resp proto.Message]() handler {
	return func(s *Server, ctx context.Context, param []byte) (proto.Message, error) {
		var req Req
		req = req.ProtoReflect().Type().New().Interface().(Req)
		if err := decodeParam(param, req); err != nil {
			return nil, err
		}
		var resp Resp
		return resp.ProtoReflect().Type().New().Interface(), nil
	}
}

// call answers one call of user's.
func (s *Server) call(ctx context.Context, user string, req *request) (proto.Message, *callError) {
	m := req.method
	name := m.GetMethodName()
	if p := m.GetDeclaringClassProtocolName(); p != clientProtocol {
		return nil, &callError{class: excNoSuchProto, msg: fmt.Sprintf("unknown protocol %s: sluice's HDFS head serves %s", p, clientProtocol),
			code: common.RpcResponseHeaderProto_ERROR_NO_SUCH_PROTOCOL}
	}
	h, ok := served[name]
	if !ok {
		return nil, s.refuse(name, user, req.param)
	}
	resp, err := h(s, ctx, req.param)
	if err != nil {
		ce := toCallError(err)
		s.log.WithField("method", name).Debugf("namenode: %v", ce)
		return nil, ce
	}
	return resp, nil
}

// refuse answers a method that is not served: a method of the protocol
// is refused as the tree is read-only (naming the path it would change),
// anything else is unknown.
func (s *Server) refuse(name, user string, param []byte) *callError {
	md := service.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		s.log.WithField("method", name).Info("namenode: unknown method")
		return &callError{class: excNoSuchMethod, msg: fmt.Sprintf("unknown method %s of %s", name, clientProtocol),
			code: common.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD}
	}
	if unservedReads[name] {
		return &callError{class: excNoSuchMethod, msg: fmt.Sprintf("%s is not served by sluice's HDFS head (it serves a read-only namespace, without cluster administration)", name),
			code: common.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD}
	}
	where := ""
	if p := pathOf(md, param); p != "" {
		where = ", path=" + p
	}
	// Worded as HDFS words its own refusals ("Permission denied:
	// user=alice, access=WRITE, inode=...").
	return appErr(excAccessControl, "Permission denied: user=%s, access=WRITE, op=%s%s: sluice's HDFS head is read-only", user, name, where)
}

// pathOf returns the path a request of method md names, if it names one.
func pathOf(md protoreflect.MethodDescriptor, param []byte) string {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
	if err != nil {
		return ""
	}
	m := mt.New().Interface()
	if decodeParam(param, m) != nil {
		return ""
	}
	fields := m.ProtoReflect().Descriptor().Fields()
	for _, n := range []protoreflect.Name{"src", "path", "trg", "link", "snapshotRoot"} {
		if f := fields.ByName(n); f != nil && f.Kind() == protoreflect.StringKind && !f.IsList() {
			return m.ProtoReflect().Get(f).String()
		}
	}
	return ""
}

// toCallError maps an error of the view (or of decoding) to the exception
// Hadoop's client expects.
func toCallError(err error) *callError {
	var ce *callError
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, view.ErrNotExist):
		return appErr(excNotFound, "%v", err)
	case errors.Is(err, view.ErrNotDir):
		return appErr(excNotFound, "%v", err)
	case errors.Is(err, view.ErrUnavailable):
		return appErr(excRetriable, "%v", err)
	case errors.Is(err, ErrProtocol):
		return &callError{class: excServer, msg: err.Error(), code: common.RpcResponseHeaderProto_ERROR_RPC_SERVER}
	case errors.Is(err, context.Canceled):
		return appErr(excRetriable, "sluice's HDFS head is shutting down")
	}
	return appErr(excIO, "%v", err)
}

func notFound(p string) error {
	return appErr(excNotFound, "File does not exist: %s", p)
}

// getFileInfo: a missing path is an empty answer (the client's null), not
// an error.
func (s *Server) getFileInfo(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
	st, err := s.statOrNil(ctx, req.GetSrc(), false)
	return &hdfs.GetFileInfoResponseProto{Fs: st}, err
}

func (s *Server) getFileLinkInfo(ctx context.Context, req *hdfs.GetFileLinkInfoRequestProto) (*hdfs.GetFileLinkInfoResponseProto, error) {
	st, err := s.statOrNil(ctx, req.GetSrc(), false)
	return &hdfs.GetFileLinkInfoResponseProto{Fs: st}, err
}

func (s *Server) getLocatedFileInfo(ctx context.Context, req *hdfs.GetLocatedFileInfoRequestProto) (*hdfs.GetLocatedFileInfoResponseProto, error) {
	st, err := s.statOrNil(ctx, req.GetSrc(), true)
	return &hdfs.GetLocatedFileInfoResponseProto{Fs: st}, err
}

// statOrNil is the status of the entry at p with an empty local name, or
// nil if there is none; a directory's counts its children.
func (s *Server) statOrNil(ctx context.Context, p string, locs bool) (*hdfs.HdfsFileStatusProto, error) {
	e, err := s.v.Stat(ctx, p)
	if errors.Is(err, view.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := s.status(e, []byte{}, locs)
	if e.IsDir {
		if es, err := s.v.List(ctx, p); err == nil {
			st.ChildrenNum = proto.Int32(int32(min(len(es), 1<<31-1)))
		}
	}
	return st, nil
}

// getListing pages through a directory in name order; a file lists as
// itself, as on HDFS.
func (s *Server) getListing(ctx context.Context, req *hdfs.GetListingRequestProto) (*hdfs.GetListingResponseProto, error) {
	e, err := s.v.Stat(ctx, req.GetSrc())
	if errors.Is(err, view.ErrNotExist) {
		return nil, notFound(req.GetSrc())
	}
	if err != nil {
		return nil, err
	}
	if !e.IsDir {
		return &hdfs.GetListingResponseProto{DirList: &hdfs.DirectoryListingProto{
			PartialListing:   []*hdfs.HdfsFileStatusProto{s.status(e, []byte{}, req.GetNeedLocation())},
			RemainingEntries: proto.Uint32(0),
		}}, nil
	}
	es, err := s.v.List(ctx, e.Path)
	if errors.Is(err, view.ErrNotExist) {
		return nil, notFound(req.GetSrc())
	}
	if err != nil {
		return nil, err
	}
	after := string(req.GetStartAfter())
	i := sort.Search(len(es), func(i int) bool { return es[i].Name > after })
	n := min(len(es)-i, s.cfg.ListingLimit)
	out := make([]*hdfs.HdfsFileStatusProto, 0, n)
	for _, c := range es[i : i+n] {
		out = append(out, s.status(c, []byte(c.Name), req.GetNeedLocation()))
	}
	return &hdfs.GetListingResponseProto{DirList: &hdfs.DirectoryListingProto{
		PartialListing:   out,
		RemainingEntries: proto.Uint32(uint32(len(es) - i - n)),
	}}, nil
}

func (s *Server) getBlockLocations(ctx context.Context, req *hdfs.GetBlockLocationsRequestProto) (*hdfs.GetBlockLocationsResponseProto, error) {
	e, err := s.v.Stat(ctx, req.GetSrc())
	if errors.Is(err, view.ErrNotExist) {
		return nil, notFound(req.GetSrc())
	}
	if err != nil {
		return nil, err
	}
	if e.IsDir {
		return nil, appErr(excNotFound, "Path is not a file: %s", req.GetSrc())
	}
	return &hdfs.GetBlockLocationsResponseProto{Locations: s.located(e, req.GetOffset(), req.GetLength())}, nil
}

func (s *Server) getServerDefaults(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
	return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: &hdfs.FsServerDefaultsProto{
		BlockSize:           proto.Uint64(uint64(s.cfg.BlockSize)),
		BytesPerChecksum:    proto.Uint32(bytesPerChecksum),
		WritePacketSize:     proto.Uint32(writePacketSize),
		Replication:         proto.Uint32(1),
		FileBufferSize:      proto.Uint32(fileBufferSize),
		EncryptDataTransfer: proto.Bool(false),
		TrashInterval:       proto.Uint64(0),
		ChecksumType:        hdfs.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(),
	}}, nil
}

// getFsStats: the head has no capacity of its own to report; used is
// what the tree holds.
func (s *Server) getFsStats(ctx context.Context, _ *hdfs.GetFsStatusRequestProto) (*hdfs.GetFsStatsResponseProto, error) {
	sum, err := s.summary(ctx, "")
	if err != nil {
		return nil, err
	}
	return &hdfs.GetFsStatsResponseProto{
		Capacity: proto.Uint64(uint64(sum.length)), Used: proto.Uint64(uint64(sum.length)), Remaining: proto.Uint64(0),
		UnderReplicated: proto.Uint64(0), CorruptBlocks: proto.Uint64(0), MissingBlocks: proto.Uint64(0),
	}, nil
}

// noQuota is HDFS's "no quota" (-1 as an unsigned 64-bit field).
const noQuota = ^uint64(0)

func (s *Server) getContentSummary(ctx context.Context, req *hdfs.GetContentSummaryRequestProto) (*hdfs.GetContentSummaryResponseProto, error) {
	sum, err := s.summary(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &hdfs.GetContentSummaryResponseProto{Summary: &hdfs.ContentSummaryProto{
		Length: proto.Uint64(uint64(sum.length)), FileCount: proto.Uint64(uint64(sum.files)),
		DirectoryCount: proto.Uint64(uint64(sum.dirs)), Quota: proto.Uint64(noQuota),
		SpaceConsumed: proto.Uint64(uint64(sum.length)), SpaceQuota: proto.Uint64(noQuota),
	}}, nil
}

func (s *Server) getQuotaUsage(ctx context.Context, req *hdfs.GetQuotaUsageRequestProto) (*hdfs.GetQuotaUsageResponseProto, error) {
	sum, err := s.summary(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &hdfs.GetQuotaUsageResponseProto{Usage: &hdfs.QuotaUsageProto{
		FileAndDirectoryCount: proto.Uint64(uint64(sum.files + sum.dirs)), Quota: proto.Uint64(noQuota),
		SpaceConsumed: proto.Uint64(uint64(sum.length)), SpaceQuota: proto.Uint64(noQuota),
	}}, nil
}

// contentSummary counts a subtree; dirs includes its root when that is a
// directory, as HDFS counts.
type contentSummary struct{ length, files, dirs int64 }

// summary walks the subtree at p (the tree is four levels deep at most).
func (s *Server) summary(ctx context.Context, p string) (contentSummary, error) {
	e, err := s.v.Stat(ctx, p)
	if errors.Is(err, view.ErrNotExist) {
		return contentSummary{}, notFound(p)
	}
	if err != nil {
		return contentSummary{}, err
	}
	var sum contentSummary
	var walk func(e view.Entry) error
	walk = func(e view.Entry) error {
		if !e.IsDir {
			sum.files++
			sum.length += e.Size
			return nil
		}
		sum.dirs++
		es, err := s.v.List(ctx, e.Path)
		if errors.Is(err, view.ErrNotExist) {
			return nil // gone while walking
		}
		if err != nil {
			return err
		}
		for _, c := range es {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return sum, walk(e)
}

func (s *Server) getPreferredBlockSize(ctx context.Context, req *hdfs.GetPreferredBlockSizeRequestProto) (*hdfs.GetPreferredBlockSizeResponseProto, error) {
	if _, err := s.existing(ctx, req.GetFilename()); err != nil {
		return nil, err
	}
	return &hdfs.GetPreferredBlockSizeResponseProto{Bsize: proto.Uint64(uint64(s.cfg.BlockSize))}, nil
}

// getLinkTarget: the tree has no symbolic links.
func (s *Server) getLinkTarget(ctx context.Context, req *hdfs.GetLinkTargetRequestProto) (*hdfs.GetLinkTargetResponseProto, error) {
	if _, err := s.existing(ctx, req.GetPath()); err != nil {
		return nil, err
	}
	return nil, appErr(excIO, "Path %s is not a symbolic link", req.GetPath())
}

// hotPolicy is HDFS's default storage policy, the only one the head has.
func hotPolicy() *hdfs.BlockStoragePolicyProto {
	disk := &hdfs.StorageTypesProto{StorageTypes: []hdfs.StorageTypeProto{hdfs.StorageTypeProto_DISK}}
	return &hdfs.BlockStoragePolicyProto{PolicyId: proto.Uint32(hotPolicyID), Name: proto.String("HOT"),
		CreationPolicy: disk, CreationFallbackPolicy: &hdfs.StorageTypesProto{}, ReplicationFallbackPolicy: &hdfs.StorageTypesProto{}}
}

func (s *Server) getStoragePolicies(ctx context.Context, _ *hdfs.GetStoragePoliciesRequestProto) (*hdfs.GetStoragePoliciesResponseProto, error) {
	return &hdfs.GetStoragePoliciesResponseProto{Policies: []*hdfs.BlockStoragePolicyProto{hotPolicy()}}, nil
}

func (s *Server) getStoragePolicy(ctx context.Context, req *hdfs.GetStoragePolicyRequestProto) (*hdfs.GetStoragePolicyResponseProto, error) {
	if _, err := s.existing(ctx, req.GetPath()); err != nil {
		return nil, err
	}
	return &hdfs.GetStoragePolicyResponseProto{StoragePolicy: hotPolicy()}, nil
}

func (s *Server) getAclStatus(ctx context.Context, req *hdfs.GetAclStatusRequestProto) (*hdfs.GetAclStatusResponseProto, error) {
	e, err := s.existing(ctx, req.GetSrc())
	if err != nil {
		return nil, err
	}
	return &hdfs.GetAclStatusResponseProto{Result: &hdfs.AclStatusProto{
		Owner: proto.String(view.Owner), Group: proto.String(view.Group), Sticky: proto.Bool(false),
		Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(uint32(e.Mode().Perm()))},
	}}, nil
}

// checkAccess allows reading and listing, never writing.
func (s *Server) checkAccess(ctx context.Context, req *hdfs.CheckAccessRequestProto) (*hdfs.CheckAccessResponseProto, error) {
	if _, err := s.existing(ctx, req.GetPath()); err != nil {
		return nil, err
	}
	switch req.GetMode() {
	case hdfs.AclEntryProto_WRITE, hdfs.AclEntryProto_WRITE_EXECUTE, hdfs.AclEntryProto_READ_WRITE, hdfs.AclEntryProto_PERM_ALL:
		return nil, appErr(excAccessControl, "Permission denied: access=%v, path=%s: sluice's HDFS head is read-only", req.GetMode(), req.GetPath())
	}
	return &hdfs.CheckAccessResponseProto{}, nil
}

// isFileClosed: every chunk is complete.
func (s *Server) isFileClosed(ctx context.Context, req *hdfs.IsFileClosedRequestProto) (*hdfs.IsFileClosedResponseProto, error) {
	if _, err := s.existing(ctx, req.GetSrc()); err != nil {
		return nil, err
	}
	return &hdfs.IsFileClosedResponseProto{Result: proto.Bool(true)}, nil
}

// getHAServiceState: the head is always active (it has no standby).
func (s *Server) getHAServiceState(ctx context.Context, _ *hdfs.HAServiceStateRequestProto) (*hdfs.HAServiceStateResponseProto, error) {
	return &hdfs.HAServiceStateResponseProto{State: common.HAServiceStateProto_ACTIVE.Enum()}, nil
}

func (s *Server) getXAttrs(ctx context.Context, req *hdfs.GetXAttrsRequestProto) (*hdfs.GetXAttrsResponseProto, error) {
	if _, err := s.existing(ctx, req.GetSrc()); err != nil {
		return nil, err
	}
	if len(req.GetXAttrs()) > 0 {
		// HDFS's answer when a named attribute is missing.
		return nil, appErr(excIO, "At least one of the attributes provided was not found.")
	}
	return &hdfs.GetXAttrsResponseProto{}, nil
}

func (s *Server) listXAttrs(ctx context.Context, req *hdfs.ListXAttrsRequestProto) (*hdfs.ListXAttrsResponseProto, error) {
	if _, err := s.existing(ctx, req.GetSrc()); err != nil {
		return nil, err
	}
	return &hdfs.ListXAttrsResponseProto{}, nil
}

// getEZForPath: no encryption zones.
func (s *Server) getEZForPath(ctx context.Context, req *hdfs.GetEZForPathRequestProto) (*hdfs.GetEZForPathResponseProto, error) {
	if _, err := s.existing(ctx, req.GetSrc()); err != nil {
		return nil, err
	}
	return &hdfs.GetEZForPathResponseProto{}, nil
}

// getErasureCodingPolicy: files are replicated, not erasure coded.
func (s *Server) getErasureCodingPolicy(ctx context.Context, req *hdfs.GetErasureCodingPolicyRequestProto) (*hdfs.GetErasureCodingPolicyResponseProto, error) {
	if _, err := s.existing(ctx, req.GetSrc()); err != nil {
		return nil, err
	}
	return &hdfs.GetErasureCodingPolicyResponseProto{}, nil
}

// existing stats p, a missing entry being FileNotFoundException.
func (s *Server) existing(ctx context.Context, p string) (view.Entry, error) {
	e, err := s.v.Stat(ctx, p)
	if errors.Is(err, view.ErrNotExist) {
		return e, notFound(p)
	}
	return e, err
}

// Defaults HDFS clients ask for (getServerDefaults).
const (
	bytesPerChecksum = 512
	writePacketSize  = 64 << 10
	fileBufferSize   = 4096
	hotPolicyID      = 7
)

// status is the HdfsFileStatusProto of e, named name (the local name in
// a listing, empty for a single stat), with its block locations if locs.
func (s *Server) status(e view.Entry, name []byte, locs bool) *hdfs.HdfsFileStatusProto {
	ms := uint64(max(e.ModTime.UnixMilli(), 0))
	st := &hdfs.HdfsFileStatusProto{
		FileType:         hdfs.HdfsFileStatusProto_IS_FILE.Enum(),
		Path:             name,
		Length:           proto.Uint64(uint64(e.Size)),
		Permission:       &hdfs.FsPermissionProto{Perm: proto.Uint32(uint32(e.Mode().Perm()))},
		Owner:            proto.String(view.Owner),
		Group:            proto.String(view.Group),
		ModificationTime: proto.Uint64(ms),
		AccessTime:       proto.Uint64(ms),
		FileId:           proto.Uint64(e.ID),
		StoragePolicy:    proto.Uint32(0),
		Flags:            proto.Uint32(0),
	}
	if e.IsDir {
		st.FileType = hdfs.HdfsFileStatusProto_IS_DIR.Enum()
		st.BlockReplication = proto.Uint32(0)
		st.Blocksize = proto.Uint64(0)
		return st
	}
	st.BlockReplication = proto.Uint32(1)
	st.Blocksize = proto.Uint64(uint64(s.cfg.BlockSize))
	if locs {
		st.Locations = s.located(e, 0, uint64(max(e.Size, 0)))
	}
	return st
}
