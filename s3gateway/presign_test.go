package s3gateway

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPresignedExpiryAndRegion: a URL boto3 presigned for 60 s reads the
// chunk while valid and is AccessDenied once the head's clock is past
// it. A boto3 client configured for another region than the head's gets
// AuthorizationHeaderMalformed naming the head's region, and boto3, as
// with S3, signs again for that region and succeeds (TestSignatureRefusals
// checks the error itself).
func TestPresignedExpiryAndRegion(t *testing.T) {
	var skew atomic.Int64 // how far the head's clock is ahead
	f := newFixture(t, Config{Region: "eu-central-1", Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	key := f.keys("logs")[0]
	script := `
import boto3, botocore, sys
from botocore.config import Config
def client(region):
    return boto3.client("s3", endpoint_url=sys.argv[1], region_name=region, aws_access_key_id=sys.argv[2],
                        aws_secret_access_key=sys.argv[3], config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
print(client("eu-central-1").generate_presigned_url("get_object", Params={"Bucket": "logs", "Key": sys.argv[4]}, ExpiresIn=60))
try:
    client("us-east-1").list_objects_v2(Bucket="logs")
    print("no error")
except botocore.exceptions.ClientError as e:
    print(e.response["Error"]["Code"])
print(client("eu-central-1").list_objects_v2(Bucket="logs")["KeyCount"])
`
	out, stderr, err := runCmd(venvPython(t), "-c", script, f.srv.URL, testKey, testSecret, key)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("output %q", out)
	}
	url, regionErr, count := lines[0], lines[1], lines[2]
	if regionErr != "no error" || count != itoa(len(f.keys("logs"))) {
		t.Errorf("other region: %q; own region's KeyCount %s", regionErr, count)
	}
	get := func() (int, []byte) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if status, body := get(); status != 200 || sum(t, f.chunks["logs/"+key]) != sha(body) {
		t.Fatalf("presigned GET: %d", status)
	}
	skew.Store(int64(2 * time.Minute))
	if status, body := get(); status != 403 || !strings.Contains(string(body), "<Code>AccessDenied</Code>") || !strings.Contains(string(body), "expired") {
		t.Fatalf("expired presigned GET: %d %s", status, body)
	}
}
