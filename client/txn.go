package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TxnController is the part of the controller's REST API that
// transactions call; *ctlclient.Client satisfies it. It is an optional
// extension of Controller, found by type assertion: a Client made
// WithController of something without it cannot begin transactions
// (ErrNoTxnController). Like Controller's, every method blocks until the
// reply or ctx is done, retries nothing, and returns ctlclient's errors.
type TxnController interface {
	CreateTxn(ctx context.Context, scope, stream string, lease time.Duration) (api.TxnInfo, error)
	GetTxn(ctx context.Context, scope, stream, id string) (api.TxnInfo, error)
	PingTxn(ctx context.Context, scope, stream, id string, lease time.Duration) (api.TxnInfo, error)
	CommitTxn(ctx context.Context, scope, stream, id string) error
	AbortTxn(ctx context.Context, scope, stream, id string) error
}

// Errors of transactions, classified with errors.Is.
var (
	// ErrTxnExpired: the transaction's lease ran out (no ping in time).
	// The controller refuses to commit it and its sweeper aborts it; an
	// error wrapping ErrTxnExpired wraps ErrTxnAborted too once the
	// controller has aborted it.
	ErrTxnExpired = errors.New("client: transaction lease expired")
	// ErrTxnAborted: the controller aborted the transaction, not this
	// Txn's Abort: its sweeper (lease expired: see ErrTxnExpired), a seal
	// of the stream, or an AbortTxn from elsewhere. Its events are gone.
	ErrTxnAborted = errors.New("client: transaction aborted")
	// ErrTxnNotOpen: a Write, Flush, Commit or Abort on a transaction that
	// this Txn has committed, aborted or closed, or that is being committed.
	ErrTxnNotOpen = errors.New("client: transaction not open")
	// ErrNoTxnController: the Client's Controller is not a TxnController.
	ErrNoTxnController = errors.New("client: the controller does not serve transactions")
)

// Txn is one open transaction of a stream, begun by Writer.BeginTxn (as
// Pravega's TransactionalEventStreamWriter.beginTxn). Its events go to the
// transaction's segments, one per segment of the stream's current epoch,
// invisible to readers until Commit merges each into its parent; Abort (or
// a lease that runs out) discards them. Its methods are safe for
// concurrent use.
//
// Inside, a Txn is a Writer of its transaction segments: the same
// per-segment goroutines, batching, in-flight window, event numbers and
// SetupAppend resends after every reconnection, so each event is stored
// exactly once in its transaction segment whatever breaks. Its writer id
// is the transaction id (a transaction segment is written by one Txn
// only). Its options (batch, window, backoff, state function) are those
// of the Writer that began it; the Writer itself may go on writing
// outside the transaction, or be closed: the Txn does not depend on it.
//
// The controller's rules (controller package, "Transactions" and
// "Transactions and scaling"): the stream cannot scale while the
// transaction is open, so the transaction commits into the epoch it was
// created in and per-key order holds: a key's transaction events come
// after the key's events written to the stream before Commit began, and
// before those written after Commit returned. An automatic scale decided
// while transactions are open goes first: new transactions wait for it
// (BeginTxn), the open ones commit or abort as usual. Sealing the stream
// aborts open transactions.
//
// A background goroutine renews the lease every WithPingInterval until
// Commit, Abort or Close, or until a ping is refused. A refused ping
// means the transaction was lost: its lease expired (ErrTxnExpired) or it
// was aborted (ErrTxnAborted); later calls return that error (Err) and
// Done is closed. A failed ping that may pass (controller unreachable)
// is tried again at the next interval.
type Txn struct {
	c             *Client
	tc            TxnController
	scope, stream string
	id            string
	lease         time.Duration // the lease granted; pings ask for it again
	w             *Writer       // the transaction segments' writer (Writer.txn)
	owner         *Writer       // the Writer that began it (CommitAt reports as it)

	// writeMu is held shared by Write while it queues an event, and
	// exclusively by Commit while it leaves txnOpen, so that Commit's
	// Flush covers every Write that returned before Commit was called.
	writeMu sync.RWMutex

	pingCancel context.CancelFunc
	pingDone   chan struct{} // closed when the pinger returns; nil without one
	done       chan struct{} // Done

	mu struct {
		sync.Mutex
		state     txnState
		err       error  // sticky: why the transaction cannot commit
		acks      []*Ack // events written and not yet seen by a Flush
		compactAt int    // len(acks) at which Write drops finished acks
		doneOnce  sync.Once
	}
}

