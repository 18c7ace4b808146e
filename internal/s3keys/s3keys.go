package s3keys

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is wrapped by every error of Parse.
var ErrInvalid = errors.New("s3keys: invalid access keys")

// Parse returns the access keys of text (see the package comment for the
// format) mapped to their secrets. Text with no pair gives an empty map
// and no error. Its errors wrap ErrInvalid and never contain a secret.
func Parse(text string) (map[string]string, error) {
	out := map[string]string{}
	for ln, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for i, pair := range strings.Split(line, ",") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			where := fmt.Sprintf("line %d, pair %d", ln+1, i+1)
			ak, sk, ok := strings.Cut(pair, ":")
			ak, sk = strings.TrimSpace(ak), strings.TrimSpace(sk)
			switch {
			case !ok:
				// No colon: the whole pair might be a secret.
				return nil, fmt.Errorf("%w: %s: want ACCESS:SECRET (no colon)", ErrInvalid, where)
			case ak == "":
				return nil, fmt.Errorf("%w: %s: empty access key", ErrInvalid, where)
			case strings.ContainsAny(ak, "/ \t") || strings.HasPrefix(ak, "#"):
				return nil, fmt.Errorf("%w: %s: access key %q: no '/', space or tab, nor '#' first, allowed", ErrInvalid, where, ak)
			case sk == "":
				return nil, fmt.Errorf("%w: %s: access key %q has an empty secret", ErrInvalid, where, ak)
			}
			if _, dup := out[ak]; dup {
				return nil, fmt.Errorf("%w: %s: access key %q given twice", ErrInvalid, where, ak)
			}
			out[ak] = sk
		}
	}
	return out, nil
}
