package org.sluice.hadooptest;

import java.io.EOFException;
import java.security.MessageDigest;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Reads ranges of one file through FileSystem.open, as split readers do.
 * Usage: Preads URI OFFSET LENGTH [OFFSET LENGTH...]. For each range it
 * prints "OFFSET LENGTH PREAD-MD5 SEEK-MD5 POS" (the MD5s, in hex, of the
 * range read by a positional readFully and by seek then readFully; POS the
 * stream's position after), or "OFFSET LENGTH EOF" when the range passes
 * the end; then "ALL SIZE MD5" of the whole file read in sequence.
 */
public final class Preads {
  private Preads() {}

  public static void main(String[] args) throws Exception {
    Path p = new Path(args[0]);
    FileSystem fs = p.getFileSystem(new Configuration());
    try (FSDataInputStream in = fs.open(p)) {
      for (int i = 1; i + 1 < args.length; i += 2) {
        long off = Long.parseLong(args[i]);
        byte[] a = new byte[Integer.parseInt(args[i + 1])];
        byte[] b = new byte[a.length];
        try {
          in.readFully(off, a);
          in.seek(off);
          in.readFully(b);
          System.out.println(off + " " + a.length + " " + md5(a, a.length) + " " + md5(b, b.length) + " " + in.getPos());
        } catch (EOFException e) {
          System.out.println(off + " " + a.length + " EOF");
        }
      }
      in.seek(0);
      MessageDigest all = MessageDigest.getInstance("MD5");
      byte[] buf = new byte[8192];
      long n = 0;
      for (int r; (r = in.read(buf)) > 0; n += r) {
        all.update(buf, 0, r);
      }
      System.out.println("ALL " + n + " " + hex(all.digest()));
    }
  }

  private static String md5(byte[] b, int n) throws Exception {
    MessageDigest d = MessageDigest.getInstance("MD5");
    d.update(b, 0, n);
    return hex(d.digest());
  }

  private static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      sb.append(String.format("%02x", x));
    }
    return sb.toString();
  }
}
