package webhdfs

import (
	"github.com/sluice-streams/sluice/tier2/view"
)

// The JSON bodies, as Hadoop's JsonUtil writes them and JsonUtilClient
// reads them. Fields are in Hadoop's order (its maps are sorted by key).

// fileStatus is one HdfsFileStatus.
type fileStatus struct {
	AccessTime       int64  `json:"accessTime"`
	BlockSize        int64  `json:"blockSize"`
	ChildrenNum      int    `json:"childrenNum"`
	FileID           uint64 `json:"fileId"`
	Group            string `json:"group"`
	Length           int64  `json:"length"`
	ModificationTime int64  `json:"modificationTime"`
	Owner            string `json:"owner"`
	PathSuffix       string `json:"pathSuffix"`
	Permission       string `json:"permission"`
	Replication      int    `json:"replication"`
	StoragePolicy    int    `json:"storagePolicy"`
	Type             string `json:"type"`
}

// Replication is every file's replication: one copy, on tier 2.
const Replication = 1

// status returns e's FileStatus; suffix is its pathSuffix and children
// its childrenNum (-1, what Hadoop's client assumes when the field is
// missing, when not counted).
func (h *handler) status(e view.Entry, suffix string, children int) fileStatus {
	fs := fileStatus{
		ChildrenNum: children, FileID: e.ID, Group: view.Group, Owner: view.Owner,
		ModificationTime: e.ModTime.UnixMilli(), PathSuffix: suffix,
		Permission: "555", Type: "DIRECTORY",
	}
	if !e.IsDir {
		fs.AccessTime = fs.ModificationTime
		fs.BlockSize = h.blockSize
		fs.Length = e.Size
		fs.Permission = "444"
		fs.Replication = Replication
		fs.Type = "FILE"
		fs.ChildrenNum = 0
	}
	return fs
}

type contentSummary struct {
	DirectoryCount int64  `json:"directoryCount"`
	ECPolicy       string `json:"ecPolicy"` // "" for replicated files
	FileCount      int64  `json:"fileCount"`
	Length         int64  `json:"length"`
	Quota          int64  `json:"quota"`
	// No snapshots: always 0.
	SnapshotDirectoryCount int64          `json:"snapshotDirectoryCount"`
	SnapshotFileCount      int64          `json:"snapshotFileCount"`
	SnapshotLength         int64          `json:"snapshotLength"`
	SnapshotSpaceConsumed  int64          `json:"snapshotSpaceConsumed"`
	SpaceConsumed          int64          `json:"spaceConsumed"`
	SpaceQuota             int64          `json:"spaceQuota"`
	TypeQuota              map[string]any `json:"typeQuota"`
}

type quotaUsage struct {
	FileAndDirectoryCount int64          `json:"fileAndDirectoryCount"`
	Quota                 int64          `json:"quota"`
	SpaceConsumed         int64          `json:"spaceConsumed"`
	SpaceQuota            int64          `json:"spaceQuota"`
	TypeQuota             map[string]any `json:"typeQuota"`
}

type fileChecksum struct {
	Algorithm string `json:"algorithm"`
	Bytes     string `json:"bytes"`
	Length    int    `json:"length"`
}

type aclStatus struct {
	Entries    []string `json:"entries"`
	Group      string   `json:"group"`
	Owner      string   `json:"owner"`
	Permission string   `json:"permission"`
	StickyBit  bool     `json:"stickyBit"`
}

type serverDefaults struct {
	BlockSize              int64  `json:"blockSize"`
	BytesPerChecksum       int    `json:"bytesPerChecksum"`
	ChecksumType           int    `json:"checksumType"`
	DefaultStoragePolicyID int    `json:"defaultStoragePolicyId"`
	EncryptDataTransfer    bool   `json:"encryptDataTransfer"`
	FileBufferSize         int    `json:"fileBufferSize"`
	KeyProviderURI         string `json:"keyProviderUri"`
	Replication            int    `json:"replication"`
	TrashInterval          int64  `json:"trashInterval"`
	WritePacketSize        int    `json:"writePacketSize"`
}

// checksumCRC32C is DataChecksum.Type.CRC32C's id.
const checksumCRC32C = 2

type storagePolicy struct {
	CopyOnCreateFile     bool     `json:"copyOnCreateFile"`
	CreationFallbacks    []string `json:"creationFallbacks"`
	ID                   int      `json:"id"`
	Name                 string   `json:"name"`
	ReplicationFallbacks []string `json:"replicationFallbacks"`
	StorageTypes         []string `json:"storageTypes"`
}

// hot is HDFS's default storage policy, the one every file has.
var hot = storagePolicy{ID: 7, Name: "HOT", CreationFallbacks: []string{}, ReplicationFallbacks: []string{"ARCHIVE"}, StorageTypes: []string{"DISK"}}

type blockLocation struct {
	CachedHosts   []string `json:"cachedHosts"`
	Corrupt       bool     `json:"corrupt"`
	Hosts         []string `json:"hosts"`
	Length        int64    `json:"length"`
	Names         []string `json:"names"`
	Offset        int64    `json:"offset"`
	StorageTypes  []string `json:"storageTypes"`
	TopologyPaths []string `json:"topologyPaths"`
}

type remoteException struct {
	Exception     string `json:"exception"`
	JavaClassName string `json:"javaClassName"`
	Message       string `json:"message"`
}
