package namenode

import (
	"testing"
)

func TestExplore(t *testing.T) {
	f := newFixture(t)
	_, addr := serve(t, f.v, Config{DataAddr: func() string { return "127.0.0.1:9" }})
	u := "hdfs://" + addr
	shells(t,
		[]string{"-ls", "-R", u + "/"},
		[]string{"-du", u + "/s/a"},
		[]string{"-count", "-q", u + "/s"},
		[]string{"-stat", "%n %b %r %o %u %g %F %y", u + "/s/a/segment=0/00000000000000000000.seq"},
		[]string{"-test", "-e", u + "/nope"},
		[]string{"-find", u + "/", "-name", "*.seq"},
		[]string{"@blocks", u + "/s/a/segment=3/00000000000000000000.seq"},
		[]string{"@located", u + "/s/a/segment=3"},
		[]string{"-mkdir", u + "/s/x"},
		[]string{"-df", u + "/"},
	)
}