type txnState int

const (
	txnOpen       txnState = iota
	txnCommitting          // Commit is flushing or asking the controller
	txnCommitted
	txnAborting // Abort runs, or returned an error (retry it)
	txnAborted
	txnClosed
)

const txnAckCompact = 1024

// BeginTxn opens a transaction on the Writer's stream: the controller
// creates it (CreateTxn, leased WithLease) with one transaction segment per
// active segment, and the Txn starts its segment goroutines and its
// pinger. It blocks until the controller creates the transaction or ctx
// is done, never longer. It retries one refusal only, with the Writer's
// backoff (WithBackoff) until ctx is done: ctlclient.ErrScalePending, a
// stream whose automatic scale waits for its open transactions to end
// (the pause lasts until the transactions open before it have ended and
// the scale has run; see the controller's "Transactions and scaling").
// Everything else is returned at once: a stream being scaled by hand or
// sealed answers ctlclient.ErrConflict, an unknown one
// ctlclient.ErrNotFound. Once ctx is done while waiting, the error wraps
// both ctx's error and ErrScalePending. A program that holds another
// transaction of the stream open while it calls BeginTxn must not wait
// (the scale waits for that one): see WithoutScaleWait. The Txn must end
// with Commit, Abort or Close.
func (w *Writer) BeginTxn(ctx context.Context, opts ...TxnOption) (*Txn, error) {
	var cfg txnConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tc, ok := w.c.ctl.(TxnController)
	if !ok {
		return nil, ErrNoTxnController
	}
	w.mu.Lock()
	closed := w.mu.closed
	w.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	info, err := w.createTxn(ctx, tc, cfg.lease, !cfg.noScaleWait)
	if err != nil {
		return nil, fmt.Errorf("client: begin transaction on %s/%s: %w", w.scope, w.stream, err)
	}
	t := &Txn{c: w.c, tc: tc, owner: w, scope: w.scope, stream: w.stream, id: info.ID,
		lease: time.Duration(info.LeaseMillis) * time.Millisecond, done: make(chan struct{})}
	t.mu.compactAt = txnAckCompact
	ranges, err := t.segmentRanges(ctx, info)
	if err != nil {
		// Nobody can use it: give it back now rather than at lease end,
		// within the caller's ctx (once that is done, the lease ends it).
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (the transaction is left to its lease)", err)
		}
		if aerr := tc.AbortTxn(ctx, t.scope, t.stream, t.id); aerr != nil {
			err = fmt.Errorf("%w (its abort failed too, the lease will end it: %v)", err, aerr)
		}
		return nil, err
	}

	wcfg := w.cfg
	wcfg.id = info.ID
	t.w = w.c.newWriter(w.scope, w.stream, wcfg, ranges, true)

	interval := cfg.pingInterval
	if interval == 0 {
		interval = t.lease / 3
		if interval <= 0 {
			interval = time.Millisecond
		}
	}
	if interval > 0 {
		var pctx context.Context
		pctx, t.pingCancel = context.WithCancel(context.Background())
		t.pingDone = make(chan struct{})
		go t.pingLoop(pctx, interval)
	}
	return t, nil
}

// segmentRanges returns the transaction's segments, each with the key
// range (and number and epoch) of its parent. While the transaction is
// open the stream cannot scale, so its current segments are the parents.
func (t *Txn) segmentRanges(ctx context.Context, info api.TxnInfo) ([]api.SegmentRange, error) {
	cur, err := t.c.ctl.CurrentSegments(ctx, t.scope, t.stream)
	if err != nil {
		return nil, fmt.Errorf("client: begin transaction on %s/%s: %w", t.scope, t.stream, err)
	}
	byName := map[string]api.SegmentRange{}
	for _, r := range cur {
		byName[r.Segment] = r
	}
	if len(info.Segments) == 0 {
		return nil, fmt.Errorf("client: begin transaction on %s/%s: the controller gave no transaction segment", t.scope, t.stream)
	}
	var out []api.SegmentRange
	for _, seg := range info.Segments {
		r, ok := byName[protocol.ParentSegment(seg)]
		if !ok {
			return nil, fmt.Errorf("client: begin transaction on %s/%s: transaction segment %s has no active parent", t.scope, t.stream, seg)
		}
		r.Segment = seg
		out = append(out, r)
	}
	return out, nil
}

