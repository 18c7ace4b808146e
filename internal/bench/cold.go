package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/node/diskprobe"
)

// tierTimeout bounds a cold read's wait, after the fill, for every byte
// of the stream to be in tier 2.
const tierTimeout = 5 * time.Minute

// tierPoll is how often a cold read asks the controller for the stream's
// tier-2 state.
const tierPoll = 100 * time.Millisecond

// ColdReport is what a cold read (Config.Cold) adds to a Read run: the
// tier-2 files whose page cache was dropped before the read, and the
// disk's cold sequential read of a reference file as large as the
// stream's tier-2 bytes, written beside them and dropped the same way, in
// the same run.
type ColdReport struct {
	TierDir string `json:"tierDir"`
	// TieredBytes is the stream's bytes in tier 2 when the read started
	// (events with their frames; the controller's StreamTier).
	TieredBytes int64 `json:"tieredBytes"`
	// TierWaitSeconds is how long after the fill every byte was in tier 2.
	TierWaitSeconds float64 `json:"tierWaitSeconds"`
	// Files and FileBytes are the files under TierDir whose page cache
	// was dropped (every file there: other streams' too).
	Files     int   `json:"files"`
	FileBytes int64 `json:"fileBytes"`
	// RefBytes, DiskReadMBPerS: the reference file read cold in 1 MiB
	// reads (diskprobe.ReadFile) just before the stream and again just
	// after it, both reads' bytes over their time; Before and After are
	// each read's own, to show how much the disk moved meanwhile.
	RefBytes             int64   `json:"refBytes"`
	DiskReadMBPerS       float64 `json:"diskReadMbPerSec"`
	DiskReadBeforeMBPerS float64 `json:"diskReadBeforeMbPerSec"`
	DiskReadAfterMBPerS  float64 `json:"diskReadAfterMbPerSec"`
	// Ratio is the run's event MB/s over DiskReadMBPerS.
	Ratio float64 `json:"ratio"`
	// StreamFiles, StreamFileBytes, StreamFilesReadMBPerS: the stream's
	// own tier-2 files, read cold once more after the stream (each one's
	// page cache dropped, then read whole in 1 MiB reads, one file after
	// another in segment and offset order): the same bytes on the same
	// blocks as the stream's read, with no reader's work. A reference
	// file written just before it is read may be cached by the layers
	// under the disk (a virtual disk's host) where files written earlier
	// are not; this one has no such edge (if anything the other way: the
	// stream's read came first).
	StreamFiles           int     `json:"streamFiles"`
	StreamFileBytes       int64   `json:"streamFileBytes"`
	StreamFilesReadMBPerS float64 `json:"streamFilesReadMbPerSec"`
	// StreamFilesFirstReadMBPerS: the same files read cold the same way
	// once before anything else (before the reference file's first read),
	// and not counted in any ratio. On a virtual machine whose guest hands
	// freed memory back to its host, the first cold reads after files are
	// written pay several times the CPU in the kernel's copy that later
	// ones do (docs/BENCHMARKS.md, "Cold catch-up: what a cold pread costs
	// here"); where the stream's files carry such a cost, this read takes
	// it rather than the stream's read. How much slower it is than
	// StreamFilesReadMBPerS shows the effect (measured here: none; the
	// freshly written reference file paid instead).
	StreamFilesFirstReadMBPerS float64 `json:"streamFilesFirstReadMbPerSec"`
	// FilesRatio is the run's event MB/s over StreamFilesReadMBPerS.
	FilesRatio float64 `json:"filesRatio"`
}

// validateCold checks the cold-read fields.
func (c Config) validateCold() error {
	switch {
	case c.TierDir != "" && !c.Cold:
		return invalidf("--tier-dir is used only with --cold")
	case c.Cold && c.Mode != Read:
		return invalidf("--cold applies to bench read")
	case c.TierDir != "":
		if fi, err := os.Stat(c.TierDir); err != nil || !fi.IsDir() {
			return invalidf("--tier-dir %s: not a directory", c.TierDir)
		}
	}
	return nil
}

// cold is a cold read's set-up, from coldPrepare to coldFinish.
type cold struct {
	rep     ColdReport
	refPath string
	refRead diskprobe.Result // the read before the stream's
}

// coldPrepare runs between the fill and the read: it waits until the
// controller reports every byte of the stream in tier 2, writes and
// fsyncs the reference file (as large as the stream's tier-2 bytes, in
// the tier directory's parent: beside the chunks on the same disk, outside
// the tree the node lists), reads the stream's own tier-2 files cold once
// (StreamFilesFirstReadMBPerS), drops the page cache of every file under
// the tier directory, and reads the reference file cold once.
func (b *bench) coldPrepare(ctx context.Context) (*cold, error) {
	dir, err := tierDir(ctx, b.ctl, b.TierDir)
	if err != nil {
		return nil, err
	}
	c := &cold{rep: ColdReport{TierDir: dir}}
	start := time.Now()
	tiered, err := waitTiered(ctx, b.ctl, b.stream)
	if err != nil {
		return nil, err
	}
	c.rep.TieredBytes, c.rep.TierWaitSeconds = tiered, time.Since(start).Seconds()
	if tiered <= 0 {
		return nil, fmt.Errorf("--cold: the stream has no bytes in tier 2")
	}
	var id [4]byte
	rand.Read(id[:])
	c.refPath = filepath.Join(filepath.Dir(dir), ".bench-cold-ref-"+hex.EncodeToString(id[:]))
	if err := diskprobe.WriteFile(c.refPath, diskprobe.DefaultBlockSize, tiered); err != nil {
		return nil, fmt.Errorf("--cold: reference file: %w", err)
	}
	c.rep.RefBytes = tiered
	first, err := readStreamFiles(filepath.Join(dir, b.stream.scope, b.stream.name))
	if err != nil {
		c.close()
		return nil, err
	}
	c.rep.StreamFilesFirstReadMBPerS = first.BytesPerSecond() / 1e6
	if err := dropTree(dir, &c.rep); err != nil {
		c.close()
		return nil, err
	}
	if c.refRead, err = diskprobe.ReadFile(c.refPath, diskprobe.DefaultBlockSize); err != nil {
		c.close()
		return nil, fmt.Errorf("--cold: reference file: %w", err)
	}
	return c, nil
}

