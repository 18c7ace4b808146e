package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// day is the unit "d" of parseDuration.
const day = 24 * time.Hour

// maxDays is the most days a time.Duration holds (106751).
const maxDays = int64(math.MaxInt64 / day)

// errDuration is what parseDuration says of text it does not take.
var errDuration = errors.New("want a duration such as 90s, 15m, 12h, 7d or 1d12h")

// parseDuration parses a duration: a Go duration ("90s", "1h30m",
// ".5s", "+5s", "-1s"), optionally preceded by a whole number of days ("7d", "1d12h",
// "-2d"). It is the one parser of every duration flag.
func parseDuration(s string) (time.Duration, error) {
	rest, neg := strings.CutPrefix(s, "-")
	if !neg {
		rest = strings.TrimPrefix(rest, "+")
	}
	var days time.Duration
	if n, after, ok := strings.Cut(rest, "d"); ok {
		if n == "" || n[0] < '0' || n[0] > '9' {
			return 0, errDuration
		}
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, errDuration
		}
		if err != nil || v > maxDays {
			return 0, fmt.Errorf("%s days: want at most %d", n, maxDays)
		}
		days, rest = time.Duration(v)*day, after
		if rest == "" {
			return sign(days, neg), nil
		}
	}
	if rest == "" || (rest[0] < '0' || rest[0] > '9') && rest[0] != '.' {
		return 0, errDuration
	}
	d, err := time.ParseDuration(rest)
	if err != nil {
		return 0, errDuration
	}
	if d > math.MaxInt64-days {
		return 0, fmt.Errorf("longer than the longest duration, %v", time.Duration(math.MaxInt64))
	}
	return sign(days+d, neg), nil
}

func sign(d time.Duration, neg bool) time.Duration {
	if neg {
		return -d
	}
	return d
}

// durationValue is a flag value that parses what parseDuration does,
// then, when check is set, refuses what check refuses.
type durationValue struct {
	p     *time.Duration
	check func(time.Duration) error
	then  func(time.Duration) // if set, called with each value set
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	if v.check != nil {
		if err := v.check(d); err != nil {
			return err
		}
	}
	*v.p = d
	if v.then != nil {
		v.then(d)
	}
	return nil
}

// String prints the duration as Go does (10m0s), as --help has always
// shown defaults, and nothing for 0, which --help then leaves out.
func (v durationValue) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	return v.p.String()
}

// durationFlag is the one kind of flag for every duration: dest starts at
// value, and the flag takes the same forms everywhere (Go durations, and
// days: 7d, 1d12h).
func durationFlag(name, usage string, value time.Duration, dest *time.Duration) *cli.GenericFlag {
	*dest = value
	return &cli.GenericFlag{Name: name, Usage: usage + " (90s, 1h30m, 7d)", Value: durationValue{p: dest}}
}

// wholeDays is the check of --retention-time: a whole number of days, at
// least one.
func wholeDays(d time.Duration) error {
	if d < day || d%day != 0 {
		return errors.New("want whole days, such as 7d or 168h")
	}
	return nil
}

var _ fmt.Stringer = durationValue{}
