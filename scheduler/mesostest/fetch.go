package mesostest

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// fetchURIs is the fake agent's Mesos fetcher: before an executor
// starts, each of its CommandInfo's URIs is put into the sandbox, as the
// real fetcher does (Mesos' docs/fetcher.md; src/launcher/fetcher.cpp):
// under the URI's last path segment, or OutputFile when set, made
// executable when Executable is set. A failure fails the launch (the
// agent answers the task TASK_FAILED, REASON_CONTAINER_LAUNCH_FAILED,
// "Failed to fetch ..."), as it does in Mesos.
//
// Unlike the real fetcher, the fake copies only local files (an absolute
// path or a file:// URI; no network I/O under the master's lock) and
// extracts nothing: a URI it cannot serve, or an archive with Extract
// set, is refused with an error that says so rather than ignored.
func fetchURIs(sandbox string, uris []mesos.CommandInfo_URI) error {
	for _, u := range uris {
		if err := fetchURI(sandbox, u); err != nil {
			return fmt.Errorf("Failed to fetch '%s': %w", u.Value, err)
		}
	}
	return nil
}

func fetchURI(sandbox string, u mesos.CommandInfo_URI) error {
	src := u.Value
	if rest, ok := strings.CutPrefix(src, "file://"); ok {
		p, err := url.PathUnescape(rest)
		if err != nil {
			return err
		}
		src = p
	}
	if !filepath.IsAbs(src) {
		return fmt.Errorf("the fake agent fetches only local files (an absolute path or file://), not %q", u.Value)
	}
	name := path.Base(filepath.ToSlash(src))
	if u.GetOutputFile() != "" {
		name = u.GetOutputFile()
	}
	if u.GetExtract() && isArchive(name) {
		return fmt.Errorf("the fake agent does not extract archives (%s)", name)
	}
	dst := filepath.Join(sandbox, filepath.FromSlash(name))
	if rel, err := filepath.Rel(sandbox, dst); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("output file %q leaves the sandbox", name)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	mode := os.FileMode(0o644)
	if u.GetExecutable() {
		mode = 0o755
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// isArchive is the fetcher's test for a file it would extract.
func isArchive(name string) bool {
	for _, ext := range []string{".tar", ".tgz", ".tar.gz", ".tbz2", ".tar.bz2", ".txz", ".tar.xz", ".zip", ".gz"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}
