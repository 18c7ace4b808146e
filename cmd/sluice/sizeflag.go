package main

import (
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"
)

// byteSize is a flag value in bytes that parses what parseBytes does
// (1048576, 512MiB, 10GiB) and 0, which the size flags take as "the
// default" or "none".
type byteSize struct{ p *int64 }

func (b byteSize) Set(s string) error {
	if s == "0" {
		*b.p = 0
		return nil
	}
	n, err := parseBytes(s)
	if err != nil {
		return err
	}
	*b.p = n
	return nil
}

// String prints the size in the largest binary unit that holds it
// exactly, so --help shows 256MiB rather than 268435456.
func (b byteSize) String() string {
	if b.p == nil {
		return "0"
	}
	n := *b.p
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// sizeFlag is the one kind of flag for every size in bytes: dest starts at
// value, and the flag takes the same forms everywhere.
func sizeFlag(name, usage string, value int64, dest *int64) *cli.GenericFlag {
	*dest = value
	return &cli.GenericFlag{Name: name, Usage: usage + " (bytes, or 512MiB, 10GiB)", Value: byteSize{dest}}
}

var _ fmt.Stringer = byteSize{}