// ID returns the transaction id (a UUID; the controller's TxnInfo.ID).
func (t *Txn) ID() string { return t.id }

// Done is closed when the transaction ends for this Txn: committed,
// aborted, closed, or lost (Err says why).
func (t *Txn) Done() <-chan struct{} { return t.done }

// Err returns why the transaction can no longer be committed: an error
// wrapping ErrTxnExpired or ErrTxnAborted, or an event's failure (then
// Abort it); nil while it can.
func (t *Txn) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.err
}

// usableLocked returns why events cannot be added now, or nil.
func (t *Txn) usableLocked() error {
	if t.mu.err != nil {
		return t.mu.err
	}
	if t.mu.state != txnOpen {
		return t.notOpenLocked()
	}
	return nil
}

func (t *Txn) notOpenLocked() error {
	what := map[txnState]string{txnCommitting: "being committed", txnCommitted: "committed",
		txnAborting: "being aborted", txnAborted: "aborted", txnClosed: "closed"}[t.mu.state]
	return fmt.Errorf("client: transaction %s is %s: %w", t.id, what, ErrTxnNotOpen)
}

// Write validates event and queues it for the transaction segment whose
// parent's range holds protocol.KeyHash(key) (an empty key spreads events
// round-robin), exactly as Writer.Write does: it blocks only while the
// in-flight window is full, until room is made or ctx is done (then
// ctx.Err() and nothing is written); an event over protocol.MaxEventSize
// is refused with an error wrapping protocol.ErrEventTooLarge and the
// transaction stays usable. event may be reused when Write returns. It
// does not wait for the event to be stored: Flush or Commit does. A
// transaction that was lost (Err) or is no longer open refuses events.
func (t *Txn) Write(ctx context.Context, key string, event []byte) error {
	t.writeMu.RLock()
	defer t.writeMu.RUnlock()
	t.mu.Lock()
	err := t.usableLocked()
	t.mu.Unlock()
	if err != nil {
		return err
	}
	ack, err := t.w.Write(ctx, key, event)
	if err != nil {
		if errors.Is(err, ErrClosed) { // lost or aborted meanwhile
			t.mu.Lock()
			if uerr := t.usableLocked(); uerr != nil {
				err = uerr
			}
			t.mu.Unlock()
		}
		return err
	}
	t.mu.Lock()
	t.mu.acks = append(t.mu.acks, ack)
	var failed error
	if len(t.mu.acks) >= t.mu.compactAt {
		// Keep memory bounded between flushes: drop acknowledged events,
		// remembering a failure.
		keep := t.mu.acks[:0]
		for _, a := range t.mu.acks {
			select {
			case <-a.Done():
				if a.err != nil && failed == nil {
					failed = a.err
				}
			default:
				keep = append(keep, a)
			}
		}
		clear(t.mu.acks[len(keep):])
		t.mu.acks = keep
		t.mu.compactAt = max(txnAckCompact, 2*len(keep))
	}
	t.mu.Unlock()
	if failed != nil {
		return t.eventFailed(ctx, failed)
	}
	return nil
}

// Flush blocks until every event written to the transaction before Flush
// was called is stored in its transaction segment (still invisible to
// readers), or ctx is done (ctx.Err(); the events are still being written
// and a later Flush waits for them). Lost connections are retried inside,
// as by a Writer. If an event failed for good (say, the controller aborted
// the transaction and deleted its segments), the transaction is lost:
// Flush returns why (Err), and so does everything after but Abort and
// Close.
func (t *Txn) Flush(ctx context.Context) error {
	t.mu.Lock()
	if t.mu.err != nil {
		defer t.mu.Unlock()
		return t.mu.err
	}
	if t.mu.state != txnOpen && t.mu.state != txnCommitting {
		defer t.mu.Unlock()
		return t.notOpenLocked()
	}
	t.mu.Unlock()
	return t.flush(ctx)
}

