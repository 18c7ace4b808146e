package fs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/tier2"
)

// BenchmarkSyncBesideChunks measures what tier-2 chunk writes on the same
// disk do to a log's syncs: one op is a 4 KiB write + fdatasync in a
// preallocated file (as the log writes), while a goroutine writes 16 MiB
// chunks through the Storage as tiering does (1 MiB writes, Close), and
// removes them. writeback=none: the syncs alone; off: no write-back (the
// whole chunk flushed by Close's fsync, as before); on,unpaced: write-back
// without the pauses; on,idle: that, from a thread in the idle I/O
// priority class (ioprio_set), an experiment not shipped; on: as shipped.
// Reports the syncs' p50/p99/max and the chunks' MB/s.
func BenchmarkSyncBesideChunks(b *testing.B) {
	for _, mode := range []string{"none", "off", "on,unpaced", "on,idle", "on"} {
		b.Run("writeback="+mode, func(b *testing.B) {
			if mode != "on" {
				pace = false
				b.Cleanup(func() { pace = true })
			}
			if mode == "off" {
				real := syncFileRange
				syncFileRange = func(int, int64, int64, int) error { return nil }
				b.Cleanup(func() { syncFileRange = real })
			}
			dir := diskprobetest.Dir(b)
			s, err := New(filepath.Join(dir, "tier2"))
			if err != nil {
				b.Fatal(err)
			}
			const logSize = 256 << 20
			log := benchLog(b, dir, logSize)
			var stop atomic.Bool
			var bg sync.WaitGroup
			var chunkBytes atomic.Int64
			if mode != "none" {
				bg.Add(1)
				go func() {
					defer bg.Done()
					if mode == "on,idle" {
						runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
						const idle = 3 << 13
						if _, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, 1, 0, idle); e != 0 {
							b.Error(e)
						}
					}
					writeChunks(b, s, &stop, &chunkBytes)
				}()
			}
			time.Sleep(200 * time.Millisecond) // let the chunks get going (a benchmark, not a test)
			page := make([]byte, 4096)
			lat := make([]time.Duration, 0, b.N)
			start := time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := time.Now()
				if _, err := log.WriteAt(page, int64(i*len(page))%logSize); err != nil {
					b.Fatal(err)
				}
				if err := unix.Fdatasync(int(log.Fd())); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			b.StopTimer()
			elapsed := time.Since(start)
			stop.Store(true)
			bg.Wait()
			l := latency.Sort(lat)
			pct := func(p float64) float64 { return float64(l[min(len(l)-1, int(p*float64(len(l))))]) / 1e6 }
			b.ReportMetric(pct(0.5), "sync-p50-ms")
			b.ReportMetric(pct(0.99), "sync-p99-ms")
			b.ReportMetric(float64(l[len(l)-1])/1e6, "sync-max-ms")
			b.ReportMetric(float64(chunkBytes.Load())/1e6/elapsed.Seconds(), "chunk-MB/s")
		})
	}
}

// writeChunks writes 16 MiB chunks as tiering does until stop, keeping
// the last four.
func writeChunks(b *testing.B, s *Storage, stop *atomic.Bool, written *atomic.Int64) {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	for n := 0; !stop.Load(); n++ {
		p := tier2.ChunkPath("sc", "st", 0, int64(n))
		w, err := s.Create(p)
		if err != nil {
			b.Error(err)
			return
		}
		bw := bufio.NewWriterSize(w, 1<<20)
		for j := 0; j < 16 && !stop.Load(); j++ {
			if _, err := bw.Write(buf); err != nil {
				b.Error(err)
				return
			}
		}
		if err := bw.Flush(); err != nil {
			b.Error(err)
			return
		}
		if err := w.Close(); err != nil {
			b.Error(fmt.Errorf("close: %w", err))
			return
		}
		written.Add(16 << 20)
		if n >= 4 {
			if err := s.Remove(tier2.ChunkPath("sc", "st", 0, int64(n-4))); err != nil {
				b.Error(err)
				return
			}
		}
	}
}

