package nfsexport

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestKernelMount mounts the head with the kernel's NFS client, where the
// kernel allows it (root, mount.nfs, a kernel that lets this process
// mount): ls -R, cat and md5sum against the files. Refused, it logs why
// and skips only that.
func TestKernelMount(t *testing.T) {
	f, chunks := chunkFixture(t)
	dir := t.TempDir()
	opts := fmt.Sprintf("vers=3,tcp,port=%d,mountport=%d,nolock", f.port, f.port)
	out, err := exec.CommandContext(testCtx(t), "mount", "-t", "nfs", "-o", opts, "127.0.0.1:/", dir).CombinedOutput()
	if err != nil {
		t.Skipf("the kernel refused the mount (mount -t nfs -o %s 127.0.0.1:/ %s): %v: %s", opts, dir, err, bytes.TrimSpace(out))
	}
	defer func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
		}
	}()
	var got []string
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		size := fi.Size()
		if fi.IsDir() {
			size = 0
		}
		got = append(got, fmt.Sprintf("%s %d", rel, size))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := viewTree(t, f.v, ""); !slices.Equal(got, want) {
		t.Fatalf("the kernel's mount lists:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if out, err := run(testCtx(t), "ls", "-R", dir); err != nil || !bytes.Contains(out, []byte("segment=0")) {
		t.Errorf("ls -R: %v: %s", err, out)
	}
	for p, data := range chunks {
		b, err := run(testCtx(t), "cat", filepath.Join(dir, p))
		if err != nil || !bytes.Equal(b, data) {
			t.Errorf("cat %s through the mount: %d bytes, %v", p, len(b), err)
		}
		sum, err := run(testCtx(t), "md5sum", filepath.Join(dir, p))
		if want := fmt.Sprintf("%x", md5.Sum(data)); err != nil || !strings.HasPrefix(string(sum), want) {
			t.Errorf("md5sum %s through the mount: %s, %v; want %s", p, sum, err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "s/a/new"), []byte("x"), 0o644); err == nil {
		t.Error("wrote a file through the mount")
	}
}
