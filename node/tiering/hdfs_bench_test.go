package tiering_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/benchtest"
	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/node/diskprobe"
	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
	"github.com/sluice-streams/sluice/node/tiering"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	tier2hdfs "github.com/sluice-streams/sluice/tier2/hdfs"
)

// hdfsBenchBytes is the event bytes of BenchmarkCatchUpReadHDFS's
// segment.
const hdfsBenchBytes = 128 << 20

// BenchmarkCatchUpReadHDFS: catch-up reads from the hdfs backend, against
// a real HDFS (Hadoop's MiniDFSCluster from the Java harness, `make
// harness`: one NameNode and one DataNode on 127.0.0.1, its blocks on the
// disk of SLUICE_BENCH_DIR or TMPDIR). Set up once: one segment of 128 MiB
// of 1 KiB events tiered in chunks of the default size, and a reference
// file as large written through the same client. One op: the container
// reopened with a new 256 MiB cache and the page cache of every block
// file the DataNode holds dropped (not timed), then the segment read whole
// as BenchmarkCatchUpRead does; then, timer stopped, the block files
// dropped again and the reference file read through the same client in 1
// MiB reads: hdfs-read-MB/s, HDFS's own sequential read speed here.
// Reports event-MB/s and %hdfs. Not part of make bench (the harness takes
// a JVM); run it by name.
func BenchmarkCatchUpReadHDFS(b *testing.B) {
	dir := diskprobetest.Dir(b)
	hdir := filepath.Join(dir, "hdfs")
	if err := os.MkdirAll(hdir, 0o755); err != nil {
		b.Fatal(err)
	}
	h, err := hadooptest.NewHDFS(hdir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := h.Stop(); err != nil {
			b.Error(err)
		}
	})
	store, err := tier2hdfs.New(tier2hdfs.Options{NameNodes: []string{h.NameNode}, Root: "/sluice"})
	if err != nil {
		b.Fatal(err)
	}
	cfg := container.Config{Dir: filepath.Join(dir, "log"), Cache: cache.New(512 << 20), WALPreallocate: true,
		Chunks: tiering.Reader{Store: store}}
	c, err := container.Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	names, err := createSegments(c, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := fill(c, names, hdfsBenchBytes); err != nil {
		b.Fatal(err)
	}
	if err := tiering.New(tiering.Config{Container: c, Store: store}).Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	info, err := c.Info(names[0])
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	if err := writeReference(store, "reference", info.Length); err != nil {
		b.Fatal(err)
	}
	dropBlocks := func() {
		err := filepath.WalkDir(hdir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "blk_") {
				err = diskprobe.DropCache(p)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}

	b.ReportAllocs()
	var readTime, refTime time.Duration
	var read, refRead int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		cfg.Cache = cache.New(256 << 20)
		c, err := container.Open(cfg)
		if err != nil {
			b.Fatal(err)
		}
		dropBlocks()
		b.StartTimer()
		start := time.Now()
		n, err := readSegment(c, names[0])
		if err != nil {
			b.Fatal(err)
		}
		readTime += time.Since(start)
		read += n
		b.StopTimer()
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		dropBlocks()
		took, n, err := readReference(store, "reference")
		if err != nil {
			b.Fatal(err)
		}
		refTime += took
		refRead += n
		b.StartTimer()
	}
	b.StopTimer()
	b.SetBytes(read / int64(b.N))
	benchtest.ReportAgainstDisk(b, read, readTime, refRead, refTime, "hdfs-read-MB/s")
}

// writeReference writes size bytes (not all zero) to a new file at p.
func writeReference(store tier2.Storage, p string, size int64) error {
	f, err := store.Create(p)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	for left := size; left > 0; {
		n := min(left, int64(len(buf)))
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
		left -= n
	}
	return f.Close()
}

// readReference reads the file at p whole in 1 MiB reads and times it.
func readReference(store tier2.Storage, p string) (time.Duration, int64, error) {
	start := time.Now()
	f, err := store.Open(p)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var off int64
	for off < f.Size() {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), f.Size()-off)], off)
		off += int64(n)
		if n == 0 && err != nil {
			return 0, 0, err
		}
	}
	return time.Since(start), off, nil
}
