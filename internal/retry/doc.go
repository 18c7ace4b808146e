// Package retry owns the waits between attempts: the exponential backoffs
// every retry loop of the module uses, Sleep, the one wait that ends early
// when its context does, and Every, the loop that runs a step at a steady
// pace until its context ends (the controller's periodic drivers).
//
// The backoffs are github.com/cenkalti/backoff/v5's ExponentialBackOff,
// configured here in the two shapes the module uses, so that a loop reads
// as "b := retry.NewBackoff(initial, max); ...; wait := b.NextBackOff()":
//
//   - NewBackoff(initial, max): initial, 2·initial, 4·initial, ... capped at
//     max, without jitter. For loops that retry one local thing (a listener,
//     a ZooKeeper session, a Mesos subscription), where spreading retries
//     across processes does not matter.
//   - NewJittered(min, max): waits that roughly double from min towards max,
//     each drawn at random within a third of its interval, and never shorter
//     than min nor longer than max. For clients, whose retries should not
//     arrive in step.
//
// Both are stateful and not safe for concurrent use: one per loop. Reset
// starts a backoff again from its first wait. Neither ever returns
// backoff.Stop; a loop bounds its own attempts or total time.
package retry
