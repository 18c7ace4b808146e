package org.sluice.hadooptest;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Reads files sequentially through FileSystem.open, for benchmarks: several
 * sources and rounds in one JVM, so the JVM's start is not in the numbers.
 * Usage: SeqRead ROUNDS BUFSIZE LABEL=URI,URI... [LABEL=URI,...]. Round 0
 * is a warm-up (the page cache, the JIT, each file system's connections)
 * and is not printed; then, for each round and each source in turn, each
 * of its files is opened, read to its end in BUFSIZE reads and closed:
 *
 * <pre>
 * READ round label bytes nanos cpunanos    one per source and round
 * </pre>
 *
 * (bytes and times of all its files; cpunanos is the reading thread's CPU
 * time).
 */
public final class SeqRead {
  private SeqRead() {}

  public static void main(String[] args) throws Exception {
    int rounds = Integer.parseInt(args[0]);
    byte[] buf = new byte[Integer.parseInt(args[1])];
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Configuration conf = new Configuration();
    List<String> labels = new ArrayList<>();
    List<Path[]> sources = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      labels.add(args[i].substring(0, eq));
      String[] uris = args[i].substring(eq + 1).split(",");
      Path[] ps = new Path[uris.length];
      for (int j = 0; j < uris.length; j++) {
        ps[j] = new Path(uris[j]);
      }
      sources.add(ps);
    }
    for (int round = 0; round <= rounds; round++) {
      for (int s = 0; s < sources.size(); s++) {
        long bytes = 0;
        long cpu = mx.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        for (Path p : sources.get(s)) {
          FileSystem fs = p.getFileSystem(conf);
          try (FSDataInputStream in = fs.open(p)) {
            for (int r; (r = in.read(buf)) > 0; ) {
              bytes += r;
            }
          }
        }
        long nanos = System.nanoTime() - start;
        cpu = mx.getCurrentThreadCpuTime() - cpu;
        if (round > 0) {
          System.out.println("READ " + round + " " + labels.get(s) + " " + bytes + " " + nanos + " " + cpu);
        }
      }
    }
    System.out.flush();
    System.exit(0);
  }
}
