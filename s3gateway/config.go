package s3gateway

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/s3keys"
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
	// AllowedHosts are further names an unsigned request may give as its
	// Host (see AllowedHost: IP addresses, localhost names and Domain are
	// always allowed): the machine's name, a LAN name. "*" allows any
	// Host and turns the guard against DNS rebinding off.
	AllowedHosts []string
	// Logger; nothing is logged if nil.
	Logger logrus.FieldLogger
	// Now is the clock that signatures and skew are checked against
	// (time.Now if nil).
	Now func() time.Time
	// StallTimeout is how long GetObject waits for a client to take the
	// next 256 KiB of a body before it gives up on the client and closes
	// the connection (DefaultStallTimeout if 0): a client that stops
	// reading holds a connection, a buffer and an open chunk this long at
	// most.
	StallTimeout time.Duration
}

// DefaultStallTimeout is Config.StallTimeout's default.
const DefaultStallTimeout = 2 * time.Minute

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

// ErrConfig is the error of Config.Validate.
var ErrConfig = errors.New("s3gateway: invalid config")

// Validate returns an error (wrapping ErrConfig) naming the first field
// out of its range: a head with neither credentials nor anonymous access
// would refuse every request.
func (c Config) Validate() error {
	if len(c.Credentials) == 0 && !c.Anonymous {
		return fmt.Errorf("%w: no credentials and no anonymous access: every request would be refused", ErrConfig)
	}
	for ak, sk := range c.Credentials {
		if ak == "" || sk == "" || strings.ContainsAny(ak, "/ \t") {
			// Neither key nor secret is shown: a secret where the key
			// belongs is the likeliest reason for a '/' or a space.
			return fmt.Errorf("%w: credentials: an access key is empty or holds '/' or a space, or its secret is empty", ErrConfig)
		}
	}
	if c.Region != "" && (len(c.Region) > 64 || strings.ContainsAny(c.Region, "/ \t")) {
		return fmt.Errorf("%w: region %q: want a region name (at most 64 bytes, no '/' or spaces)", ErrConfig, c.Region)
	}
	if d := strings.Trim(c.Domain, "."); c.Domain != "" && (d == "" || strings.ContainsAny(d, ":/ \t")) {
		return fmt.Errorf("%w: domain %q: want a host name without port", ErrConfig, c.Domain)
	}
	for _, a := range c.AllowedHosts {
		if a != "*" && (strings.Trim(a, ".") == "" || strings.ContainsAny(a, ":/[]* \t")) {
			return fmt.Errorf("%w: allowed host %q: want a host name without port, or *", ErrConfig, a)
		}
	}
	if c.StallTimeout < 0 {
		return fmt.Errorf("%w: stall timeout %v: want 0 (the default) or more", ErrConfig, c.StallTimeout)
	}
	return nil
}

// ParseCredentials parses access keys and their secrets in the one
// format internal/s3keys owns: "ACCESS:SECRET" pairs separated by commas
// or newlines, blank lines and '#' comment lines ignored, the secret
// everything after the first colon; an access key given twice, empty, or
// holding '/', a space or a tab is an error, which shows none of the text.
// The Mesos scheduler checks SLUICE_S3_CREDENTIALS with the same parser.
func ParseCredentials(s string) (map[string]string, error) {
	return s3keys.Parse(s)
}
