package embed_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/embed"
)

// The auto-scaling settings are checked by Validate, each bad value with
// one error naming it; the standalone's defaults are its own.
func TestValidateAutoScale(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"rate windows out of order", func() error {
			c := embed.DefaultNodeConfig()
			c.RateWindows = [4]time.Duration{time.Minute, time.Second, 2 * time.Minute, 3 * time.Minute}
			return c.Validate()
		}(), "window 2 (1s) is shorter than window 1 (1m0s)"},
		{"rate window zero", func() error {
			c := embed.DefaultNodeConfig()
			c.RateWindows = [4]time.Duration{time.Second, 2 * time.Second, 0, 4 * time.Second}
			return c.Validate()
		}(), "window 3 is 0s"},
		{"max segments", func() error {
			c := embed.DefaultControllerConfig()
			c.AutoScale.MaxSegments = 5000
			return c.Validate()
		}(), "auto-scale max segments 5000: want 1..1024"},
		{"cooldown", func() error {
			c := embed.DefaultControllerConfig()
			c.AutoScale.Cooldown = -time.Second
			return c.Validate()
		}(), "auto-scale cooldown -1s is negative"},
		{"standalone max segments", func() error {
			c := embed.DefaultStandaloneConfig()
			c.Controller.AutoScale.MaxSegments = -1
			return c.Validate()
		}(), "controller: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, embed.ErrInvalidConfig) || !strings.Contains(tt.err.Error(), tt.want) {
				t.Fatalf("Validate: %v; want ErrInvalidConfig saying %q", tt.err, tt.want)
			}
		})
	}
	s := embed.DefaultStandaloneConfig()
	if s.Controller.AutoScale != embed.StandaloneAutoScale || s.Node.RateWindows[0] != 5*time.Second {
		t.Errorf("standalone defaults: %+v, windows %v", s.Controller.AutoScale, s.Node.RateWindows)
	}
	if c := embed.DefaultControllerConfig(); c.AutoScale != controller.DefaultAutoScaleOptions() {
		t.Errorf("controller defaults: %+v", c.AutoScale)
	}
}
