package scheduler

import (
	"errors"
	"time"

	"github.com/sluice-streams/sluice/scheduler/mesosauth"
)

// logNoSubscription logs why a subscription failed and when the next
// one is tried. A refused credential or login is an error an operator
// must fix (the message names the principal, never the secret); the
// backoff keeps the retries slow.
func (d *Driver) logNoSubscription(err error, wait time.Duration) {
	l := d.log.WithError(err).WithField("retry", wait.Round(time.Millisecond).String())
	if errors.Is(err, mesosauth.ErrRefused) || errors.Is(err, mesosauth.ErrLogin) {
		l.WithField("principal", d.cfg.Principal).Error("scheduler: authentication refused; check the principal and its secret (docs/OPERATIONS.md, Strict mode); retrying")
		return
	}
	l.Warn("scheduler: no subscription; retrying")
}
