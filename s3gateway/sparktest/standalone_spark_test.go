//go:build spark

package sparktest_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/s3gateway/sparktest"
)

// TestStandaloneS3HeadInSpark reads a real `sluice standalone`'s stream
// through its S3 head with Spark's s3a://, signed with the key the
// standalone was given in SLUICE_S3_CREDENTIALS: every event written
// comes back once, with its offset as the key, and a wrong secret is
// refused with a 403.
func TestStandaloneS3HeadInSpark(t *testing.T) {
	const wait = 2 * time.Minute
	spark := sparktest.Find(t)
	bin, err := proctest.BuildSluice(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := proctest.Start(t, bin, "standalone", []string{"SLUICE_S3_CREDENTIALS=AKSPARK:spark-secret"},
		"--log-level", "info", "standalone", "--data", t.TempDir(),
		"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0", "--no-hdfs-head", "--no-nfs-head",
		"--s3-addr", "127.0.0.1:0", "--tier2", t.TempDir(), "--tier-max-lag", "1s", "--tier-chunk-bytes", "65536")
	ctl := ctlclient.NewClient("http://" + p.Line(t, "controller listening on ", wait))
	endpoint := "http://" + p.Line(t, "s3 head listening on ", wait)

	var evs [][]byte
	for i := range 2000 {
		evs = append(evs, []byte(fmt.Sprintf("reading-%04d-%s", i, bytes.Repeat([]byte{byte(i)}, i%300))))
	}
	proctest.WriteTiered(t, ctl, "iot", "frames", 2, evs, wait)

	res := spark.Run(t, sparktest.Request{
		Conf: sparktest.S3AConf(endpoint, "us-east-1", "AKSPARK", "spark-secret"),
		Reads: map[string]sparktest.Read{
			"all": {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames/segment=*/*.seq"},
			"wrong secret": {Kind: sparktest.SequenceFile, Path: "s3a://iot/frames/segment=*/*.seq", Conf: map[string]string{
				"fs.s3a.secret.key": "not-the-secret", "fs.s3a.impl.disable.cache": "true"}},
		},
	})
	all := res["all"]
	if all.Error != "" {
		t.Fatalf("sc.sequenceFile through the standalone's S3 head: %s", all.Error)
	}
	var got []string
	for _, r := range all.Records {
		got = append(got, string(r.Value))
	}
	var want []string
	for _, e := range evs {
		want = append(want, string(e))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Spark read %d events through the S3 head, %d were written (equal as sets: false)", len(got), len(want))
	}
	if e := res["wrong secret"].Error; !sparktest.HasStatus(e, 403) {
		t.Fatalf("a wrong secret: %q; want a 403", e)
	}
}
