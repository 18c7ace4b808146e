package webhdfs

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// call sends one request and returns the status, the body and its
// Content-Type.
func call(t *testing.T, method, url string) (int, []byte, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header.Get("Content-Type")
}

// decode parses a JSON body into generic values (numbers as json.Number).
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return m
}

// norm turns a JSON-shaped Go value into what decode returns.
func norm(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, b)
}

type obj = map[string]any

func TestOpsAnswerHadoopsJSON(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	chunk := tier2.ChunkPath("sc", "st", 0, 0)
	ce, err := f.v.Stat(ctx, chunk)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := f.v.Stat(ctx, "")
	stream, _ := f.v.Stat(ctx, "sc/st")
	seg0, _ := f.v.Stat(ctx, "sc/st/segment=0")
	seg1, _ := f.v.Stat(ctx, "sc/st/segment=1")
	big, _ := f.v.Stat(ctx, f.big)
	fileStatus := func(e view.Entry, suffix string) obj {
		return obj{"accessTime": e.ModTime.UnixMilli(), "blockSize": testBlockSize, "childrenNum": 0,
			"fileId": e.ID, "group": "supergroup", "length": e.Size, "modificationTime": e.ModTime.UnixMilli(),
			"owner": "sluice", "pathSuffix": suffix, "permission": "444", "replication": 1,
			"storagePolicy": 0, "type": "FILE"}
	}
	dirStatus := func(e view.Entry, suffix string, children int) obj {
		return obj{"accessTime": 0, "blockSize": 0, "childrenNum": children,
			"fileId": e.ID, "group": "supergroup", "length": 0, "modificationTime": e.ModTime.UnixMilli(),
			"owner": "sluice", "pathSuffix": suffix, "permission": "555", "replication": 0,
			"storagePolicy": 0, "type": "DIRECTORY"}
	}
	sum, err := blocks.Checksum(bytes.NewReader(f.data(t, chunk)), chunk, ce.Size, testBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	bigSum, err := blocks.Checksum(bytes.NewReader(f.data(t, f.big)), f.big, big.Size, testBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	if bigSum.CRCsPerBlock != testBlockSize/512 {
		t.Fatalf("the big chunk has one block: %+v (size %d)", bigSum, big.Size)
	}
	var bigDirSize int64
	for p := range f.chunks {
		e, _ := f.v.Stat(ctx, p)
		bigDirSize += e.Size
	}
	host := strings.TrimPrefix(f.srv.URL, "http://")
	hostOnly := host[:strings.LastIndexByte(host, ':')]
	var locs []any
	for _, b := range blocks.Of(f.big, big.Size, testBlockSize)[1:3] {
		locs = append(locs, obj{"cachedHosts": []any{}, "corrupt": false, "hosts": []any{hostOnly},
			"length": b.Len, "names": []any{host}, "offset": b.Offset,
			"storageTypes": []any{"DISK"}, "topologyPaths": []any{"/default-rack/" + host}})
	}
	// A length up to the largest long (as Hadoop's client asks for "the
	// rest") reaches every block from the offset on.
	var restLocs []any
	for _, b := range blocks.Of(f.big, big.Size, testBlockSize)[1:] {
		restLocs = append(restLocs, obj{"cachedHosts": []any{}, "corrupt": false, "hosts": []any{hostOnly},
			"length": b.Len, "names": []any{host}, "offset": b.Offset,
			"storageTypes": []any{"DISK"}, "topologyPaths": []any{"/default-rack/" + host}})
	}
	hot := obj{"copyOnCreateFile": false, "creationFallbacks": []any{}, "id": 7, "name": "HOT",
		"replicationFallbacks": []any{"ARCHIVE"}, "storageTypes": []any{"DISK"}}

	for _, c := range []struct {
		name, url string
		want      obj
	}{
		{"file status", "/sc/st/segment=0/" + tier2.ChunkName(0) + "?op=GETFILESTATUS", obj{"FileStatus": fileStatus(ce, "")}},
		{"root status", "/?op=getfilestatus", obj{"FileStatus": dirStatus(root, "", 2)}},
		{"root status without slash", "?op=GETFILESTATUS", obj{"FileStatus": dirStatus(root, "", 2)}},
		{"stream status", "/sc/st/?op=GETFILESTATUS&user.name=alice", obj{"FileStatus": dirStatus(stream, "", 2)}},
		{"link status", "/sc/st?op=GETFILELINKSTATUS", obj{"FileStatus": dirStatus(stream, "", 2)}},
		{"list a stream", "/sc/st?op=LISTSTATUS", obj{"FileStatuses": obj{"FileStatus": []any{
			dirStatus(seg0, "segment=0", -1), dirStatus(seg1, "segment=1", -1)}}}},
		{"list a file", "/" + chunk + "?op=LISTSTATUS", obj{"FileStatuses": obj{"FileStatus": []any{fileStatus(ce, "")}}}},
		{"list an empty stream", "/sc/empty?op=LISTSTATUS", obj{"FileStatuses": obj{"FileStatus": []any{}}}},
		{"batch", "/sc/st/segment=0?op=LISTSTATUS_BATCH", obj{"DirectoryListing": obj{
			"partialListing": obj{"FileStatuses": obj{"FileStatus": []any{
				fileStatus(ce, tier2.ChunkName(0)), fileStatus(big, tier2.ChunkName(100000))}}},
			"remainingEntries": 0}}},
		{"batch after", "/sc/st/segment=0?op=LISTSTATUS_BATCH&startAfter=" + tier2.ChunkName(0), obj{"DirectoryListing": obj{
			"partialListing":   obj{"FileStatuses": obj{"FileStatus": []any{fileStatus(big, tier2.ChunkName(100000))}}},
			"remainingEntries": 0}}},
		{"content summary", "/sc?op=GETCONTENTSUMMARY", obj{"ContentSummary": obj{
			"directoryCount": 5, "ecPolicy": "", "fileCount": 3, "length": bigDirSize, "quota": -1,
			"snapshotDirectoryCount": 0, "snapshotFileCount": 0, "snapshotLength": 0, "snapshotSpaceConsumed": 0,
			"spaceConsumed": bigDirSize, "spaceQuota": -1, "typeQuota": obj{}}}},
		{"content summary of a file", "/" + chunk + "?op=GETCONTENTSUMMARY", obj{"ContentSummary": obj{
			"directoryCount": 0, "ecPolicy": "", "fileCount": 1, "length": ce.Size, "quota": -1,
			"snapshotDirectoryCount": 0, "snapshotFileCount": 0, "snapshotLength": 0, "snapshotSpaceConsumed": 0,
			"spaceConsumed": ce.Size, "spaceQuota": -1, "typeQuota": obj{}}}},
		{"quota usage", "/sc/st?op=GETQUOTAUSAGE", obj{"QuotaUsage": obj{
			"fileAndDirectoryCount": 6, "quota": -1, "spaceConsumed": bigDirSize, "spaceQuota": -1, "typeQuota": obj{}}}},
		{"checksum", "/" + chunk + "?op=GETFILECHECKSUM", obj{"FileChecksum": obj{
			"algorithm": "MD5-of-0MD5-of-512CRC32C", "bytes": hex.EncodeToString(sum.Bytes()), "length": 28}}},
		{"checksum of several blocks", "/" + f.big + "?op=GETFILECHECKSUM", obj{"FileChecksum": obj{
			"algorithm": fmt.Sprintf("MD5-of-%dMD5-of-512CRC32C", testBlockSize/512), "bytes": hex.EncodeToString(bigSum.Bytes()), "length": 28}}},
		{"block locations", fmt.Sprintf("/%s?op=GETFILEBLOCKLOCATIONS&offset=%d&length=%d", f.big, testBlockSize+1, testBlockSize),
			obj{"BlockLocations": obj{"BlockLocation": locs}}},
		{"block locations to the end", fmt.Sprintf("/%s?op=GETFILEBLOCKLOCATIONS&offset=%d&length=%d", f.big, testBlockSize+1, int64(math.MaxInt64)),
			obj{"BlockLocations": obj{"BlockLocation": restLocs}}},
		{"home", "/?op=GETHOMEDIRECTORY&user.name=alice", obj{"Path": "/user/alice"}},
		{"home of nobody", "/?op=GETHOMEDIRECTORY", obj{"Path": "/user/dr.who"}},
		{"trash root", "/sc?op=GETTRASHROOT&user.name=bob", obj{"Path": "/user/bob/.Trash"}},
		{"delegation token", "/?op=GETDELEGATIONTOKEN&renewer=x", obj{"Token": nil}},
		{"server defaults", "/?op=GETSERVERDEFAULTS", obj{"FsServerDefaults": obj{
			"blockSize": testBlockSize, "bytesPerChecksum": 512, "checksumType": 2, "defaultStoragePolicyId": 7,
			"encryptDataTransfer": false, "fileBufferSize": 4096, "keyProviderUri": "", "replication": 1,
			"trashInterval": 0, "writePacketSize": 65536}}},
		{"acl status", "/sc?op=GETACLSTATUS", obj{"AclStatus": obj{"entries": []any{}, "group": "supergroup",
			"owner": "sluice", "permission": "555", "stickyBit": false}}},
		{"xattrs", "/" + chunk + "?op=GETXATTRS&encoding=HEX", obj{"XAttrs": []any{}}},
		{"xattr names", "/" + chunk + "?op=LISTXATTRS", obj{"XAttrNames": "[]"}},
		{"storage policy", "/" + chunk + "?op=GETSTORAGEPOLICY", obj{"BlockStoragePolicy": hot}},
		{"storage policies", "/?op=GETALLSTORAGEPOLICY", obj{"BlockStoragePolicies": obj{"BlockStoragePolicy": []any{hot}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body, ctype := call(t, http.MethodGet, f.srv.URL+Prefix+c.url)
			if status != http.StatusOK || ctype != "application/json" {
				t.Fatalf("status %d %q: %s", status, ctype, body)
			}
			if got, want := decode(t, body), norm(t, c.want); !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %s\nwant %s", body, mustJSON(want))
			}
		})
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestErrorsAreRemoteExceptions(t *testing.T) {
	f := newFixture(t)
	chunk := "/" + tier2.ChunkPath("sc", "st", 0, 0)
	ro := obj{"exception": "AccessControlException", "javaClassName": "org.apache.hadoop.security.AccessControlException", "message": ReadOnlyMessage}
	fnf := func(msg string) obj {
		return obj{"exception": "FileNotFoundException", "javaClassName": "java.io.FileNotFoundException", "message": msg}
	}
	for _, c := range []struct {
		method, url string
		status      int
		want        obj // nil: only the class is checked
		class       string
	}{
		{"GET", "/nope?op=GETFILESTATUS", 404, fnf("File does not exist: /nope"), ""},
		{"GET", "/sc/nope?op=LISTSTATUS", 404, fnf("File /sc/nope does not exist."), ""},
		{"GET", chunk + "/x?op=GETFILESTATUS", 404, fnf("File does not exist: " + chunk + "/x"), ""},
		{"GET", "/sc/st?op=OPEN", 404, fnf("Path is not a file: /sc/st"), ""},
		{"GET", "/sc/st/segment=1/" + strings.TrimPrefix(tier2.TempChunkPath("sc", "st", 1, 777), "sc/st/segment=1/") + "?op=OPEN", 404, nil, "java.io.FileNotFoundException"},
		{"GET", "/_sluice?op=LISTSTATUS", 404, nil, "java.io.FileNotFoundException"},
		{"GET", chunk + "?op=OPEN&offset=99999999", 403, obj{"exception": "IOException", "javaClassName": "java.io.IOException", "message": fmt.Sprintf("Offset=99999999 out of the range [0, %d); OPEN, path=%s", len(f.data(t, chunk[1:])), chunk)}, ""},
		{"GET", chunk + fmt.Sprintf("?op=OPEN&offset=%d", len(f.data(t, chunk[1:]))), 403, nil, "java.io.IOException"},
		{"GET", chunk + "?op=OPEN&offset=-1", 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", chunk + "?op=OPEN&length=x", 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", chunk + "?op=OPEN&buffersize=0", 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", chunk + "?op=BOGUS", 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", chunk, 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", chunk + "?op=GETFILESTATUS&user.name=a/b", 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", chunk + "?op=GETFILESTATUS&x=%zz", 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", "/" + strings.Repeat("a", MaxPath+1) + "?op=GETFILESTATUS", 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", "/?op=GETFILESTATUS&x=" + strings.Repeat("a", MaxQuery), 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", "/?op=GETSNAPSHOTDIFF&oldsnapshotname=a&snapshotname=b", 400, nil, "java.lang.UnsupportedOperationException"},
		{"GET", "/?op=GETSTATUS", 400, nil, "java.lang.UnsupportedOperationException"},
		{"GET", chunk + "?op=GETXATTRS", 400, obj{"exception": "IllegalArgumentException", "javaClassName": "java.lang.IllegalArgumentException", "message": "Required param encoding for op: GETXATTRS is null or empty"}, ""},
		{"GET", chunk + "?op=GETXATTRS&encoding=TEXT&xattr.name=user.a", 403, nil, "java.io.IOException"},
		{"GET", chunk + "?op=CHECKACCESS&fsaction=-w-", 403, nil, "org.apache.hadoop.security.AccessControlException"},
		{"GET", chunk + "?op=CHECKACCESS&fsaction=--x", 403, nil, "org.apache.hadoop.security.AccessControlException"},
		{"GET", chunk + "?op=CHECKACCESS&fsaction=bad", 400, nil, "java.lang.IllegalArgumentException"},
		{"GET", "/nope?op=CHECKACCESS&fsaction=r--", 404, nil, "java.io.FileNotFoundException"},
		{"GET", chunk + "?op=MKDIRS", 403, ro, ""},
		{"PUT", "/new?op=MKDIRS", 403, ro, ""},
		{"PUT", "/sc/x?op=CREATE&overwrite=true", 403, ro, ""},
		{"PUT", chunk + "?op=RENAME&destination=/x", 403, ro, ""},
		{"PUT", chunk + "?op=SETPERMISSION&permission=777", 403, ro, ""},
		{"PUT", chunk + "?op=SETOWNER&owner=x", 403, ro, ""},
		{"PUT", chunk + "?op=SETTIMES&modificationtime=1", 403, ro, ""},
		{"PUT", chunk + "?op=GETFILESTATUS", 403, ro, ""},
		{"POST", chunk + "?op=APPEND", 403, ro, ""},
		{"POST", chunk + "?op=TRUNCATE&newlength=0", 403, ro, ""},
		{"POST", chunk + "?op=CONCAT&sources=/a", 403, ro, ""},
		{"DELETE", chunk + "?op=DELETE&recursive=true", 403, ro, ""},
		{"DELETE", "/sc?op=DELETESNAPSHOT&snapshotname=s", 403, ro, ""},
		{"PATCH", chunk + "?op=GETFILESTATUS", 400, nil, "java.lang.IllegalArgumentException"},
	} {
		t.Run(c.method+" "+truncate(c.url), func(t *testing.T) {
			status, body, ctype := call(t, c.method, f.srv.URL+Prefix+c.url)
			if status != c.status || ctype != "application/json" {
				t.Fatalf("status %d %q, want %d: %s", status, ctype, c.status, body)
			}
			got := decode(t, body)
			re, ok := got["RemoteException"].(map[string]any)
			if !ok || len(got) != 1 {
				t.Fatalf("not a RemoteException: %s", body)
			}
			if c.want != nil {
				if want := norm(t, c.want); !reflect.DeepEqual(re, want) {
					t.Fatalf("got %s, want %s", body, mustJSON(want))
				}
				return
			}
			simple := c.class[strings.LastIndexByte(c.class, '.')+1:]
			if re["javaClassName"] != c.class || re["exception"] != simple || re["message"] == "" {
				t.Fatalf("got %s, want class %s", body, c.class)
			}
		})
	}
	// Nothing changed.
	status, _, _ := call(t, "GET", f.srv.URL+Prefix+"/new?op=GETFILESTATUS")
	if status != 404 {
		t.Fatalf("MKDIRS made /new: %d", status)
	}
	if _, err := f.v.Stat(context.Background(), chunk); err != nil {
		t.Fatalf("the chunk is gone: %v", err)
	}
	// Outside the prefix.
	if status, _, _ := call(t, "GET", f.srv.URL+"/webhdfs/v2/?op=GETFILESTATUS"); status != 404 {
		t.Fatalf("/webhdfs/v2: %d", status)
	}
	if status, _, _ := call(t, "GET", f.srv.URL+"/webhdfs/v1x?op=GETFILESTATUS"); status != 404 {
		t.Fatalf("/webhdfs/v1x: %d", status)
	}
}

func TestOpenServesRanges(t *testing.T) {
	f := newFixture(t)
	data := f.data(t, f.big)
	size := int64(len(data))
	for _, c := range []struct {
		query    string
		from, to int64
	}{
		{"", 0, size},
		{"&offset=0&length=0", 0, 0},
		{"&offset=10&length=100", 10, 110},
		{"&offset=70000", 70000, size},
		{"&offset=100&length=99999999", 100, size},
		{fmt.Sprintf("&offset=%d&length=5&buffersize=4096", size-3), size - 3, size},
	} {
		status, body, ctype := call(t, http.MethodGet, f.srv.URL+Prefix+"/"+f.big+"?op=OPEN"+c.query)
		if status != 200 || ctype != "application/octet-stream" {
			t.Fatalf("%s: status %d %q", c.query, status, ctype)
		}
		if !bytes.Equal(body, data[c.from:c.to]) {
			t.Fatalf("%s: %d bytes, want [%d, %d)", c.query, len(body), c.from, c.to)
		}
	}
	resp, err := http.Head(f.srv.URL + Prefix + "/" + f.big + "?op=OPEN&offset=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != size-1 {
		t.Fatalf("HEAD: %d, Content-Length %d", resp.StatusCode, resp.ContentLength)
	}
}

// TestBatchesPage lists a directory of more than BatchSize entries in
// batches, as Hadoop's listStatusIterator does.
func TestBatchesPage(t *testing.T) {
	f := newFixture(t)
	streams := make([]string, BatchSize+5)
	for i := range streams {
		streams[i] = fmt.Sprintf("s%05d", i)
	}
	v := view.New(f.st, viewtest.NewCatalog(map[string][]string{"many": streams}), view.Options{CatalogTTL: -1})
	srv := f.srv
	srv.Config.Handler = NewHandler(v, Config{})
	var names []string
	after := ""
	for round := 0; ; round++ {
		if round > 3 {
			t.Fatal("no end to the batches")
		}
		status, body, _ := call(t, "GET", srv.URL+Prefix+"/many?op=LISTSTATUS_BATCH&startAfter="+after)
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		var got struct {
			DirectoryListing struct {
				PartialListing struct {
					FileStatuses struct{ FileStatus []fileStatus }
				} `json:"partialListing"`
				RemainingEntries int `json:"remainingEntries"`
			}
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		page := got.DirectoryListing.PartialListing.FileStatuses.FileStatus
		for _, s := range page {
			names = append(names, s.PathSuffix)
		}
		if got.DirectoryListing.RemainingEntries == 0 {
			break
		}
		if len(page) != BatchSize || got.DirectoryListing.RemainingEntries != len(streams)-len(names) {
			t.Fatalf("page of %d, %d remaining", len(page), got.DirectoryListing.RemainingEntries)
		}
		after = page[len(page)-1].PathSuffix
	}
	if !reflect.DeepEqual(names, streams) {
		t.Fatalf("listed %d names, want %d", len(names), len(streams))
	}
}

func TestUnavailableIsRetriable(t *testing.T) {
	f := newFixture(t)
	f.srv.Config.Handler = NewHandler(view.New(f.st, viewtest.Down(fmt.Errorf("controller down")), view.Options{CatalogTTL: -1}), Config{})
	status, body, _ := call(t, "GET", f.srv.URL+Prefix+"/sc/st?op=LISTSTATUS")
	re, _ := decode(t, body)["RemoteException"].(map[string]any)
	if status != http.StatusServiceUnavailable || re["javaClassName"] != "org.apache.hadoop.ipc.RetriableException" {
		t.Fatalf("status %d: %s", status, body)
	}
}
