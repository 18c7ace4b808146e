package backend

import (
	"net/url"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/hdfs"
)

// openHDFS opens hdfs://[user@]namenode:port/dir.
func openHDFS(u *url.URL) (tier2.Storage, error) {
	return hdfs.New(hdfs.Options{NameNodes: []string{u.Host}, Root: u.Path, User: u.User.Username()})
}
