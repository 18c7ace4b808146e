package org.sluice.hadooptest;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.util.ToolRunner;

/**
 * Runs several commands against Hadoop file systems in one JVM (a JVM start
 * costs seconds; a test runs many commands). Arguments are commands separated
 * by "--"; each is FsShell's arguments, or one of:
 *
 * <pre>
 * @blocks URI    FileSystem.getFileBlockLocations of the whole file
 * @located URI   FileSystem.listLocatedStatus of a directory
 * @pread URI OFFSET LENGTH   a positional read (readFully at OFFSET)
 * @seek URI OFFSET LENGTH    seek to OFFSET, then read LENGTH bytes
 * </pre>
 *
 * Output (stderr goes to stdout, so a command's errors stay with it):
 *
 * <pre>
 * === CMD args...        before each command
 * BLOCK offset length name,...    one per block (@blocks)
 * LOCATED path length blocks      one per entry (@located)
 * READ offset length md5hex       the bytes read (@pread, @seek)
 * === EXIT code           after each command (0 success)
 * </pre>
 */
public final class Batch {
    private Batch() {}

    public static void main(String[] args) throws Exception {
        System.setErr(System.out);
        Configuration conf = new Configuration();
        List<String> cmd = new ArrayList<>();
        for (String a : args) {
            if (a.equals("--")) {
                run(conf, cmd);
                cmd.clear();
            } else {
                cmd.add(a);
            }
        }
        run(conf, cmd);
        System.out.flush();
        System.exit(0);
    }

    private static void run(Configuration conf, List<String> cmd) {
        if (cmd.isEmpty()) {
            return;
        }
        System.out.println("=== CMD " + String.join(" ", cmd));
        int rc;
        try {
            switch (cmd.get(0)) {
                case "@blocks":
                    rc = blocks(conf, new Path(cmd.get(1)));
                    break;
                case "@located":
                    rc = located(conf, new Path(cmd.get(1)));
                    break;
                case "@pread":
                case "@seek":
                    rc = read(conf, new Path(cmd.get(1)), Long.parseLong(cmd.get(2)), Integer.parseInt(cmd.get(3)), cmd.get(0).equals("@pread"));
                    break;
                default:
                    rc = ToolRunner.run(new FsShell(conf), cmd.toArray(new String[0]));
            }
        } catch (Exception e) {
            System.out.println("EXCEPTION " + e);
            rc = -1;
        }
        System.out.println();  // a command may end without a newline (-cat)
        System.out.println("=== EXIT " + rc);
        System.out.flush();
    }

    private static int blocks(Configuration conf, Path p) throws Exception {
        FileSystem fs = p.getFileSystem(conf);
        FileStatus st = fs.getFileStatus(p);
        for (BlockLocation b : fs.getFileBlockLocations(st, 0, st.getLen())) {
            System.out.println("BLOCK " + b.getOffset() + " " + b.getLength() + " " + String.join(",", Arrays.asList(b.getNames())));
        }
        return 0;
    }

    private static int read(Configuration conf, Path p, long off, int len, boolean positional) throws Exception {
        FileSystem fs = p.getFileSystem(conf);
        byte[] buf = new byte[len];
        try (FSDataInputStream in = fs.open(p)) {
            if (positional) {
                in.readFully(off, buf);
            } else {
                in.seek(off);
                in.readFully(buf);
            }
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : MessageDigest.getInstance("MD5").digest(buf)) {
            hex.append(String.format("%02x", b));
        }
        System.out.println("READ " + off + " " + len + " " + hex);
        return 0;
    }

    private static int located(Configuration conf, Path p) throws Exception {
        FileSystem fs = p.getFileSystem(conf);
        RemoteIterator<LocatedFileStatus> it = fs.listLocatedStatus(p);
        while (it.hasNext()) {
            LocatedFileStatus st = it.next();
            System.out.println("LOCATED " + st.getPath().toUri().getPath() + " " + st.getLen() + " " + st.getBlockLocations().length);
        }
        return 0;
    }
}
