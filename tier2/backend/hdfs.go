package backend

import (
	"net/url"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/hdfs"
)

// openHDFS opens hdfs://[user@]namenode:port/dir, or
// hdfs://[user@]nameservice/dir: an authority without a port is a
// nameservice, resolved into its NameNodes' addresses through the Hadoop
// configuration (hdfs.Nameservice), as Hadoop's client resolves a
// logical URI. The client fails over between them.
func openHDFS(u *url.URL) (tier2.Storage, error) {
	nns := []string{u.Host}
	if u.Port() == "" {
		var err error
		if nns, err = hdfs.Nameservice(u.Hostname()); err != nil {
			return nil, err // names the nameservice; callers name the URI
		}
	}
	return hdfs.New(hdfs.Options{NameNodes: nns, Root: u.Path, User: u.User.Username()})
}