func (t *Txn) flush(ctx context.Context) error {
	t.mu.Lock()
	acks := t.mu.acks
	t.mu.acks = nil
	t.mu.Unlock()
	for _, a := range acks {
		select {
		case <-a.Done():
		case <-ctx.Done():
			// Put them back for the next Flush, ahead of newer ones.
			t.mu.Lock()
			t.mu.acks = append(acks, t.mu.acks...)
			t.mu.Unlock()
			return ctx.Err()
		}
		if a.err != nil {
			return t.eventFailed(ctx, a.err)
		}
	}
	return nil
}

// eventFailed makes the transaction lost because an event of it failed
// for good, and returns the sticky error: what the controller says became
// of the transaction if it is no longer open, else the event's error.
func (t *Txn) eventFailed(ctx context.Context, cause error) error {
	if err := t.Err(); err != nil {
		return err
	}
	err := fmt.Errorf("client: transaction %s: an event could not be stored, so the transaction cannot commit (abort it): %w", t.id, cause)
	if info, gerr := t.tc.GetTxn(ctx, t.scope, t.stream, t.id); gerr == nil {
		switch info.Status {
		case api.TxnAborting, api.TxnAborted:
			err = t.abortedErr(info)
		case api.TxnCommitting, api.TxnCommitted:
			err = fmt.Errorf("client: transaction %s was committed elsewhere; an event could not be stored: %w: %w", t.id, ErrTxnNotOpen, cause)
		}
	}
	return t.lose(err)
}

// abortedErr says that the controller aborted the transaction, and
// whether its lease had expired (the sweeper's doing) by this machine's
// clock.
func (t *Txn) abortedErr(info api.TxnInfo) error {
	if time.Now().UnixMilli() >= info.ExpiryTime {
		return fmt.Errorf("client: transaction %s was aborted by the controller after its lease ran out: %w; %w", t.id, ErrTxnExpired, ErrTxnAborted)
	}
	return fmt.Errorf("client: transaction %s is %s: the stream was sealed or someone else aborted it: %w", t.id, info.Status, ErrTxnAborted)
}

func (t *Txn) expiredErr() error {
	return fmt.Errorf("client: transaction %s: %w (the controller refuses to commit it; its sweeper aborts it)", t.id, ErrTxnExpired)
}

// lose records err as the reason the transaction cannot commit (the first
// reason wins), stops pinging and the segment goroutines, closes Done,
// and returns the recorded reason. It does not wait for the pinger: it may
// run on it.
func (t *Txn) lose(err error) error {
	t.mu.Lock()
	if t.mu.err == nil {
		t.mu.err = err
	}
	err = t.mu.err
	t.mu.Unlock()
	if t.pingCancel != nil {
		t.pingCancel()
	}
	t.stopWriter()
	t.closeDone()
	return err
}

func (t *Txn) closeDone() { t.mu.doneOnce.Do(func() { close(t.done) }) }

// stopWriter stops the segment goroutines without flushing; events not
// yet acknowledged fail with ErrClosed.
func (t *Txn) stopWriter() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.w.Close(ctx) // returns ctx.Err(): nothing was flushed, as intended
}

// stopPinger stops the pinger and waits for it. Not from the pinger.
func (t *Txn) stopPinger() {
	if t.pingCancel != nil {
		t.pingCancel()
		<-t.pingDone
	}
}

