package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// FreeSpacer is an FS that can tell how many bytes its files in a
// directory may still grow by (the filesystem's space available to the
// process).
type FreeSpacer interface {
	FreeBytes(dir string) (int64, error)
}

// FreeBytes asks fs for the bytes free for the files of dir; ok is false
// when fs cannot tell.
func FreeBytes(fs FS, dir string) (n int64, ok bool) {
	s, is := fs.(FreeSpacer)
	if !is {
		return 0, false
	}
	n, err := s.FreeBytes(dir)
	return n, err == nil
}

// FreeBytes is statfs's space available to an unprivileged process.
func (osFS) FreeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// Chmoder is an FS that can change a file's permission bits.
type Chmoder interface {
	Chmod(name string, mode os.FileMode) error
}

// Lstater is an FS that can describe a symbolic link itself.
type Lstater interface {
	Lstat(name string) (os.FileInfo, error)
}

// Lstat is lstat(2).
func (osFS) Lstat(name string) (os.FileInfo, error) { return os.Lstat(name) }

// Chmod is chmod(2).
func (osFS) Chmod(name string, mode os.FileMode) error { return os.Chmod(name, mode) }
