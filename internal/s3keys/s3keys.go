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
// and no error. Its errors wrap ErrInvalid and name the line and pair and
// the fault, never any of the text.
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
			// The errors name the position and the fault, never any of the
			// text: the likeliest mistakes put a secret where the access
			// key belongs (the pair written SECRET:ACCESS, and AWS secrets
			// often hold '/'; "AKID SECRET:..."), and these errors reach
			// logs.
			switch {
			case !ok:
				return nil, fmt.Errorf("%w: %s: want ACCESS:SECRET (no colon)", ErrInvalid, where)
			case ak == "":
				return nil, fmt.Errorf("%w: %s: empty access key", ErrInvalid, where)
			case strings.ContainsAny(ak, "/ \t"):
				return nil, fmt.Errorf("%w: %s: the access key holds '/', a space or a tab: is the pair SECRET:ACCESS, or a space where the colon belongs?", ErrInvalid, where)
			case strings.HasPrefix(ak, "#"):
				return nil, fmt.Errorf("%w: %s: the access key starts with '#'", ErrInvalid, where)
			case sk == "":
				return nil, fmt.Errorf("%w: %s: empty secret", ErrInvalid, where)
			}
			if _, dup := out[ak]; dup {
				return nil, fmt.Errorf("%w: %s: the access key is given twice", ErrInvalid, where)
			}
			out[ak] = sk
		}
	}
	return out, nil
}
