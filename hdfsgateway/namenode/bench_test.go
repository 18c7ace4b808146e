package namenode

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/sirupsen/logrus"

	hpb "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
	"github.com/sluice-streams/sluice/tier2"
)

// BenchmarkCalls measures calls answered over one loopback connection,
// one at a time (as one client thread makes them), on tier 2 in a local
// directory.
func BenchmarkCalls(b *testing.B) {
	f := newFixture(b)
	quiet := logrus.New()
	quiet.SetLevel(logrus.PanicLevel)
	for _, c := range []struct {
		name   string
		method string
		req    proto.Message
	}{
		{"getFileInfo", "getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/" + tier2.ChunkPath("s", "a", 3, 0))}},
		{"getListing", "getListing", &hpb.GetListingRequestProto{Src: proto.String("/s/a/segment=0"), StartAfter: []byte{}, NeedLocation: proto.Bool(false)}},
		{"getBlockLocations", "getBlockLocations", &hpb.GetBlockLocationsRequestProto{Src: proto.String("/" + tier2.ChunkPath("s", "a", 3, 0)), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 30)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := New(f.v, Config{DataAddr: func() string { return dataAddr }, BlockSize: testBlockSize, Logger: quiet})
			l := newListener(b)
			go s.Serve(l)
			defer s.Close()
			rc := dialRaw(b, l.Addr().String())
			rc.handshake()
			b.ResetTimer()
			for range b.N {
				rc.call(c.method, c.req)
			}
		})
	}
}
