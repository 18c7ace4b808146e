package hdfs

import (
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
)

// remoteErr is an exception as the NameNode reports it.
type remoteErr struct{ method, exception string }

func (e remoteErr) Method() string    { return e.method }
func (e remoteErr) Desc() string      { return "" }
func (e remoteErr) Exception() string { return e.exception }
func (e remoteErr) Message() string   { return e.exception }
func (e remoteErr) Error() string     { return e.method + ": " + e.exception }

func TestClassify(t *testing.T) {
	cases := []struct {
		err         error
		unavailable bool
		also        error
	}{
		{&os.PathError{Op: "open", Path: "/x", Err: os.ErrNotExist}, false, tier2.ErrNotExist},
		{&os.PathError{Op: "create", Path: "/x", Err: os.ErrExist}, false, tier2.ErrExist},
		{&os.PathError{Op: "remove", Path: "/x", Err: os.ErrPermission}, false, iofs.ErrPermission},
		{&os.PathError{Op: "remove", Path: "/x", Err: syscall.ENOTEMPTY}, false, syscall.ENOTEMPTY},
		{remoteErr{"mkdirs", "org.apache.hadoop.hdfs.server.namenode.SafeModeException"}, true, nil},
		{remoteErr{"create", "org.apache.hadoop.ipc.RetriableException"}, true, nil},
		{remoteErr{"getFileInfo", "org.apache.hadoop.ipc.StandbyException"}, true, nil},
		{remoteErr{"create", "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException"}, true, nil},
		{remoteErr{"addBlock", "org.apache.hadoop.hdfs.protocol.DSQuotaExceededException"}, true, nil},
		{remoteErr{"addBlock", "java.io.IOException"}, true, nil},
		{remoteErr{"rename2", "java.io.IOException"}, false, nil},
		{remoteErr{"create", "org.apache.hadoop.fs.InvalidPathException"}, false, nil},
		{&os.PathError{Op: "create", Path: "/x", Err: remoteErr{"create", "org.apache.hadoop.ipc.RetriableException"}}, true, nil},
		{errors.New("no available namenodes: dial tcp 127.0.0.1:1: connect: connection refused"), true, nil},
		{io.ErrUnexpectedEOF, true, nil},
	}
	for _, c := range cases {
		got := classify(c.err)
		if !errors.Is(got, c.err) {
			t.Errorf("classify(%v) = %v, lost the cause", c.err, got)
		}
		if errors.Is(got, tier2.ErrUnavailable) != c.unavailable {
			t.Errorf("classify(%v) = %v, unavailable %v, want %v", c.err, got, !c.unavailable, c.unavailable)
		}
		if c.also != nil && !errors.Is(got, c.also) {
			t.Errorf("classify(%v) = %v, want it to match %v", c.err, got, c.also)
		}
	}
	if classify(nil) != nil {
		t.Error("classify(nil) != nil")
	}
}
