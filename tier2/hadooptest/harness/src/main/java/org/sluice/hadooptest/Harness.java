package org.sluice.hadooptest;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.SequenceFile;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.io.compress.CompressionCodec;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;
import org.apache.hadoop.mapreduce.lib.input.SequenceFileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.util.ReflectionUtils;

/**
 * Runs real Hadoop for Sluice's Go tests (package tier2/hadooptest). Modes:
 *
 * <pre>
 * hdfs DIR                      a MiniDFSCluster with its data under DIR; prints
 *                               "NAMENODE 127.0.0.1:RPCPORT HTTP 127.0.0.1:HTTPPORT"
 *                               once it serves, runs until stdin closes or SIGTERM
 * hdfs-ha DIR NAMESERVICE       a MiniDFSCluster whose nameservice NAMESERVICE has two
 *                               NameNodes, nn0 (active) and nn1 (standby); see HaCluster
 * seqdump PATH...               reads SequenceFiles with SequenceFile.Reader
 * mapreduce INPUTDIR OUTPUTDIR  a local MapReduce job over INPUTDIR's SequenceFiles
 * </pre>
 *
 * seqdump prints, per file, tab-separated lines:
 *
 * <pre>
 * FILE  path
 * HEADER  keyClass  valueClass  NONE|RECORD|BLOCK  codecClass or "-"
 * META  hex(name)  hex(value)          one per metadata entry
 * REC  key  hex(value)                 one per record, in file order
 * END  record count
 * </pre>
 *
 * A LongWritable key prints in decimal; any other key, and every value, as the
 * hex of its serialized bytes (BytesWritable and Text: the bytes they hold).
 *
 * mapreduce writes, through a map-only job, text files part-m-NNNNN under
 * OUTPUTDIR, one line per record: "file \t key \t hex(value)" with file the
 * record's path relative to INPUTDIR.
 */
public final class Harness {
    private Harness() {}

