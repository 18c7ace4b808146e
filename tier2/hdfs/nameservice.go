package hdfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/colinmarc/hdfs/v2/hadoopconf"
)

// ErrNameservice means a nameservice could not be resolved into NameNode
// addresses: no Hadoop configuration, a nameservice it does not define,
// or one without NameNode RPC addresses.
var ErrNameservice = errors.New("hdfs: cannot resolve nameservice")

// Nameservice resolves the logical name of an HDFS cluster (hdfs://NS/...)
// into the RPC addresses of its NameNodes, from the Hadoop configuration
// found as Hadoop's client finds it: the core-site.xml and hdfs-site.xml
// in $HADOOP_CONF_DIR, else in $HADOOP_HOME/etc/hadoop or
// $HADOOP_HOME/conf (the first of them that has either file). Relative directories
// are taken from the working directory (a Mesos task's HADOOP_CONF_DIR
// is its sandbox, "."). Errors match ErrNameservice and name the
// nameservice and the directories looked in.
func Nameservice(ns string) ([]string, error) {
	var dirs []string
	if d := os.Getenv("HADOOP_CONF_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if d := os.Getenv("HADOOP_HOME"); d != "" {
		// Hadoop 2 and later keep it in etc/hadoop; the client
		// library looks in conf, as Hadoop 1 did.
		dirs = append(dirs, filepath.Join(d, "etc", "hadoop"), filepath.Join(d, "conf"))
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w %q: neither HADOOP_CONF_DIR nor HADOOP_HOME is set, so there is no hdfs-site.xml to look it up in", ErrNameservice, ns)
	}
	for i, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			dirs[i] = abs
		}
	}
	for _, d := range dirs {
		conf, err := hadoopconf.Load(d)
		if err != nil {
			return nil, fmt.Errorf("%w %q: read the Hadoop configuration in %s: %v", ErrNameservice, ns, d, err)
		}
		if conf != nil {
			return NameNodesOf(conf, ns, d)
		}
	}
	return nil, fmt.Errorf("%w %q: no core-site.xml or hdfs-site.xml in %s", ErrNameservice, ns, strings.Join(dirs, " or "))
}

// NameNodesOf returns the RPC addresses of nameservice ns's NameNodes in
// conf, whose files were read from where (for errors), in the order
// dfs.ha.namenodes.<ns> lists them, as Hadoop reads them:
//
//	dfs.nameservices                  ns1,ns2           (comma-separated)
//	dfs.ha.namenodes.<ns>             nn0,nn1           the NameNodes' ids
//	dfs.namenode.rpc-address.<ns>.<id> host:port        one per id
//
// A nameservice without dfs.ha.namenodes.<ns> has one NameNode, at
// dfs.namenode.rpc-address.<ns>.
func NameNodesOf(conf hadoopconf.HadoopConf, ns, where string) ([]string, error) {
	known := slices.Contains(list(conf["dfs.nameservices"]), ns)
	ids := list(conf["dfs.ha.namenodes."+ns])
	if !known && len(ids) == 0 {
		return nil, fmt.Errorf("%w %q: it is not among dfs.nameservices (%q) of the Hadoop configuration in %s", ErrNameservice, ns, conf["dfs.nameservices"], where)
	}
	var addrs []string
	if len(ids) == 0 {
		if a := strings.TrimSpace(conf["dfs.namenode.rpc-address."+ns]); a != "" {
			addrs = append(addrs, a)
		}
	}
	for _, id := range ids {
		a := strings.TrimSpace(conf["dfs.namenode.rpc-address."+ns+"."+id])
		if a == "" {
			return nil, fmt.Errorf("%w %q: NameNode %q has no dfs.namenode.rpc-address.%s.%s in the Hadoop configuration in %s", ErrNameservice, ns, id, ns, id, where)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w %q: no NameNode RPC address (dfs.ha.namenodes.%s or dfs.namenode.rpc-address.%s) in the Hadoop configuration in %s", ErrNameservice, ns, ns, ns, where)
	}
	return addrs, nil
}

// list splits a comma-separated Hadoop value, dropping blanks.
func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
