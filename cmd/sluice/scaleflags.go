package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/node/rates"
	"github.com/sluice-streams/sluice/protocol/api"
)

// autoScaleFlags are the auto-scaler's flags of `sluice controller` and
// `sluice standalone` (--autoscale-*), bound to o's fields with d's
// values as defaults.
func autoScaleFlags(o *controller.AutoScaleOptions, d controller.AutoScaleOptions) []cli.Flag {
	*o = d
	return []cli.Flag{
		&cli.GenericFlag{Name: "autoscale-interval", Usage: "look at BY_RATE_* streams' segment rates every `D` and split or merge segments (90s, 1h30m, 7d)",
			Value: durationValue{p: &o.Interval, check: positive}},
		&cli.BoolFlag{Name: "no-autoscale", Usage: "never split or merge segments by their rates (BY_RATE_* streams scale only when asked)", Destination: &o.Off},
		// 0s asks for no cooldown (NoCooldown), not for the options' default.
		&cli.GenericFlag{Name: "autoscale-cooldown", Usage: "scale a stream at most once every `D` (90s, 1h30m, 7d; 0s: no cooldown)",
			Value: durationValue{p: &o.Cooldown, then: func(d time.Duration) { o.NoCooldown = d == 0 }}},
		durationFlag("autoscale-pending-timeout", "give up a scale that waits for a stream's open transactions (refusing new ones meanwhile) after `D` (0: the longest transaction lease plus two intervals)",
			d.PendingTimeout, &o.PendingTimeout),
		&cli.IntFlag{Name: "autoscale-max-segments", Usage: "auto-scaling splits no stream beyond `N` active segments", Value: d.MaxSegments, Destination: &o.MaxSegments,
			Action: func(_ *cli.Context, n int) error {
				if n < 1 || n > api.MaxSegments {
					return fmt.Errorf("--autoscale-max-segments %d: want 1..%d", n, api.MaxSegments)
				}
				return nil
			}},
	}
}

// rateWindowsFlag is --rate-windows of `sluice node` and `sluice
// standalone`: the four windows of the segments' rate averages.
func rateWindowsFlag(dest *[rates.NumWindows]time.Duration, d [rates.NumWindows]time.Duration) cli.Flag {
	*dest = d
	return &cli.GenericFlag{Name: "rate-windows", Usage: "average each segment's append rates over four `WINDOWS` for auto-scaling, shortest first, by comma (5s,15s,30s,1m)",
		Value: windowsValue{p: dest}}
}

// positive refuses a duration that is not above zero.
func positive(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%v: want a positive duration", d)
	}
	return nil
}

// windowsValue is a list of rates.NumWindows durations, by comma.
type windowsValue struct {
	p *[rates.NumWindows]time.Duration
}

func (v windowsValue) Set(s string) error {
	parts := strings.Split(s, ",")
	if len(parts) != rates.NumWindows {
		return fmt.Errorf("rate windows %q: want %d durations separated by commas, shortest first", s, rates.NumWindows)
	}
	var w [rates.NumWindows]time.Duration
	for i, p := range parts {
		d, err := parseDuration(strings.TrimSpace(p))
		if err != nil {
			return fmt.Errorf("rate window %d: %w", i+1, err)
		}
		w[i] = d
	}
	if err := rates.ConfigFor(w).Validate(); err != nil {
		return err
	}
	*v.p = w
	return nil
}

func (v windowsValue) String() string {
	if v.p == nil || *v.p == ([rates.NumWindows]time.Duration{}) {
		return ""
	}
	s := make([]string, len(v.p))
	for i, d := range v.p {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}
