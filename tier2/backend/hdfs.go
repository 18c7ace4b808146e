package backend

import (
	"fmt"
	"net/url"

	"github.com/sluice-streams/sluice/tier2"
)

func openHDFS(u *url.URL) (tier2.Storage, error) {
	return nil, fmt.Errorf("%w: %s: the HDFS backend is not built in yet", ErrBadURI, u)
}
