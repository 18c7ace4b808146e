package fs

import (
	"errors"
	iofs "io/fs"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sluice-streams/sluice/tier2"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		errno       unix.Errno
		unavailable bool
		also        error
	}{
		{unix.ENOSPC, true, nil},
		{unix.EDQUOT, true, nil},
		{unix.EIO, true, nil},
		{unix.EROFS, true, nil},
		{unix.ESTALE, true, nil},
		{unix.ETIMEDOUT, true, nil},
		{unix.ENOENT, false, tier2.ErrNotExist},
		{unix.EEXIST, false, tier2.ErrExist},
		{unix.EACCES, false, iofs.ErrPermission},
		{unix.ENOTEMPTY, false, nil},
	}
	for _, c := range cases {
		err := pathErr("create", "sc/st/f", &os.PathError{Op: "open", Path: "/root/on/disk/sc/st/f", Err: c.errno})
		if got := errors.Is(err, tier2.ErrUnavailable); got != c.unavailable {
			t.Errorf("%v: errors.Is(ErrUnavailable) = %v, want %v", c.errno, got, c.unavailable)
		}
		if !errors.Is(err, c.errno) {
			t.Errorf("%v: the errno is lost: %v", c.errno, err)
		}
		if c.also != nil && !errors.Is(err, c.also) {
			t.Errorf("%v: want it to match %v: %v", c.errno, c.also, err)
		}
		if msg := err.Error(); !strings.Contains(msg, `"sc/st/f"`) || strings.Contains(msg, "/root/on/disk") {
			t.Errorf("%v: message %q should name the storage path and not the disk path", c.errno, msg)
		}
	}
	err := renameErr("a", "b", &os.LinkError{Op: "rename", Old: "/r/a", New: "/r/b", Err: unix.ENOSPC})
	if !errors.Is(err, tier2.ErrUnavailable) || !strings.Contains(err.Error(), `"a" to "b"`) {
		t.Errorf("renameErr = %v, want ErrUnavailable naming both paths", err)
	}
}
