// Package diskprobetest holds helpers for tests and benchmarks that measure a
// disk: where to put their files so that the disk limit and the code under
// test are measured on the same disk.
package diskprobetest

import (
	"os"
	"testing"
)

// DirEnv names the environment variable that chooses the directory under
// which benchmarks write. Unset, they write under the test's TempDir (TMPDIR),
// which may be a RAM file system on some machines.
const DirEnv = "SLUICE_BENCH_DIR"

// Dir returns a fresh, empty directory for tb's files, removed when tb ends:
// a new directory under $SLUICE_BENCH_DIR if that is set, else tb.TempDir().
func Dir(tb testing.TB) string {
	tb.Helper()
	root := os.Getenv(DirEnv)
	if root == "" {
		return tb.TempDir()
	}
	dir, err := os.MkdirTemp(root, "sluice-bench-*")
	if err != nil {
		tb.Fatalf("diskprobetest: %s=%q: %v", DirEnv, root, err)
	}
	tb.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			tb.Errorf("diskprobetest: remove %s: %v", dir, err)
		}
	})
	return dir
}