// BenchmarkSyncBesideRemovals measures what removing a deleted stream's
// chunks does to a log's syncs: 64 chunks of 16 MiB are written and
// fsynced (not timed), then one op is a 4 KiB write + fdatasync in a
// preallocated file while a goroutine removes the chunks one after
// another: pace=none with no pause (as the storage writer did with
// RemoveAll), pace=1x pausing as long as each unlink took (as
// node/tiering's removal.go does), pace=3x three times as long,
// pace=reclaim through a reclaim.Reclaimer with its defaults (as a node
// does: 1 MiB steps at 64 MiB/s), pace=reclaim4M with 4 MiB steps at 256
// MiB/s. The ops run until the chunks are gone (for the reclaimers: freed)
// (b.N is ignored past that: run with -benchtime 1x). Reports the syncs'
// p50/p99/max and the removal's duration.
func BenchmarkSyncBesideRemovals(b *testing.B) {
	for _, mode := range []string{"none", "1x", "3x", "reclaim", "reclaim4M"} {
		b.Run("pace="+mode, func(b *testing.B) {
			dir := diskprobetest.Dir(b)
			s, err := New(filepath.Join(dir, "tier2"))
			if err != nil {
				b.Fatal(err)
			}
			var r *reclaim.Reclaimer
			switch mode {
			case "reclaim":
				r = reclaim.New(reclaim.Config{Rate: reclaim.DefaultRate})
			case "reclaim4M":
				r = reclaim.New(reclaim.Config{Rate: 256 << 20, Step: 4 << 20})
			}
			if r != nil {
				defer r.Close()
				if err := s.SetReclaimer(r, 0); err != nil {
					b.Fatal(err)
				}
			}
			var stop atomic.Bool
			var written atomic.Int64
			const chunks = 64
			buf := make([]byte, 1<<20)
			for n := 0; n < chunks; n++ {
				w, err := s.Create(tier2.ChunkPath("sc", "st", 0, int64(n)))
				if err != nil {
					b.Fatal(err)
				}
				for j := 0; j < 16; j++ {
					if _, err := w.Write(buf); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				written.Add(16 << 20)
			}
			const logSize = 64 << 20
			log := benchLog(b, dir, logSize)
			var removal time.Duration
			done := make(chan struct{})
			b.ResetTimer()
			go func() {
				defer close(done)
				start := time.Now()
				for n := 0; n < chunks; n++ {
					t := time.Now()
					if err := s.Remove(tier2.ChunkPath("sc", "st", 0, int64(n))); err != nil {
						b.Error(err)
						return
					}
					switch mode {
					case "1x":
						time.Sleep(min(time.Since(t), 20*time.Millisecond))
					case "3x":
						time.Sleep(min(3*time.Since(t), 60*time.Millisecond))
					}
				}
				if err := r.WaitIdle(context.Background()); err != nil {
					b.Error(err)
				}
				removal = time.Since(start)
				stop.Store(true)
			}()
			page := make([]byte, 4096)
			var lat []time.Duration
			for i := 0; !stop.Load(); i++ {
				t := time.Now()
				if _, err := log.WriteAt(page, int64(i*len(page))%logSize); err != nil {
					b.Fatal(err)
				}
				if err := unix.Fdatasync(int(log.Fd())); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			<-done
			b.StopTimer()
			l := latency.Sort(lat)
			pct := func(p float64) float64 { return float64(l[min(len(l)-1, int(p*float64(len(l))))]) / 1e6 }
			b.ReportMetric(pct(0.5), "sync-p50-ms")
			b.ReportMetric(pct(0.99), "sync-p99-ms")
			b.ReportMetric(float64(l[len(l)-1])/1e6, "sync-max-ms")
			b.ReportMetric(float64(len(l)), "syncs")
			b.ReportMetric(removal.Seconds()*1000, "removal-ms")
		})
	}
}

// benchLog is the benchmarks' stand-in for a log: a file of size bytes
// zero-filled up front and synced, in dir, closed when b ends. Written,
// not fallocated, as the log's spare is: a write into an fallocated
// (unwritten) extent changes metadata, and its fdatasync commits the
// filesystem's journal, which a log's write into a written file does not.
func benchLog(b *testing.B, dir string, size int64) *os.File {
	log, err := os.OpenFile(filepath.Join(dir, "log"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	zeros := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(zeros)) {
		if _, err := log.WriteAt(zeros[:min(int64(len(zeros)), size-off)], off); err != nil {
			b.Fatal(err)
		}
	}
	if err := log.Sync(); err != nil {
		b.Fatal(err)
	}
	return log
}
