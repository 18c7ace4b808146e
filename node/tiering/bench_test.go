package tiering_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/benchtest"
	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/node/diskprobe"
	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
	"github.com/sluice-streams/sluice/node/tiering"
	"github.com/sluice-streams/sluice/protocol"
	tier2fs "github.com/sluice-streams/sluice/tier2/fs"
)

const (
	benchEventSize   = 1024
	benchBlockEvents = 64        // 64 KiB blocks, as a batching client sends under load
	benchWindow      = 64        // blocks in flight while filling (4 MiB)
	benchDataBytes   = 256 << 20 // event bytes in the container of the throughput benchmarks
)

// benchBlock is one append block of benchBlockEvents 1 KiB events.
func benchBlock() []byte {
	event := bytes.Repeat([]byte("e"), benchEventSize)
	var blk []byte
	for range benchBlockEvents {
		blk = protocol.AppendEvent(blk, event)
	}
	return blk
}

// fill appends eventBytes of 1 KiB events in 64 KiB blocks, round-robin
// over the segments, keeping benchWindow blocks in flight, and waits until
// every block is durable.
func fill(c *container.Container, names []string, eventBytes int64) error {
	blk := benchBlock()
	blocks := int(eventBytes / (benchBlockEvents * benchEventSize))
	inflight := make(chan *container.PendingAppend, benchWindow)
	done := make(chan error, 1)
	go func() {
		var first error
		for p := range inflight {
			if _, err := p.Wait(); err != nil && first == nil {
				first = err
			}
		}
		done <- first
	}()
	for i := range blocks {
		p, err := c.AppendAsync(container.Append{Segment: names[i%len(names)], Writer: "w", EventNumber: int64(i + 1),
			EventCount: benchBlockEvents, ExpectedOffset: protocol.NoExpectedOffset, Data: blk})
		if err != nil {
			close(inflight)
			<-done
			return err
		}
		inflight <- p
	}
	close(inflight)
	return <-done
}

