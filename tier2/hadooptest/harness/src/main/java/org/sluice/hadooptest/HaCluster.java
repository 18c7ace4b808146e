package org.sluice.hadooptest;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.MiniDFSNNTopology;

/**
 * The harness's "hdfs-ha DIR NAMESERVICE" mode: a MiniDFSCluster (one
 * DataNode) whose nameservice NAMESERVICE has two NameNodes, nn0 and nn1,
 * sharing their edit log, with nn0 active. It writes the client side of
 * the nameservice (core-site.xml with fs.defaultFS hdfs://NAMESERVICE,
 * hdfs-site.xml with dfs.nameservices, dfs.ha.namenodes.NAMESERVICE, each
 * NameNode's dfs.namenode.rpc-address.NAMESERVICE.ID and Hadoop's
 * configured failover proxy provider) to DIR/conf, then prints
 *
 * <pre>
 * HA NAMESERVICE CONF DIR/conf NAMENODES 127.0.0.1:PORT0,127.0.0.1:PORT1 ACTIVE 0
 * </pre>
 *
 * and reads commands, one per line, from stdin:
 *
 * <pre>
 * failover   the active NameNode becomes standby, then the other one active
 * crash      the active NameNode is shut down, then the other one made active
 * </pre>
 *
 * each answered "ACTIVE i" (the index of the NameNode now active) or
 * "ERROR message" (after a crash there is no NameNode to fail over to).
 * The end of stdin or SIGTERM shuts the cluster down and deletes DIR's
 * data.
 */
final class HaCluster {
    private HaCluster() {}

    /** Ends the command loop (SIGTERM, the end of stdin). */
    private static final String STOP = "\u0000stop";

    static void run(File dir, String ns) throws Exception {
        Configuration conf = Harness.clusterConf(dir);
        MiniDFSNNTopology topology = new MiniDFSNNTopology()
                .addNameservice(new MiniDFSNNTopology.NSConf(ns)
                        .addNN(new MiniDFSNNTopology.NNConf("nn0"))
                        .addNN(new MiniDFSNNTopology.NNConf("nn1")));
        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, dir)
                .nnTopology(topology)
                .numDataNodes(1)
                .format(true)
                .build();
        cluster.waitActive();
        cluster.transitionToActive(0);
        cluster.waitClusterUp();

        String[] addrs = new String[2];
        for (int i = 0; i < 2; i++) {
            InetSocketAddress a = cluster.getNameNode(i).getNameNodeAddress();
            addrs[i] = "127.0.0.1:" + a.getPort();
        }
        File confDir = new File(dir, "conf");
        writeClientConf(confDir, ns, addrs);

        BlockingQueue<String> commands = new LinkedBlockingQueue<>();
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), s -> commands.add(STOP));
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    commands.add(line.trim());
                }
            } catch (IOException e) {
                // treated as the end of stdin
            }
            commands.add(STOP);
        }, "stdin-commands");
        stdin.setDaemon(true);
        stdin.start();

        int active = 0;
        System.out.println("HA " + ns + " CONF " + confDir.getAbsolutePath()
                + " NAMENODES " + addrs[0] + "," + addrs[1] + " ACTIVE " + active);
        System.out.flush();
        for (String cmd = commands.take(); !cmd.equals(STOP); cmd = commands.take()) {
            int other = 1 - active;
            try {
                if (!cluster.isNameNodeUp(other)) {
                    throw new IOException("NameNode nn" + other + " is down");
                }
                switch (cmd) {
                    case "failover" -> {
                        cluster.transitionToStandby(active);
                        cluster.transitionToActive(other);
                    }
                    case "crash" -> {
                        cluster.shutdownNameNode(active);
                        cluster.transitionToActive(other);
                    }
                    default -> throw new IllegalArgumentException("unknown command \"" + cmd + "\"");
                }
                active = other;
                System.out.println("ACTIVE " + active);
            } catch (Exception e) {
                System.out.println("ERROR " + String.valueOf(e).replace('\n', ' '));
            }
            System.out.flush();
        }
        cluster.shutdown(true);
        System.out.println("STOPPED");
        System.out.flush();
        System.exit(0);
    }

    /** Writes what a client needs to reach the nameservice to dir. */
    private static void writeClientConf(File dir, String ns, String[] addrs) throws IOException {
        if (!dir.isDirectory() && !dir.mkdirs()) {
            throw new IOException("cannot make " + dir);
        }
        Configuration core = new Configuration(false);
        core.set("fs.defaultFS", "hdfs://" + ns);
        write(core, new File(dir, "core-site.xml"));

        Configuration hdfs = new Configuration(false);
        hdfs.set("dfs.nameservices", ns);
        StringBuilder ids = new StringBuilder();
        for (int i = 0; i < addrs.length; i++) {
            String id = "nn" + i;
            ids.append(i == 0 ? "" : ",").append(id);
            hdfs.set("dfs.namenode.rpc-address." + ns + "." + id, addrs[i]);
        }
        hdfs.set("dfs.ha.namenodes." + ns, ids.toString());
        hdfs.set("dfs.client.failover.proxy.provider." + ns,
                "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider");
        write(hdfs, new File(dir, "hdfs-site.xml"));
    }

    /** Writes conf to f whole: a temporary file, then a rename. */
    private static void write(Configuration conf, File f) throws IOException {
        File tmp = new File(f.getPath() + ".tmp");
        try (OutputStream out = new FileOutputStream(tmp)) {
            conf.writeXml(out);
        }
        Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.ATOMIC_MOVE);
    }
}