// Commit flushes the transaction's events, then asks the controller to
// commit it (CommitTxn: seal the transaction segments, merge each into its
// parent, mark it COMMITTED), and returns nil once the controller says
// COMMITTED: every event of the transaction is then readable in the
// parents, each exactly once. The REST call returns only when the commit
// is complete; should it fail on the way (controller unreachable or
// unavailable, a node failing a merge) or return before the transaction
// reads COMMITTED, Commit asks GetTxn, with the Writer's backoff (capped
// at its maximum), and calls CommitTxn again while the transaction is OPEN
// or COMMITTING (committing is idempotent, and drives an interrupted
// commit on), until COMMITTED or ctx is done.
//
// Errors: one wrapping ErrTxnExpired if the lease ran out first (nothing
// of the transaction becomes visible), ErrTxnAborted if the controller
// aborted it, the first event failure (Err), ErrTxnNotOpen after Abort or
// Close. If ctx ends first, Commit returns ctx's error and the transaction
// may still be OPEN (pinged still: Commit or Abort it again) or COMMITTING
// (the controller will complete it: Status says); Commit may be called
// again. Writes racing with Commit are either flushed and committed or
// refused with ErrTxnNotOpen. After a successful Commit the Txn's
// goroutines have stopped; Commit again returns nil.
func (t *Txn) Commit(ctx context.Context) error {
	t.writeMu.Lock()
	t.mu.Lock()
	if t.mu.err == nil && t.mu.state == txnCommitted {
		t.mu.Unlock()
		t.writeMu.Unlock()
		return nil
	}
	if err := t.usableLocked(); err != nil {
		t.mu.Unlock()
		t.writeMu.Unlock()
		return err
	}
	t.mu.state = txnCommitting
	t.mu.Unlock()
	t.writeMu.Unlock()

	err := t.flush(ctx)
	if err == nil {
		err = t.commit(ctx)
	}
	t.mu.Lock()
	if err != nil {
		if t.mu.state == txnCommitting {
			t.mu.state = txnOpen
		}
		t.mu.Unlock()
		return err
	}
	t.mu.state = txnCommitted
	t.mu.Unlock()
	t.stopPinger()
	t.stopWriter()
	t.closeDone()
	return nil
}

// commit drives the controller's commit to COMMITTED (see Commit).
func (t *Txn) commit(ctx context.Context) error {
	wrap := func(err error) error { return fmt.Errorf("client: commit transaction %s: %w", t.id, err) }
	needCommit := true
	var commitErr error
	bo := t.w.cfg.newBackoff()
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := retry.Sleep(ctx, bo.NextBackOff()); err != nil {
				return wrap(err)
			}
		}
		if needCommit {
			commitErr = t.tc.CommitTxn(ctx, t.scope, t.stream, t.id)
			switch {
			case commitErr == nil:
				needCommit = false
			case ctx.Err() != nil:
				return wrap(commitErr)
			case errors.Is(commitErr, ctlclient.ErrNotFound), errors.Is(commitErr, ctlclient.ErrInvalid):
				return wrap(commitErr)
			}
			// ErrConflict: GetTxn says why. Anything else may pass.
		}
		info, err := t.tc.GetTxn(ctx, t.scope, t.stream, t.id)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ctlclient.ErrNotFound) {
				return wrap(err)
			}
			continue
		}
		switch info.Status {
		case api.TxnCommitted:
			return nil
		case api.TxnCommitting:
			// In progress (or interrupted: needCommit drives it on).
		case api.TxnOpen:
			if errors.Is(commitErr, ctlclient.ErrConflict) {
				// CommitTxn refuses an OPEN transaction only once its
				// lease has expired.
				return t.lose(t.expiredErr())
			}
			needCommit = true
		default:
			return t.lose(t.abortedErr(info))
		}
	}
}

