package hdfs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"syscall"

	"github.com/colinmarc/hdfs/v2"

	"github.com/sluice-streams/sluice/tier2"
)

// passing are the Java exceptions of NameNode refusals that pass with
// time: they match tier2.ErrUnavailable.
var passing = map[string]bool{
	"org.apache.hadoop.hdfs.server.namenode.SafeModeException":            true,
	"org.apache.hadoop.ipc.RetriableException":                            true,
	"org.apache.hadoop.ipc.StandbyException":                              true,
	"org.apache.hadoop.ipc.ObserverRetryOnActiveException":                true,
	"org.apache.hadoop.ipc.CallQueueManager$CallQueueOverflowException":   true,
	"org.apache.hadoop.hdfs.protocol.QuotaExceededException":              true,
	"org.apache.hadoop.hdfs.protocol.NSQuotaExceededException":            true,
	"org.apache.hadoop.hdfs.protocol.DSQuotaExceededException":            true,
	"org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException": true,
	"org.apache.hadoop.util.DiskChecker$DiskOutOfSpaceException":          true,
}

// classify returns err, wrapped so that it also matches
// tier2.ErrUnavailable when it may pass (see the package doc). Answers
// about the path (not found, exists, permission, not empty, invalid) are
// returned as they are.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, answer := range []error{iofs.ErrNotExist, iofs.ErrExist, iofs.ErrPermission, iofs.ErrInvalid, syscall.ENOTEMPTY} {
		if errors.Is(err, answer) {
			return err
		}
	}
	var remote hdfs.Error
	if errors.As(err, &remote) {
		ex := remote.Exception()
		// addBlock fails with a bare IOException when no DataNode can
		// take the block ("could only be written to 0 of the N
		// minReplication nodes"): a full or absent cluster.
		if passing[ex] || (remote.Method() == "addBlock" && ex == "java.io.IOException") {
			return fmt.Errorf("%w: %w", tier2.ErrUnavailable, err)
		}
		return err
	}
	// Anything else did not come from the NameNode's answer: a connection
	// that failed, timed out or closed, a DataNode pipeline that broke, or
	// a file the NameNode still reports as replicating.
	return fmt.Errorf("%w: %w", tier2.ErrUnavailable, err)
}
