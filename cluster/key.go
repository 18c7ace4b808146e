package cluster

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// CheckKey returns nil if key is a valid key of a Store, or an error that
// wraps ErrInvalidKey. A valid key is one or more elements joined by "/";
// an element is non-empty, neither "." nor "..", valid UTF-8 and free of
// control characters (ZooKeeper refuses them in znode names). The root ""
// is not a key; only List accepts it.
func CheckKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: %q is not UTF-8", ErrInvalidKey, key)
	}
	for _, r := range key {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == utf8.RuneError {
			return fmt.Errorf("%w: %q has a control character", ErrInvalidKey, key)
		}
	}
	for elem := range strings.SplitSeq(key, "/") {
		switch elem {
		case "":
			return fmt.Errorf("%w: %q has an empty element", ErrInvalidKey, key)
		case ".", "..":
			return fmt.Errorf("%w: %q has a %q element", ErrInvalidKey, key, elem)
		}
	}
	return nil
}

// Parents returns the proper ancestors of a valid key, outermost first:
// "a/b/c" gives ["a", "a/b"].
func Parents(key string) []string {
	var ps []string
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			ps = append(ps, key[:i])
		}
	}
	return ps
}

// CheckCall returns the error a Store call on key should fail with before it
// starts: ErrClosed if the store is closed, ctx's error, or CheckKey's. The
// root "" passes only if rootOK (List accepts it).
func CheckCall(ctx context.Context, closed bool, key string, rootOK bool) error {
	if closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if key == "" && rootOK {
		return nil
	}
	return CheckKey(key)
}