    public static void main(String[] args) {
        if (args.length < 1) {
            usage();
        }
        try {
            run(args);
        } catch (Throwable e) {
            // Exit even when Hadoop left non-daemon threads behind (a
            // cluster that failed half-way through starting).
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        switch (args[0]) {
            case "hdfs" -> {
                if (args.length != 2) usage();
                hdfs(new File(args[1]));
            }
            case "hdfs-ha" -> {
                if (args.length != 3) usage();
                HaCluster.run(new File(args[1]), args[2]);
            }
            case "seqdump" -> {
                if (args.length < 2) usage();
                seqdump(args);
            }
            case "mapreduce" -> {
                if (args.length != 3) usage();
                System.exit(mapreduce(args[1], args[2]) ? 0 : 1);
            }
            default -> usage();
        }
    }

    private static void usage() {
        System.err.println("usage: Harness hdfs DIR | hdfs-ha DIR NAMESERVICE | seqdump PATH... | mapreduce INPUTDIR OUTPUTDIR");
        System.exit(2);
    }

    // ---- hdfs ----

    private static void hdfs(File dir) throws Exception {
        Configuration conf = clusterConf(dir);

        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, dir)
                .numDataNodes(1)
                .nameNodePort(0)
                .nameNodeHttpPort(0)
                .format(true)
                .build();
        cluster.waitActive();
        cluster.waitClusterUp();

        CountDownLatch stop = new CountDownLatch(1);
        // SIGTERM: shut down cleanly and exit 0 (the JVM's own handler
        // would exit 143).
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), s -> stop.countDown());
        Thread stdin = new Thread(() -> {
            try {
                InputStream in = System.in;
                byte[] buf = new byte[256];
                while (in.read(buf) >= 0) {
                    // discard: only the end of stdin matters
                }
            } catch (IOException e) {
                // treated as the end of stdin
            }
            stop.countDown();
        }, "stdin-watch");
        stdin.setDaemon(true);
        stdin.start();

        int rpc = cluster.getNameNodePort();
        int http = cluster.getNameNode().getHttpAddress().getPort();
        System.out.println("NAMENODE 127.0.0.1:" + rpc + " HTTP 127.0.0.1:" + http);
        System.out.flush();

        stop.await();
        cluster.shutdown(true);
        System.out.println("STOPPED");
        System.out.flush();
        System.exit(0);
    }

    /** The configuration of a test cluster with its data under dir. */
    static Configuration clusterConf(File dir) {
        Configuration conf = new HdfsConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, dir.getAbsolutePath());
        conf.set("hadoop.tmp.dir", new File(dir, "tmp").getAbsolutePath());
        // Everything on loopback, on ports the kernel picks.
        conf.set("dfs.namenode.rpc-address", "127.0.0.1:0");
        conf.set("dfs.namenode.http-address", "127.0.0.1:0");
        conf.set("dfs.datanode.address", "127.0.0.1:0");
        conf.set("dfs.datanode.http.address", "127.0.0.1:0");
        conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
        // One DataNode: replication 1, and no pipeline recovery looking for
        // a DataNode that is not there.
        conf.setInt("dfs.replication", 1);
        conf.set("dfs.client.block.write.replace-datanode-on-failure.enable", "false");
        // Small blocks so a test can cross block boundaries cheaply (the
        // NameNode refuses blocks under this minimum).
        conf.setLong("dfs.namenode.fs-limits.min-block-size", 4096);
        // WebHDFS for HTTP clients (hdfs-cli).
        conf.setBoolean("dfs.webhdfs.enabled", true);
        conf.setInt("dfs.namenode.safemode.extension", 0);
        conf.setInt("dfs.heartbeat.interval", 1);
        return conf;
    }

    // ---- seqdump ----

    private static void seqdump(String[] args) throws IOException {
        Configuration conf = new HdfsConfiguration();
        // Hadoop's scripts put $HADOOP_CONF_DIR on the classpath; the
        // harness runs without them, so it adds the site files itself
        // (an hdfs://NAMESERVICE/ path needs hdfs-site.xml).
        String confDir = System.getenv("HADOOP_CONF_DIR");
        if (confDir != null && !confDir.isEmpty()) {
            for (String site : new String[] {"core-site.xml", "hdfs-site.xml"}) {
                File f = new File(confDir, site);
                if (f.isFile()) {
                    conf.addResource(new Path(f.toURI()));
                }
            }
        }
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        for (int i = 1; i < args.length; i++) {
            Path p = new Path(args[i]);
            try (SequenceFile.Reader r = new SequenceFile.Reader(conf, SequenceFile.Reader.file(p))) {
                out.println("FILE\t" + args[i]);
                CompressionCodec codec = r.getCompressionCodec();
                out.println("HEADER\t" + r.getKeyClassName() + "\t" + r.getValueClassName() + "\t"
                        + r.getCompressionType() + "\t" + (codec == null ? "-" : codec.getClass().getName()));
                for (Map.Entry<Text, Text> e : r.getMetadata().getMetadata().entrySet()) {
                    out.println("META\t" + hex(e.getKey()) + "\t" + hex(e.getValue()));
                }
                Writable key = (Writable) ReflectionUtils.newInstance(r.getKeyClass(), conf);
                Writable val = (Writable) ReflectionUtils.newInstance(r.getValueClass(), conf);
                long n = 0;
                while (r.next(key, val)) {
                    String k = key instanceof LongWritable lw ? Long.toString(lw.get()) : hex(key);
                    out.println("REC\t" + k + "\t" + hex(val));
                    n++;
                }
                out.println("END\t" + n);
            }
        }
        out.flush();
    }

    private static String hex(Writable w) throws IOException {
        if (w instanceof BytesWritable b) {
            return hex(b.getBytes(), b.getLength());
        }
        if (w instanceof Text t) {
            return hex(t.getBytes(), t.getLength());
        }
        java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        w.write(new java.io.DataOutputStream(buf));
        byte[] b = buf.toByteArray();
        return hex(b, b.length);
    }

    private static final char[] DIGITS = "0123456789abcdef".toCharArray();

    static String hex(byte[] b, int n) {
        char[] c = new char[2 * n];
        for (int i = 0; i < n; i++) {
            c[2 * i] = DIGITS[(b[i] >> 4) & 0xf];
            c[2 * i + 1] = DIGITS[b[i] & 0xf];
        }
        return new String(c);
    }

    // ---- mapreduce ----

    /** The job's input directory's path (no scheme), for RecordMapper. */
    static final String INPUT_KEY = "sluice.harness.input";

    private static boolean mapreduce(String input, String output) throws Exception {
        Configuration conf = new Configuration();
        conf.set("mapreduce.framework.name", "local");
        File tmp = java.nio.file.Files.createTempDirectory("sluice-mr").toFile();
        conf.set("hadoop.tmp.dir", tmp.getAbsolutePath());
        conf.setBoolean(FileInputFormat.INPUT_DIR_RECURSIVE, true);
        Path in = new Path(input);
        in = in.getFileSystem(conf).makeQualified(in);
        conf.set(INPUT_KEY, in.toUri().getPath());

        Job job = Job.getInstance(conf, "sluice-seqfile-read");
        job.setJarByClass(Harness.class);
        job.setInputFormatClass(SequenceFileInputFormat.class);
        job.setMapperClass(RecordMapper.class);
        job.setNumReduceTasks(0);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(Text.class);
        job.setOutputFormatClass(TextOutputFormat.class);
        FileInputFormat.addInputPath(job, in);
        FileOutputFormat.setOutputPath(job, new Path(output));
        boolean ok = job.waitForCompletion(false);
        FileSystem.getLocal(conf).delete(new Path(tmp.getAbsolutePath()), true);
        if (!ok) {
            System.err.println("mapreduce: job failed: " + job.getStatus().getFailureInfo());
        }
        return ok;
    }

    /** Emits (file relative to the input dir, "key \t hex(value)") per record. */
    public static final class RecordMapper extends Mapper<Writable, Writable, Text, Text> {
        private final Text file = new Text();
        private final Text line = new Text();

        @Override
        protected void setup(Context ctx) {
            String root = ctx.getConfiguration().get(INPUT_KEY);
            String p = ((FileSplit) ctx.getInputSplit()).getPath().toUri().getPath();
            if (root != null && p.startsWith(root + "/")) {
                p = p.substring(root.length() + 1);
            }
            file.set(p);
        }

        @Override
        protected void map(Writable key, Writable val, Context ctx) throws IOException, InterruptedException {
            String k = key instanceof LongWritable lw ? Long.toString(lw.get()) : hex(key);
            line.set(k + "\t" + hex(val));
            ctx.write(file, line);
        }
    }
}
