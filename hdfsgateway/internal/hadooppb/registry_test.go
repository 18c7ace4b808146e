package hadooppb_test

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
	_ "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
	_ "github.com/sluice-streams/sluice/tier2/hdfs" // colinmarc/hdfs/v2's copies of the same files
)

// TestCoexistsWithTheHDFSBackend: this test binary links the generated
// messages and colinmarc/hdfs/v2 (the HDFS tier-2 backend), as the
// sluice binary does; with clashing file or message names it would have
// panicked before running.
func TestCoexistsWithTheHDFSBackend(t *testing.T) {
	for _, name := range []string{"sluice.hadoop.hdfs.OpReadBlockProto", "sluice.hadoop.common.RpcRequestHeaderProto"} {
		if _, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