// createSegments creates n segments of stream bench/s in c.
func createSegments(c *container.Container, n int) ([]string, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = protocol.SegmentName("bench", "s", int64(i), 0)
		if err := c.Create(names[i], nil); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// BenchmarkTierFlush: tiering throughput into the fs backend. Each op
// fills a fresh container (its own log, 512 MiB cache, so the blocks are
// cached as freshly written ones are) with 256 MiB of durable 1 KiB events
// in 64 KiB blocks over 4 segments, not timed; then times Writer.Flush,
// which writes them to tier 2 as SequenceFile chunks of 16 MiB (the
// default), each fsync'd and renamed into place, records them and takes a
// checkpoint. After each flush, with the timer stopped, the disk's fsync'd
// sequential bandwidth (1 MiB writes each followed by fsync) is measured
// for as many bytes in the same directory. Reports MB/s of event bytes
// (event-MB/s, also Go's MB/s), the disk's (disk-MB/s) and the ratio
// (%disk).
func BenchmarkTierFlush(b *testing.B) {
	const segments = 4
	var flushTime, diskTime time.Duration
	var flushed, probed int64
	b.SetBytes(benchDataBytes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := diskprobetest.Dir(b)
		store, err := tier2fs.New(filepath.Join(dir, "tier2"))
		if err != nil {
			b.Fatal(err)
		}
		c, err := container.Open(container.Config{Dir: filepath.Join(dir, "log"), Cache: cache.New(512 << 20),
			WALPreallocate: true, Chunks: tiering.Reader{Store: store}})
		if err != nil {
			b.Fatal(err)
		}
		names, err := createSegments(c, segments)
		if err != nil {
			b.Fatal(err)
		}
		if err := fill(c, names, benchDataBytes); err != nil {
			b.Fatal(err)
		}
		w := tiering.New(tiering.Config{Container: c, Store: store})
		b.StartTimer()
		start := time.Now()
		if err := w.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		flushTime += time.Since(start)
		b.StopTimer()
		st := w.Stats()
		if st.TieredBytes != benchDataBytes+int64(benchDataBytes/benchEventSize)*4 || st.Untiered != 0 {
			b.Fatalf("flushed %d bytes, %d left untiered; want all %d event bytes and their 4-byte frames", st.TieredBytes, st.Untiered, benchDataBytes)
		}
		flushed += benchDataBytes
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		r, err := diskprobe.SequentialSync(dir, diskprobe.DefaultBlockSize, benchDataBytes)
		if err != nil {
			b.Fatal(err)
		}
		diskTime += r.Elapsed
		probed += r.Bytes
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	benchtest.ReportAgainstDisk(b, flushed, flushTime, probed, diskTime, "disk-MB/s")
}

// BenchmarkCatchUpRead: a reader catching up from tier 2 with a cold
// cache. Set up once per chunk size (not timed): a container with two
// segments of 256 MiB of 1 KiB events each, flushed to the fs backend in
// chunks of that size (each recorded with its marks, so read in parts of
// DefaultPartBytes), the log trimmed. One op drops the page cache of every
// chunk file (diskprobe.DropCache, posix_fadvise DONTNEED; not timed) and
// reads one segment whole from offset 0 through container.Read with
// maxBytes = container.MaxReadSize (8 MiB), releasing each result as the
// server does once its reply is written; every part comes from the disk
// and is decoded by tiering.Reader. The ops alternate between the two
// segments, so the block cache never holds a byte of the segment read: it
// is full of the other one, as a running node's cache is full of other
// data (an untimed read of the other segment comes first). After each op,
// with the timer stopped, the disk's cold sequential read speed is
// measured on a reference file as large as a segment, written beside the
// chunks at set-up and read like them, page cache dropped, in 1 MiB reads
// (diskprobe.ReadFile). Reports event-MB/s (the segment's bytes, frames
// included, over the read time), disk-read-MB/s, %disk, the allocations,
// and once per case new-file-read-MB/s: a file written and read at once
// (diskprobe.SequentialRead), which on a virtual disk swings with the
// host's cache.
//
// cache=32MiB holds four parts (the read-ahead runs); cache=256MiB is the
// node's default. cache=256MiB,new instead reopens the container with a new
// cache before each op: the first reads after a start, when every part
// is loaded into memory the process has not used before.
func BenchmarkCatchUpRead(b *testing.B) {
	dir := diskprobetest.Dir(b)
	for _, chunkBytes := range []int64{8 << 20, 16 << 20, 64 << 20} {
		root := filepath.Join(dir, fmt.Sprint("chunk", chunkBytes))
		store, err := tier2fs.New(filepath.Join(root, "tier2"))
		if err != nil {
			b.Fatal(err)
		}
		cfg := container.Config{Dir: filepath.Join(root, "log"), Cache: cache.New(512 << 20), WALPreallocate: true,
			Chunks: tiering.Reader{Store: store}}
		names, chunkFiles, err := tieredSegments(cfg, store, chunkBytes)
		if err != nil {
			b.Fatal(err)
		}
		// The reference: a file as large as a segment, written right after
		// the chunks and read like them, cold, in every op.
		ref := filepath.Join(root, "reference")
		if err := diskprobe.WriteFile(ref, diskprobe.DefaultBlockSize, segmentBytes(b, cfg, names[0])); err != nil {
			b.Fatal(err)
		}
		for _, cs := range []struct {
			size  int64
			fresh bool
		}{{32 << 20, false}, {256 << 20, false}, {256 << 20, true}} {
			name := fmt.Sprintf("chunk=%s/cache=%s", sizeName(chunkBytes), sizeName(cs.size))
			if cs.fresh {
				name += ",new"
			}
			b.Run(name, func(b *testing.B) {
				benchCatchUp(b, cfg, cs.size, cs.fresh, names, chunkFiles, ref, dir)
			})
		}
		if err := os.RemoveAll(root); err != nil {
			b.Fatal(err)
		}
	}
}

// tieredSegments fills a container with two segments of benchDataBytes of
// events each, flushes them to store in chunks of chunkBytes and closes
// it. It returns the segments' names and the chunk files.
func tieredSegments(cfg container.Config, store *tier2fs.Storage, chunkBytes int64) ([]string, []string, error) {
	c, err := container.Open(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	names, err := createSegments(c, 2)
	if err != nil {
		return nil, nil, err
	}
	if err := fill(c, names, 2*benchDataBytes); err != nil {
		return nil, nil, err
	}
	w := tiering.New(tiering.Config{Container: c, Store: store, Policy: tiering.Policy{ChunkBytes: chunkBytes}})
	if err := w.Flush(context.Background()); err != nil {
		return nil, nil, err
	}
	var chunkFiles []string
	err = filepath.WalkDir(store.Root(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".seq") {
			chunkFiles = append(chunkFiles, p)
		}
		return err
	})
	if err != nil || len(chunkFiles) == 0 {
		return nil, nil, fmt.Errorf("no chunks in tier 2 (%v)", err)
	}
	return names, chunkFiles, c.Close()
}

// readSegment reads a segment whole, releasing each result.
func readSegment(c *container.Container, name string) (int64, error) {
	info, err := c.Info(name)
	if err != nil {
		return 0, err
	}
	if ts, err := c.TierState(name); err != nil || ts.Tiered != info.Length || ts.Untiered != 0 {
		return 0, fmt.Errorf("segment not wholly in tier 2: %+v, %v (length %d)", ts, err, info.Length)
	}
	for off := info.StartOffset; off < info.Length; {
		r, err := c.Read(context.Background(), name, off, container.MaxReadSize)
		if err != nil {
			return 0, err
		}
		if r.Len() == 0 {
			return 0, fmt.Errorf("empty read at %d of %d", off, info.Length)
		}
		off += int64(r.Len())
		r.Release() // as the server does once the reply is written
	}
	return info.Length - info.StartOffset, nil
}

// benchCatchUp runs BenchmarkCatchUpRead's ops for one cache.
func benchCatchUp(b *testing.B, cfg container.Config, cacheSize int64, fresh bool, names, chunkFiles []string, ref, dir string) {
	b.ReportAllocs()
	var c *container.Container
	reopen := func() {
		if c != nil {
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		}
		cfg.Cache = cache.New(cacheSize)
		var err error
		if c, err = container.Open(cfg); err != nil {
			b.Fatal(err)
		}
	}
	reopen()
	defer func() { c.Close() }()
	if !fresh { // a cache full of other data
		if _, err := readSegment(c, names[1]); err != nil {
			b.Fatal(err)
		}
	}
	var readTime, diskTime time.Duration
	var read, probed int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if fresh {
			reopen()
		}
		for _, p := range chunkFiles {
			if err := diskprobe.DropCache(p); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start := time.Now()
		n, err := readSegment(c, names[i%2])
		if err != nil {
			b.Fatal(err)
		}
		readTime += time.Since(start)
		read += n
		b.StopTimer()
		r, err := diskprobe.ReadFile(ref, diskprobe.DefaultBlockSize)
		if err != nil {
			b.Fatal(err)
		}
		diskTime += r.Elapsed
		probed += r.Bytes
		b.StartTimer()
	}
	b.StopTimer()
	// Once, for comparison: a file written just before it is read.
	newFile, err := diskprobe.SequentialRead(dir, diskprobe.DefaultBlockSize, read/int64(b.N))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(read / int64(b.N))
	benchtest.ReportAgainstDisk(b, read, readTime, probed, diskTime, "disk-read-MB/s")
	b.ReportMetric(newFile.BytesPerSecond()/1e6, "new-file-read-MB/s")
}

// segmentBytes is a segment's length.
func segmentBytes(b *testing.B, cfg container.Config, name string) int64 {
	c, err := container.Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	info, err := c.Info(name)
	if err != nil {
		b.Fatal(err)
	}
	return info.Length
}

func sizeName(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkTierLag10MBps: how long events wait between their
// acknowledgement and their arrival in tier 2, under a steady load. A
// node.Node (4 containers, preallocated logs as `sluice node` runs) with
// the fs backend and TierPolicy{MaxLag: 2s}; one writer submits 1 KiB
// events, each its own block, round-robin over 4 segments, on a fixed
// schedule of 10 MB/s (latency.RunPaced). One op is one second of that
// load (9765 events), so -benchtime 20x is 20 s, and a run at the default
// -benchtime stops after one op, as it takes more than a second. Every 10 ms a sampler reads each segment's
// TierState().Tiered and stamps the events that crossed it since the last
// sample; each event's lag is that stamp minus the time its append was
// acknowledged (as the writer's wait returned). The run ends once every
// event is in tier 2. Reports lag p50/p99/max in ms, the bound, and
// p99 / bound. The sampling adds up to 10 ms to a lag.
func BenchmarkTierLag10MBps(b *testing.B) {
	const (
		segments = 4
		maxLag   = 2 * time.Second
		sample   = 10 * time.Millisecond
		frame    = benchEventSize + 4 // an event's bytes in its segment
	)
	interval := time.Duration(float64(time.Second) / (10e6 / benchEventSize))
	dir := diskprobetest.Dir(b)
	store, err := tier2fs.New(filepath.Join(dir, "tier2"))
	if err != nil {
		b.Fatal(err)
	}
	quiet := logrus.New()
	quiet.SetLevel(logrus.WarnLevel)
	n, err := node.Open(node.Config{Dir: filepath.Join(dir, "node"), Containers: 4, WALPreallocate: true,
		Tier2: store, TierPolicy: tiering.Policy{MaxLag: maxLag}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	names := make([]string, segments)
	cs := make([]*container.Container, segments)
	for i := range names {
		names[i] = protocol.SegmentName("bench", "lag", int64(i), 0)
		if cs[i], err = n.ContainerFor(names[i]); err != nil {
			b.Fatal(err)
		}
		if err := cs[i].Create(names[i], nil); err != nil {
			b.Fatal(err)
		}
	}
	events := b.N * int(time.Second/interval)
	perSeg := events/segments + 1
	acked := make([][]time.Time, segments)   // written by the waits only
	visible := make([][]time.Time, segments) // written by the sampler only
	for i := range acked {
		acked[i] = make([]time.Time, perSeg)
		visible[i] = make([]time.Time, perSeg)
	}
	var total [segments]int // events submitted per segment, once RunPaced returns

	// The sampler runs until the writer is done (stop) and every event it
	// wrote is in tier 2, or until 10 × the bound after that.
	stop := make(chan struct{})
	sampled := make(chan error, 1)
	go func() {
		t := time.NewTicker(sample)
		defer t.Stop()
		var next [segments]int // first event not yet seen in tier 2
		var deadline time.Time
		for {
			now := <-t.C
			stopped := false
			select {
			case <-stop:
				stopped = true
				if deadline.IsZero() {
					deadline = now.Add(10 * maxLag)
				}
			default:
			}
			done := stopped
			for s, name := range names {
				ts, err := cs[s].TierState(name)
				if err != nil {
					sampled <- err
					return
				}
				for next[s] < perSeg && int64(next[s]+1)*frame <= ts.Tiered {
					visible[s][next[s]] = now
					next[s]++
				}
				done = done && next[s] >= total[s]
			}
			if done {
				sampled <- nil
				return
			}
			if stopped && now.After(deadline) {
				sampled <- fmt.Errorf("not all events in tier 2 %v after the writer stopped: %v of %v", 10*maxLag, next, total)
				return
			}
		}
	}()

	blk := protocol.AppendEvent(nil, bytes.Repeat([]byte("e"), benchEventSize))
	var evNo [segments]int64
	b.SetBytes(int64(time.Second/interval) * benchEventSize)
	b.ResetTimer()
	err = latency.RunPaced(events, interval, latency.NewRecorder(events), func(i int) (func() error, error) {
		s, k := i%segments, i/segments
		evNo[s]++
		p, err := cs[s].AppendAsync(container.Append{Segment: names[s], Writer: "w", EventNumber: evNo[s], EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: blk})
		if err != nil {
			return nil, err
		}
		total[s] = k + 1
		return func() error {
			_, err := p.Wait()
			acked[s][k] = time.Now()
			return err
		}, nil
	})
	close(stop)
	if err != nil {
		<-sampled
		b.Fatal(err)
	}
	if err := <-sampled; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	lags := make([]time.Duration, 0, events)
	for s := range names {
		for k := 0; k < total[s]; k++ {
			if visible[s][k].IsZero() {
				b.Fatalf("segment %s: event %d never seen in tier 2", names[s], k)
			}
			lags = append(lags, visible[s][k].Sub(acked[s][k]))
		}
	}
	sorted := latency.Sort(lags)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sorted.Percentile(50)), "lag-p50-ms")
	b.ReportMetric(ms(sorted.Percentile(99)), "lag-p99-ms")
	b.ReportMetric(ms(sorted.Max()), "lag-max-ms")
	b.ReportMetric(ms(maxLag), "bound-ms")
	b.ReportMetric(float64(sorted.Percentile(99))/float64(maxLag), "p99/bound")
}