// Abort discards the transaction: it stops pinging and writing (events
// not yet stored fail), then asks the controller to abort it (AbortTxn:
// the transaction segments are deleted, it reads ABORTED), retrying with
// backoff what may pass until the controller answers or ctx is done. None
// of its events is ever readable. Aborting an aborted, expired or lost
// transaction is success; a committed or committing one (Commit returned
// or is running, here or elsewhere) returns an error wrapping
// ErrTxnNotOpen. If ctx ends first the Txn no longer pings, so the lease
// ends the transaction anyway; Abort may be called again.
func (t *Txn) Abort(ctx context.Context) error {
	t.mu.Lock()
	switch t.mu.state {
	case txnAborted:
		t.mu.Unlock()
		return nil
	case txnCommitting, txnCommitted, txnClosed:
		defer t.mu.Unlock()
		return t.notOpenLocked()
	}
	t.mu.state = txnAborting
	t.mu.Unlock()
	t.stopPinger()
	t.stopWriter()

	wrap := func(err error) error { return fmt.Errorf("client: abort transaction %s: %w", t.id, err) }
	bo := t.w.cfg.newBackoff()
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := retry.Sleep(ctx, bo.NextBackOff()); err != nil {
				return wrap(err)
			}
		}
		err := t.tc.AbortTxn(ctx, t.scope, t.stream, t.id)
		if err == nil {
			break
		}
		if ctx.Err() != nil || errors.Is(err, ctlclient.ErrNotFound) || errors.Is(err, ctlclient.ErrInvalid) {
			return wrap(err)
		}
		if errors.Is(err, ctlclient.ErrConflict) {
			// Committing or committed (AbortTxn refuses nothing else).
			info, gerr := t.tc.GetTxn(ctx, t.scope, t.stream, t.id)
			if gerr == nil && (info.Status == api.TxnCommitting || info.Status == api.TxnCommitted) {
				return wrap(fmt.Errorf("it is %s: %w", info.Status, ErrTxnNotOpen))
			}
		}
	}
	t.mu.Lock()
	t.mu.state = txnAborted
	t.mu.Unlock()
	t.closeDone()
	return nil
}

// Close stops the Txn's pinger and segment goroutines without committing
// or aborting: events not yet stored fail, and the controller aborts the
// transaction when its lease runs out. It is for a transaction given up
// without a word to the controller (Abort says it at once); after Commit or
// Abort it does nothing. Later calls but Status return ErrTxnNotOpen.
func (t *Txn) Close() error {
	t.mu.Lock()
	if t.mu.state == txnOpen || t.mu.state == txnAborting {
		t.mu.state = txnClosed
	}
	t.mu.Unlock()
	t.stopPinger()
	t.stopWriter()
	t.closeDone()
	return nil
}

// Status asks the controller for the transaction's status: api.TxnOpen,
// TxnCommitting, TxnCommitted, TxnAborting or TxnAborted. It blocks until
// the reply or ctx is done and retries nothing.
func (t *Txn) Status(ctx context.Context) (string, error) {
	info, err := t.tc.GetTxn(ctx, t.scope, t.stream, t.id)
	if err != nil {
		return "", fmt.Errorf("client: status of transaction %s: %w", t.id, err)
	}
	return info.Status, nil
}

// Ping renews the lease once, for the lease granted at BeginTxn; the
// background pinger calls it every WithPingInterval. It blocks until the
// controller answers or ctx is done and retries nothing. If the
// controller refuses because the transaction is lost (lease expired,
// aborted), the Txn becomes lost and Ping returns why (Err), wrapping
// ErrTxnExpired or ErrTxnAborted. Pinging a transaction being committed
// returns ErrTxnNotOpen.
func (t *Txn) Ping(ctx context.Context) error {
	if err := t.Err(); err != nil {
		return err
	}
	_, err := t.tc.PingTxn(ctx, t.scope, t.stream, t.id, t.lease)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("client: ping transaction %s: %w", t.id, err)
	if ctx.Err() != nil {
		return err
	}
	if errors.Is(err, ctlclient.ErrNotFound) {
		return t.lose(err)
	}
	if !errors.Is(err, ctlclient.ErrConflict) {
		return err // may pass
	}
	info, gerr := t.tc.GetTxn(ctx, t.scope, t.stream, t.id)
	if gerr != nil {
		return err
	}
	switch info.Status {
	case api.TxnOpen:
		// PingTxn refuses an OPEN transaction only once its lease expired.
		return t.lose(t.expiredErr())
	case api.TxnCommitting, api.TxnCommitted:
		return fmt.Errorf("client: ping transaction %s: it is %s: %w", t.id, info.Status, ErrTxnNotOpen)
	default:
		return t.lose(t.abortedErr(info))
	}
}

// pingLoop pings every interval until ctx is done (Commit, Abort, Close,
// lose), the transaction is lost, or it is being committed.
func (t *Txn) pingLoop(ctx context.Context, interval time.Duration) {
	defer close(t.pingDone)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		pctx, cancel := context.WithTimeout(ctx, interval)
		err := t.Ping(pctx)
		cancel()
		if t.Err() != nil || errors.Is(err, ErrTxnNotOpen) {
			return
		}
	}
}
