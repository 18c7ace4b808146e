package s3gateway

import (
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// DefaultRegion is Config.Region's default: the region clients assume
// when none is configured.
const DefaultRegion = "us-east-1"

// Config configures a Handler.
type Config struct {
	// Credentials maps access keys to secret keys: requests signed (AWS
	// Signature Version 4) with one of them are served.
	Credentials map[string]string
	// Anonymous serves unsigned requests too. Signed requests are always
	// verified; a bad signature is refused even when Anonymous is set.
	Anonymous bool
	// Region is the one region requests may be signed for (DefaultRegion
	// if empty); GetBucketLocation answers it.
	Region string
	// Domain is the base domain of virtual-hosted-style requests: Host
	// "<bucket>.<Domain>" addresses <bucket>. Hosts "<bucket>.localhost"
	// are virtual-hosted whatever Domain is; every other Host is
	// path-style.
	Domain string
	// Logger; nothing is logged if nil.
	Logger logrus.FieldLogger
	// Now is the clock that signatures and skew are checked against
	// (time.Now if nil).
	Now func() time.Time
}

// Bounds of requests, checked before anything is looked up.
const (
	// MaxKeyLen is S3's own bound on a key, and the bound of prefix,
	// delimiter, start-after and marker.
	MaxKeyLen = 1024
	// MaxQueryLen bounds the raw query string.
	MaxQueryLen = 16 << 10
	// MaxKeys is max-keys' default and cap.
	MaxKeys = 1000
	// maxReadBody bounds the body of a read request (S3 reads have none;
	// a signed one is checked against its payload hash).
	maxReadBody = 64 << 10
)

// ParseCredentials parses access keys and their secrets: "ACCESS:SECRET"
// pairs separated by commas or newlines; blank lines and lines starting
// with '#' are ignored, so the same function reads the flag's value and a
// credentials file's contents. The secret is everything after the first
// colon. An access key given twice is an error.
func ParseCredentials(s string) (map[string]string, error) {
	out := map[string]string{}
	for ln, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, pair := range strings.Split(line, ",") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			ak, sk, ok := strings.Cut(pair, ":")
			ak, sk = strings.TrimSpace(ak), strings.TrimSpace(sk)
			if !ok || ak == "" || sk == "" {
				return nil, fmt.Errorf("s3gateway: credentials line %d: %q: want ACCESS:SECRET", ln+1, redact(pair))
			}
			if strings.ContainsAny(ak, "/ \t") {
				return nil, fmt.Errorf("s3gateway: credentials line %d: access key %q: no '/' or spaces allowed", ln+1, ak)
			}
			if _, dup := out[ak]; dup {
				return nil, fmt.Errorf("s3gateway: credentials line %d: access key %q given twice", ln+1, ak)
			}
			out[ak] = sk
		}
	}
	return out, nil
}

// redact keeps a secret out of an error message.
func redact(pair string) string {
	if ak, _, ok := strings.Cut(pair, ":"); ok {
		return ak + ":<secret>"
	}
	return pair
}
