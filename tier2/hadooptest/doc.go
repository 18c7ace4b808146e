// Package hadooptest runs real Hadoop for the tests of tier 2: a
// MiniDFSCluster (a NameNode and a DataNode in one JVM), Hadoop's own
// SequenceFile.Reader, and a local MapReduce job reading chunks with
// SequenceFileInputFormat. They are the readers tier 2 is written for: what
// these accept, MapReduce, Hive and "hadoop fs -text" accept.
//
// The Java side is the harness under harness/ (Harness.java with its
// modes; HaCluster.java, the hdfs-ha mode; and Shells.java, which runs
// several FsShell commands in one JVM). StartHA runs a MiniDFSCluster
// whose nameservice has two NameNodes, writes the client's site files for
// it (HA.ConfDir, for HADOOP_CONF_DIR) and fails over on command
// (HA.Failover: active to standby, the other active; HA.Crash: the
// active shut down, the other made active). SeqDump reads the site files
// of $HADOOP_CONF_DIR, so its paths may name a nameservice. `make harness` builds it with Maven: the classes go to
// harness/target/classes and the dependency classpath (the jars in the
// local Maven repository) to harness/target/classpath.txt. Tests fail,
// never skip, when it is missing, saying to run `make harness` (make test
// does). java comes from $JAVA_HOME/bin, else PATH.
//
// Every JVM dies with the test process (Pdeathsig) and is stopped at
// cleanup; clusters listen on 127.0.0.1 only and keep their data in a
// temporary directory.
package hadooptest
