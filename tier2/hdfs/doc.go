// Package hdfs is the tier-2 backend for HDFS, over the native client
// github.com/colinmarc/hdfs/v2 (NameNode RPC and DataNode data transfer;
// no JVM). A Storage maps a storage path (see package tier2) onto
//
//	<Options.Root>/<scope>/<stream>/segment=<segment number>/<first offset>.seq
//
// so MapReduce and Hive read chunks in place.
//
// # Durability
//
// Create makes missing parent directories (0755) and creates the file
// with the create flag alone (never overwrite), mode 0444: the NameNode
// refuses a path that exists or is being written. Writer.Close flushes the
// last packets, waits for the DataNodes' acknowledgements, and completes
// the file on the NameNode, retrying while the NameNode answers that the
// last block is not yet reported by enough DataNodes (Hadoop's Java client
// does the same); only then is the file whole and its length final.
// Rename is the NameNode's rename with overwrite, atomic, and logged to
// the NameNode's edit log before it answers.
//
// A Reader fetches the file's block locations when it is opened, so a
// rename or removal afterwards never makes it read another file's bytes:
// it reads the old blocks or fails.
//
// # Nameservices
//
// Options.NameNodes lists every NameNode of the cluster; the client talks
// to one and moves to the next when it answers StandbyException or its
// connection fails (a NameNode that failed is skipped for 5 s).
// Nameservice resolves an HA nameservice's name (hdfs://NS/...) into
// those addresses from the Hadoop configuration in $HADOOP_CONF_DIR (else
// $HADOOP_HOME/etc/hadoop or $HADOOP_HOME/conf), read with the client
// library's hadoopconf package:
//
//	dfs.nameservices                 NS[,...]     NS must be listed, or have ids
//	dfs.ha.namenodes.NS              id1,id2      the NameNodes, in this order
//	dfs.namenode.rpc-address.NS.ID   host:port    one for each id
//	dfs.namenode.rpc-address.NS      host:port    a nameservice without ids
//
// Its errors match ErrNameservice and name the nameservice and the
// directories looked in.
//
// # Errors and timeouts
//
// Errors name the storage path and wrap the cause. A missing path matches
// tier2.ErrNotExist, a taken one tier2.ErrExist. tier2.ErrUnavailable is
// matched by every error that is not an answer about the path: a NameNode
// or DataNode that cannot be reached or stops answering within
// Options.Timeout (connections carry a deadline on every read and write),
// and the NameNode's refusals that pass with time: safe mode, standby,
// retriable, too busy, name or space quota exceeded, and a block that no
// DataNode can take (a full cluster).
package hdfs
