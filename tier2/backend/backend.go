// Package backend opens a tier-2 Storage from its URI, the form the
// command line and the controller's API give it:
//
//	file:///abs/dir  or  /abs/dir  or  rel/dir   a directory (tier2/fs)
//	hdfs://namenode:port/dir                     HDFS (tier2/hdfs), one NameNode
//	hdfs://nameservice/dir                       HDFS, the NameNodes of a
//	                                             nameservice (HA) in the Hadoop
//	                                             configuration ($HADOOP_CONF_DIR)
//
// URI turns a directory into its file:// form for display and for Hive's
// LOCATION.
package backend

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
)

// ErrBadURI means a tier-2 URI has an unknown scheme or is malformed.
var ErrBadURI = errors.New("tier2: bad storage URI")

// Open opens the storage uri names.
func Open(uri string) (tier2.Storage, error) {
	u, err := parse(uri)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "file":
		return fs.New(u.Path)
	case "hdfs":
		return openHDFS(u)
	}
	return nil, fmt.Errorf("%w: %q: scheme %q (want file or hdfs)", ErrBadURI, uri, u.Scheme)
}

// URI returns uri in its canonical form: file:///abs/dir for a directory.
func URI(uri string) (string, error) {
	u, err := parse(uri)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

func parse(uri string) (*url.URL, error) {
	if uri == "" {
		return nil, fmt.Errorf("%w: empty", ErrBadURI)
	}
	if !strings.Contains(uri, "://") {
		abs, err := filepath.Abs(uri)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrBadURI, uri, err)
		}
		return &url.URL{Scheme: "file", Path: abs}, nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadURI, uri, err)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("%w: %q: a file URI names no host", ErrBadURI, uri)
		}
		u.Host = ""
	case "hdfs":
		if u.Host == "" {
			return nil, fmt.Errorf("%w: %q: no NameNode host:port or nameservice", ErrBadURI, uri)
		}
	default:
		return nil, fmt.Errorf("%w: %q: scheme %q (want file or hdfs)", ErrBadURI, uri, u.Scheme)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}
