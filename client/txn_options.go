package client

import (
	"fmt"
	"time"
)

// TxnOption configures a transaction (Writer.BeginTxn).
type TxnOption func(*txnConfig)

type txnConfig struct {
	lease        time.Duration // 0: the controller's default
	pingInterval time.Duration // 0: a third of the granted lease; < 0: none
	noScaleWait  bool          // WithoutScaleWait
}

func (c *txnConfig) validate() error {
	if c.lease < 0 || (c.lease > 0 && c.lease < time.Millisecond) {
		return fmt.Errorf("client: transaction lease must be 0 (the controller's default) or at least 1ms, got %v", c.lease)
	}
	return nil
}

// WithLease asks for a transaction lease of d (default 0: the
// controller's default, 30s unless configured otherwise; the controller
// refuses a lease above its maximum, 10 minutes by default). An OPEN
// transaction whose lease runs out without a ping is aborted by the
// controller's sweeper and can no longer be committed. The lease is
// rounded down to milliseconds.
func WithLease(d time.Duration) TxnOption { return func(c *txnConfig) { c.lease = d } }

// WithPingInterval sets how often the background goroutine renews the
// lease (default: a third of the lease the controller granted, so two
// pings may fail before it runs out). A negative interval disables the
// background pings: the caller pings with Txn.Ping, or lets the lease run
// out.
func WithPingInterval(d time.Duration) TxnOption { return func(c *txnConfig) { c.pingInterval = d } }

// WithoutScaleWait makes BeginTxn return ctlclient.ErrScalePending at
// once, rather than wait, when the stream's automatic scale is pending.
// For a program that holds a transaction open while it begins the next
// (as examples/pipeline does): the pending scale waits for that open
// transaction, so a BeginTxn that waited would wait for itself until the
// controller gives the scale up. Such a program begins the next
// transaction with this option and, refused, commits (or aborts) the open
// one first and then begins the next one without it.
func WithoutScaleWait() TxnOption { return func(c *txnConfig) { c.noScaleWait = true } }
