package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
)

// clusterFlags holds --zk, the one cluster-mode flag that is not a field
// of embed.ClusterConfig: its comma-separated list becomes Servers.
type clusterFlags struct {
	// ZK is the ZooKeeper ensemble, "host:port,host:port"; empty: not in
	// a cluster.
	ZK string
}

// clusterUsage are the usage texts of the cluster-mode flags that say
// what the flag means for the role.
type clusterUsage struct {
	ZK, SessionTimeout, ID, Advertise string
}

// flags are the cluster-mode flags of `sluice node` and `sluice
// controller` (--zk, --zk-root, --zk-session-timeout, --id, --advertise):
// --zk into o, the rest into c's fields, with embed's defaults.
func (o *clusterFlags) flags(c *embed.ClusterConfig, u clusterUsage) []cli.Flag {
	d := embed.DefaultClusterConfig()
	return []cli.Flag{
		&cli.StringFlag{Name: "zk", Usage: u.ZK, Destination: &o.ZK},
		&cli.StringFlag{Name: "zk-root", Usage: "root `ZNODE` of the cluster's keys", Value: d.Root, Destination: &c.Root},
		durationFlag("zk-session-timeout", u.SessionTimeout, d.SessionTimeout, &c.SessionTimeout),
		&cli.StringFlag{Name: "id", Usage: u.ID, Destination: &c.ID},
		&cli.StringFlag{Name: "advertise", Usage: u.Advertise, Destination: &c.Advertise},
	}
}

// apply sets c.Servers from --zk, if given.
func (o *clusterFlags) apply(c *embed.ClusterConfig) {
	if o.ZK != "" {
		c.Servers = strings.Split(o.ZK, ",")
	}
}