// finish reads the reference file cold again, removes it, reads the
// stream's own tier-2 files cold and adds the report to r.
func (c *cold) finish(r *Report, s stream) error {
	defer c.close()
	res, err := diskprobe.ReadFile(c.refPath, diskprobe.DefaultBlockSize)
	if err != nil {
		return fmt.Errorf("--cold: reference file: %w", err)
	}
	files, err := readStreamFiles(filepath.Join(c.rep.TierDir, s.scope, s.name))
	if err != nil {
		return err
	}
	c.rep.StreamFiles, c.rep.StreamFileBytes = files.Syncs, files.Bytes
	c.rep.StreamFilesReadMBPerS = files.BytesPerSecond() / 1e6
	if c.rep.StreamFilesReadMBPerS > 0 {
		c.rep.FilesRatio = r.MBPerS / c.rep.StreamFilesReadMBPerS
	}
	c.rep.DiskReadBeforeMBPerS = c.refRead.BytesPerSecond() / 1e6
	c.rep.DiskReadAfterMBPerS = res.BytesPerSecond() / 1e6
	both := diskprobe.Result{Bytes: c.refRead.Bytes + res.Bytes, Elapsed: c.refRead.Elapsed + res.Elapsed}
	c.rep.DiskReadMBPerS = both.BytesPerSecond() / 1e6
	if c.rep.DiskReadMBPerS > 0 {
		c.rep.Ratio = r.MBPerS / c.rep.DiskReadMBPerS
	}
	r.Cold = &c.rep
	return nil
}

// readStreamFiles reads every regular file under dir cold, in path order
// (lexical: within a segment, chunks by first offset, 20 digits),
// and returns their bytes and the time the reads took (Syncs counts the
// files).
func readStreamFiles(dir string) (diskprobe.Result, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), "_") {
			return err
		}
		paths = append(paths, path)
		return nil
	})
	if err != nil {
		return diskprobe.Result{}, fmt.Errorf("--cold: the stream's tier-2 files under %s: %w", dir, err)
	}
	var all diskprobe.Result
	for _, p := range paths {
		res, err := diskprobe.ReadFile(p, diskprobe.DefaultBlockSize)
		if err != nil {
			return diskprobe.Result{}, fmt.Errorf("--cold: read %s: %w", p, err)
		}
		all.Bytes += res.Bytes
		all.Elapsed += res.Elapsed
		all.Syncs++
	}
	return all, nil
}

// close removes the reference file.
func (c *cold) close() {
	if c.refPath != "" {
		os.Remove(c.refPath)
	}
}

// tierDir is dir, or the directory of the controller's tier 2 if it is a
// local one (file:///DIR or a plain path).
func tierDir(ctx context.Context, ctl *ctlclient.Client, dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	uri, err := ctl.Tier2URI(ctx)
	if errors.Is(err, ctlclient.ErrNotFound) {
		return "", fmt.Errorf("--cold: the controller has no tier 2")
	}
	if err != nil {
		return "", fmt.Errorf("--cold: %w", err)
	}
	p := uri
	if strings.Contains(uri, "://") {
		u, err := url.Parse(uri)
		if err != nil || u.Scheme != "file" {
			return "", fmt.Errorf("--cold: tier 2 is %s, not a local directory: give --tier-dir", uri)
		}
		p = u.Path
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--cold: tier 2 %s is not a directory on this machine: give --tier-dir", uri)
	}
	return p, nil
}

// waitTiered polls the stream's tier-2 state until no segment has bytes
// only in tier 1, and returns the bytes in tier 2.
func waitTiered(ctx context.Context, ctl *ctlclient.Client, s stream) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, tierTimeout)
	defer cancel()
	tick := time.NewTicker(tierPoll)
	defer tick.Stop()
	for {
		st, err := ctl.StreamTier(ctx, s.scope, s.name)
		if err == nil && st.UntieredBytes == 0 && len(st.Segments) > 0 {
			return st.TieredBytes, nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return 0, fmt.Errorf("--cold: waiting for tier 2: %w", err)
			}
			return 0, fmt.Errorf("--cold: %d bytes still only in tier 1 (%d tiered, oldest %d ms): %w",
				st.UntieredBytes, st.TieredBytes, st.LagMillis, ctx.Err())
		case <-tick.C:
		}
	}
}

// dropTree drops the page cache of every regular file under dir
// (diskprobe.DropCache) and counts them in rep. A file removed during the
// walk (a deleted stream's) is skipped.
func dropTree(dir string, rep *ColdReport) error {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := diskprobe.DropCache(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rep.Files++
		rep.FileBytes += fi.Size()
		return nil
	})
	if err != nil {
		return fmt.Errorf("--cold: drop the page cache under %s: %w", dir, err)
	}
	return nil
}
