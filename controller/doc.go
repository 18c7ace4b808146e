// Package controller is Sluice's control plane core: scopes, streams,
// epochs and scaling, truncation and transactions. It keeps its state in a
// cluster.Store and acts on the nodes through a SegmentStore (NodeSegments:
// the wire protocol via client/segclient). The REST API, leader election
// and container assignment are built on it elsewhere.
//
// # Metadata layout
//
// Keys of the cluster.Store (values are JSON; keys that exist only as
// parents have empty values and count as absent):
//
//	scopes/<scope>                          {"scopeName", "creationTime"}
//	scopes/<scope>/streams/<stream>         the stream record (below)
//	scopes/<scope>/streams/<stream>/txns/<id>  a transaction record
//	scopes/<scope>/streams/<stream>/retention  {"cuts": [{"time", "size", "cut"}, ...]} (below)
//	scopes/<scope>/streams/<stream>/writers/<hex of writer id>  {"writer", "time", "position": {number: offset}, "received"} (below)
//	scopes/<scope>/streams/<stream>/watermarks  {"marks": [{"seq", "lower", "upper", "epoch", "cut": {number: offset}}, ...]} (below)
//
// The stream record holds everything about a stream that must change
// together, so that every change is one compare-and-set of one key and two
// controllers can never lose each other's updates:
//
//	{
//	  "config":       api.StreamConfig,
//	  "creationTime": ms since the Unix epoch,
//	  "sealed":       bool,
//	  "segments":     [{"number", "epoch" (that created it), "low", "high"}, ...]  // from firstSegment on; index + firstSegment = number
//	  "epochs":       [{"epoch", "creationTime", "segments": [numbers, by key],
//	                    "trigger"?, "reason"?}, ...] // from firstEpoch on; index + firstEpoch = epoch; last = current
//	  "firstSegment"?, "firstEpoch"?: the first segment and epoch kept (absent: 0, all),
//	  "nextSegment":  the next segment number (numbers are never reused),
//	  "head":         {number: offset} the truncation cut, absent if never truncated,
//	  "txns":         {id: {"epoch"}} transactions not yet COMMITTED/ABORTED,
//	  "workflow":     the unfinished workflow, absent if none (below)
//	}
//
// An epoch's "trigger" is "manual" (POST .../scale) or "auto" (the
// auto-scaler, with its "reason": the hot or cold segments and their
// measured rates against the target); records written before these keys
// existed have neither, and the API shows epoch 0 as "create" and any
// other as "manual" (the only kind of scale there was). A scale's
// workflow record carries the two keys until publishEpoch copies them
// into the new epoch.
//
// A segment's name is protocol.SegmentName(scope, stream, number, epoch
// that created it). Segments are deleted by truncation when they lie
// wholly before "head". The last step of a truncation (cleanup) also drops
// from the record the epochs wholly before "head" (every segment of them
// deleted) that ended more than a week ago (KeepDeletedHistory), and the
// segments only they held, moving "firstEpoch" and "firstSegment" up: the
// record then grows with the scales after the head (which retention
// bounds) and a week before it, not with every scale ever. History
// queries (scaling-events, segments between cuts, successors, watermarks,
// a sequenced writer's gone segments) see only what is kept; a stream cut
// naming a dropped segment (a reader more than a week behind the head) is
// refused (ErrInvalid) instead of being read from the head. A stream never
// truncated keeps every epoch: about 300 bytes per automatic scale of a
// 16-segment stream, so ZooKeeper's 1 MB is some 3,000 scales away. A
// scale's reason is at most 256 bytes (MaxReasonLen). In memory the
// dropped segments and epochs are placeholders, so that index = number
// still holds; older binaries cannot read a record with "firstSegment".
//
// The transaction record: {"id", "scope", "stream", "epoch", "parents",
// "segments" (segments[i] = protocol.TransactionSegmentName(parents[i],
// id)), "leaseMillis", "expiryTime", "creationTime", "status"}. Finished
// transactions keep their record (status COMMITTED or ABORTED) until the
// stream is deleted.
//
// # Workflows
//
// A change that touches nodes is a workflow: a list of steps, each
// idempotent. The workflow record ({"kind", "id", "step", "startTime",
// and the kind's parameters}) lives in the stream record; writing it is the
// step "intent", refused with ErrConflict while another workflow of the
// stream is unfinished. Before step i runs, the record says step = i; after
// it, one compare-and-set advances step (and applies the step's change of
// the record, if any). A crash therefore leaves the record naming the step
// to redo, and Resume (called by the leader on start; safe to call any time
// and from several controllers at once) completes it. Options.StepHook is
// called before every step, intent included, so tests can stop a workflow
// there.
//
//	createStream: intent (record with epoch 0), createSegments, activate
//	scale:        intent (new epoch number, new segment numbers and ranges,
//	              trigger and reason; nextSegment advanced; refused,
//	              ErrInvalid, if it would leave fewer active segments than
//	              scalingPolicy.minSegments), createSegments, sealSegments,
//	              publishEpoch (the new epoch appended), cleanup
//	seal:         intent, finishTxns (abort OPEN transactions, complete
//	              COMMITTING/ABORTING ones), sealSegments, markSealed
//	truncate:     intent (the cut, the segments it deletes), truncateSegments,
//	              publishHead, deleteSegments, cleanup; before the intent
//	              is recorded, every offset that moves a head is checked
//	              with its node (CheckBoundary): a cut inside an event is
//	              refused and records nothing
//	delete:       intent (stream must be sealed), deleteSegments,
//	              removeRecords (transaction records, then the stream record)
//
// The node operations behind the steps are idempotent as SegmentStore
// documents (creating an existing segment, sealing a sealed one, deleting a
// missing one: success). NodeSegments waits out a container that is moving
// or opening: an operation refused as retriable (WrongHost,
// ContainerUnavailable) is located and sent again, with backoff, for up to
// 15 s (NodeSegments.RetryFor) before the step fails.
//
// # Transactions
//
// CreateTxn writes the transaction record (OPEN), then adds the id to the
// stream record's "txns" (a compare-and-set refused while the stream is
// sealed or a scale, seal or delete is unfinished), then creates one
// transaction segment per active segment. A crash in between leaves an OPEN
// transaction that nobody was told of; its lease expires and the sweeper
// aborts it.
//
// The transaction record's status is the commit and abort workflow's
// record:
//
//	commit: intent (OPEN -> COMMITTING; refused once the lease expired),
//	        sealTxnSegments, mergeTxnSegments, markCommitted (-> COMMITTED,
//	        then the id leaves the stream record)
//	abort:  intent (OPEN -> ABORTING), deleteTxnSegments,
//	        markAborted (-> ABORTED, then the id leaves the stream record)
//
// Both transitions out of OPEN are compare-and-sets of the record, so a
// commit and an abort (user, sweeper or seal) cannot both win.
//
// Atomicity, as in Pravega: a node merges one transaction segment into its
// parent atomically (one log record appends the data and deletes the
// source). Across segments the commit is all-or-nothing in outcome, not in
// instant: once COMMITTING is recorded, the commit is certain to complete
// (every step is retried by Resume until it does; an abort is refused), and
// every transaction segment is sealed before the first merge, so nothing
// can be added to the transaction while parts of it become visible.
// Readers may see one parent's share of the transaction before another's,
// never a part of one segment's share, and never any share of an aborted
// transaction. A merge is done at most once: before merging, the
// controller asks the node for the transaction segment; if it no longer
// exists (and the parent does), an earlier run merged it.
//
// The sweeper (a goroutine of the Service, every Options.TxnSweepInterval,
// stopped by Close) aborts OPEN transactions whose lease has expired, and
// completes those left COMMITTING or ABORTING past their lease (a request
// cancelled midway), which would otherwise hold scales, and new
// transactions behind a pending one, until a leader's Resume.
// PingTxn renews a lease up to Options.MaxTxnLease; an expired lease cannot
// be renewed, nor the transaction committed.
//
// # Transactions and scaling: a pending scale goes first
//
// Sluice does not implement Pravega's rolling transactions: a transaction
// always commits into the epoch it was created in, whose segments are all
// still open, so per-key order holds without duplicating segments. A
// scale's intent is therefore refused (ErrConflict) while the stream has
// any unfinished transaction, and a transaction cannot be created while a
// scale is unfinished; both checks go through the stream record's
// compare-and-set, so they cannot both pass.
//
// So that a stream whose writers always hold a transaction open (one
// begun before the previous one commits, as examples/pipeline does) can
// still scale, a scale the auto-scaler decides while transactions are
// open is recorded as pending, and takes priority over new transactions:
//
//  1. mark: one compare-and-set puts the decision (segments to seal, new
//     ranges, reason, the epoch it was decided in, the time) into the
//     stream record's pendingScale, only if the record still has
//     unfinished transactions, no workflow, no mark and the same epoch
//     (with none left, the scale runs at once instead);
//  2. while the mark is there (and while a scale workflow runs) CreateTxn
//     is refused with ErrScalePending, which wraps ErrConflict (REST: 409
//     SCALE_PENDING, "stream s/x is waiting to scale: new transactions
//     wait until it has"; the client's BeginTxn retries it); the open
//     transactions are committed, aborted or swept as usual;
//  3. each auto-scaling step looks at the mark: transactions or a
//     workflow still unfinished, it waits; none left, it runs the scale
//     workflow, whose intent compare-and-set also clears the mark (it
//     requires the mark recorded at the same time still there), so the
//     mark and the scale never both exist and a crash at any point leaves
//     either the mark (the next step, on any controller, carries it out)
//     or the workflow (Resume completes it);
//  4. a mark older than AutoScale.PendingTimeout (default MaxTxnLease plus
//     two auto-scale intervals: a transaction begun just before the mark
//     has ended by then unless it was pinged all along) is given up, as is
//     one the stream no longer fits (sealed, policy no longer BY_RATE,
//     another epoch, no longer valid); a manual scale that runs overtakes
//     it. A given-up mark moves to the record's givenUp list (the newest
//     16, with when and why; GET .../scaling-events shows it), and the
//     stream is not marked again within AutoScale.Cooldown of it, nor
//     within PendingTimeout (also with no cooldown), so new transactions
//     are never held back for ever: after a give-up they go through for
//     at least as long as the mark held them.
//
// A workflow left unfinished (its controller failed, or a step failed
// with no caller to retry it) would hold new transactions and pending
// scales back until a leader's Resume, which a standalone does not have:
// the auto-scaler's step completes any stream's workflow (a scale, a
// truncation, a seal, ...) older than twice its interval (at least 5 s)
// itself.
//
// Manual scales do not take this path: Scale is refused (ErrConflict) at
// once while a transaction is unfinished, so a caller learns it now
// rather than waiting, and retries when it chooses. Sealing a stream
// aborts its OPEN transactions and completes those being committed or
// aborted, and gives a mark up.
//
// # Auto-scaling
//
// Streams with a BY_RATE_IN_EVENTS_PER_SEC or BY_RATE_IN_KBYTES_PER_SEC
// policy are split and merged by their load. The nodes measure each
// segment's append rates (package node/rates: exponentially decaying
// averages over four windows, 2/5/10/20 min by default) and answer
// GetSegmentRates; the decision is taken here, from those rates and the
// stream record, not on the nodes: the policy lives only in the record,
// so nothing has to follow a segment to its node, and a node restart or a
// container move loses only the averages (a segment the node measured for
// less than its longest window is never called cold, so busy segments
// are never merged for want of history).
//
// AutoScaleStep (every Options.AutoScale.Interval, by the leader, or by
// the Service itself over a store that elects no leader, as retention)
// does, per stream with a BY_RATE_* policy that is not sealed:
//
//  1. ask the nodes for the rates of the current epoch's segments
//     (NodeSegments.SegmentRates: for each stream, one GetSegmentRates
//     per node serving its segments and per 1024 of them, with a
//     deadline); a segment not reported is unmeasured;
//  2. autoscale.Decide (pure, controller/autoscale): the stream's policy
//     (target in events/s or KB/s, scaleFactor, minSegments), the
//     controller's maximum (AutoScale.MaxSegments), the segments with
//     their ranges and rates, the current epoch's creation time against
//     AutoScale.Cooldown, an unfinished workflow and open transactions in;
//     at most one split (of the widest segment below minSegments, else
//     of the hottest) or one merge of two cold neighbours out, with its
//     reason;
//  3. carry it out with the scale workflow (trigger "auto", the reason
//     recorded in the new epoch): one scale per stream at a time, and a
//     crash mid-scale is completed once by Resume like any scale. While
//     the stream has unfinished transactions the decision is recorded as
//     pending instead ("Transactions and scaling" above) and carried out
//     once they have ended; the scale that finally runs says how long it
//     waited. A scale refused because the stream changed meanwhile is
//     decided again at the next step.
//
// Transaction commits count in the rates: a node adds a merged
// transaction segment's events and bytes to its parent's meter, so a
// stream written only in transactions scales too.
//
// Apart from a pending scale, nothing new is stored for it: the
// decision's inputs are the record and the nodes' rates, so any
// controller (a new leader) continues where another left off.
//
// # Retention
//
// A stream's RetentionPolicy (LIMITED_DAYS: Value days; LIMITED_SIZE_MB:
// Value MiB) is enforced as in Pravega, by truncation at recorded cuts.
// RetentionStep (run every Options.RetentionInterval by the leader, or by
// the Service itself over a store that elects no leader) does, per stream
// with a policy that is neither sealed nor in a workflow:
//
//  1. ask the nodes for the length of every segment from the head cut on;
//     the active segments' lengths are the tail cut, and the bytes from
//     the head cut to it the stream's size;
//  2. load the recorded cuts, drop those the head moved past, measure the
//     rest from the current head ("size"), and record the tail cut with
//     the time if the newest recorded cut is older than 1/128 of the
//     retention time (or the stream grew by 1/128 of the size limit);
//  3. decideRetention (pure): LIMITED_DAYS: the newest cut recorded at or
//     before now - days; LIMITED_SIZE_MB: if the size exceeds the limit,
//     the newest cut that leaves at least the limit after it. Only a cut
//     after the head that moves no segment's offset back qualifies;
//  4. keep the picked cut and the newer ones (at most MaxRetentionCuts),
//     write the record (create or compare-and-set), and truncate at the
//     picked cut with TruncateStream: the truncate workflow, resumable and
//     refused (retried at the next step) while another workflow runs.
//
// The delete workflow removes the retention record with the stream's.
//
// # Watermarks
//
// Event time as in Pravega (controller/watermark holds the pure rules).
// NoteWriterTime (POST .../writers/{writer}/time) stores a writer's latest
// report under writers/<hex of its id>: its greatest time noted, its
// greatest offset per segment, and when the report arrived ("received",
// by Options.Clock). A report for a committed transaction ("txn") takes
// the lengths of the transaction's parent segments as the position.
// The report is merged into the key with compare-and-set (retried), so
// two concurrent reports of one writer never lose each other. A sealed
// stream takes no report (ErrConflict); a report that raced the stream's
// seal and delete checks the stream record after its write and takes
// itself back out (ErrConflict or ErrNotFound), so none outlives the
// delete workflow's removal. RemoveWriter (a writer's Close) deletes the
// key.
//
// WatermarkStep (every Options.WatermarkInterval, 1 s, on every
// controller, leader or not: all its writes are compare-and-sets, so two
// controllers at once append one watermark, not two) does, per stream
// with writer reports: watermark.Compute over the reports, the stream's
// epochs and the last watermark; deletes the reports of writers silent
// for longer than Options.WriterTimeout (1 minute; the delete names the
// version read, so a writer that reported meanwhile stays); and appends
// the watermark it decided, numbered seq = last + 1, to the watermarks
// record, keeping the newest MaxWatermarks (256) and dropping older ones
// whose cut truncation deleted. Watermarks (GET .../watermarks?after=SEQ)
// returns them with the cut's segment names and key ranges. A watermark
// is emitted only once every active writer has noted a time past the
// last one's lower time, so times and cuts only advance. The delete
// workflow's last step removes the reports and the watermarks. A step
// that read the reports before the delete removed them checks the stream
// record after its write and, if the stream is gone or being deleted,
// deletes the record again (the version it wrote); CreateStream also
// clears any writers and watermarks keys of the name before the stream
// exists, so a new stream of a deleted one's name starts with neither.
// Watermarks skips a record's marks of epochs the stream does not have.
//
// # Errors
//
// Errors for a reason of the request wrap ErrNotFound, ErrExists,
// ErrInvalid or ErrConflict (REST: 404, 409, 400, 409); a workflow stopped
// by StepHook wraps ErrStepFailed; anything else is the store's or a
// node's failure, and a workflow that failed on one is left for Resume.
//
// # Names
//
// Scope and stream names follow protocol.ValidateName. Names beginning
// with '_' are reserved: refused (ErrInvalid) and not listed unless the
// context carries WithInternal.
package controller
