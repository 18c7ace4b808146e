package controller

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/controller/watermark"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol/api"
)

// This file is the watermarks' driver: writers' reports of event time are
// stored one key per writer; WatermarkStep runs watermark.Compute per
// stream and appends what it decides to the stream's watermark record.

// Watermark defaults (Options.WatermarkInterval, WriterTimeout).
const (
	DefaultWatermarkInterval = time.Second
	DefaultWriterTimeout     = time.Minute
	// MaxWatermarks bounds the watermarks kept per stream (the oldest go
	// first).
	MaxWatermarks = 256
)

func writersKey(scope, stream string) string { return streamKey(scope, stream) + "/writers" }
func writerKey(scope, stream, writer string) string {
	return writersKey(scope, stream) + "/" + hex.EncodeToString([]byte(writer))
}
func watermarksKey(scope, stream string) string { return streamKey(scope, stream) + "/watermarks" }

// writerRec is the value of a writer's key: its latest report.
type writerRec struct {
	Writer   string          `json:"writer"`
	Time     int64           `json:"time"`
	Position map[int64]int64 `json:"position,omitempty"`
	Received int64           `json:"received"`
}

// watermarkRec is the value of a stream's watermarks key.
type watermarkRec struct {
	Marks []markRec `json:"marks"`
}

type markRec struct {
	Seq int64 `json:"seq"`
	watermark.Watermark
}

// NoteWriterTime records that writer noted event time wt.Time at
// wt.Position (or, with wt.Txn, at the end of that committed
// transaction's parent segments). A report keeps the greatest time and
// offsets the writer reported, merged with compare-and-set (concurrent
// reports of one writer both count). A report that raced the stream's
// seal or delete is taken back out and fails. Errors: ErrNotFound (stream or
// transaction), ErrInvalid (a bad writer id, time or position; both a
// position and a transaction), ErrConflict (the stream is sealed, or the
// transaction is not COMMITTED).
func (s *Service) NoteWriterTime(ctx context.Context, scope, stream, writer string, wt api.WriterTime) error {
	if err := checkWriterID(writer); err != nil {
		return err
	}
	if err := wt.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	r, err := s.load(ctx, scope, stream)
	if err != nil {
		return err
	}
	if r.Sealed {
		return fmt.Errorf("%w: stream %s/%s is sealed: nothing more is written, so no time to note", ErrConflict, scope, stream)
	}
	var pos map[int64]int64
	if wt.Txn != "" {
		if pos, err = s.txnEnd(ctx, r, wt.Txn); err != nil {
			return err
		}
	} else if pos, err = r.cutNumbers(wt.Position); err != nil {
		return err
	}
	key := writerKey(scope, stream, writer)
	v, err := s.mergeWriterRec(ctx, key, writerRec{Writer: writer, Time: wt.Time, Position: pos, Received: s.nowMillis()})
	if err != nil {
		return err
	}
	// A seal and delete of the stream may have run since the check above,
	// its removal of the writer records before our write: take the
	// report back out (the version written: a newer report stays).
	if err := s.streamGone(ctx, scope, stream, true); err != nil {
		s.store.Delete(ctx, key, v)
		return err
	}
	return nil
}

// mergeWriterRec merges rec into the writer record at key (greatest time
// and offsets) with compare-and-set, retried on a concurrent change, so
// two reports of one writer never lose each other. It returns the
// version written.
func (s *Service) mergeWriterRec(ctx context.Context, key string, rec writerRec) (cluster.Version, error) {
	for {
		kv, err := s.store.Get(ctx, key)
		if err != nil && !errors.Is(err, cluster.ErrNotFound) {
			return 0, err
		}
		found := err == nil
		merged := rec
		merged.Position = maps.Clone(rec.Position)
		if found && len(kv.Value) > 0 {
			var old writerRec
			if json.Unmarshal(kv.Value, &old) == nil {
				merged.Time = max(merged.Time, old.Time)
				for n, off := range old.Position {
					if off > merged.Position[n] {
						if merged.Position == nil {
							merged.Position = map[int64]int64{}
						}
						merged.Position[n] = off
					}
				}
			}
		}
		b, err := json.Marshal(merged)
		if err != nil {
			return 0, err
		}
		var v cluster.Version
		if found {
			v, err = s.store.CompareAndSet(ctx, key, b, kv.Version)
		} else {
			v, err = s.store.Create(ctx, key, b)
		}
		switch {
		case err == nil:
			return v, nil
		case errors.Is(err, cluster.ErrVersionMismatch), errors.Is(err, cluster.ErrExists), errors.Is(err, cluster.ErrNotFound):
			continue // a concurrent report or removal: merge again
		default:
			return 0, err
		}
	}
}

// streamGone returns an error if scope/stream no longer takes watermark
// records: it is deleted (ErrNotFound) or being deleted, or, if
// noSealed, sealed (ErrConflict). A record written after the stream's
// delete removed its records must be taken back out, else it outlives
// the stream.
func (s *Service) streamGone(ctx context.Context, scope, stream string, noSealed bool) error {
	r, _, err := s.loadStream(ctx, scope, stream)
	switch {
	case err != nil:
		return err
	case r.Workflow != nil && r.Workflow.Kind == kindDelete:
		return fmt.Errorf("%w: stream %s/%s is being deleted", ErrNotFound, scope, stream)
	case noSealed && r.Sealed:
		return fmt.Errorf("%w: stream %s/%s is sealed: nothing more is written, so no time to note", ErrConflict, scope, stream)
	}
	return nil
}

func checkWriterID(writer string) error {
	if err := api.ValidateWriterID(writer); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

// txnEnd is the position a committed transaction ends at: the lengths of
// its parent segments now (at or after the end of what it merged).
func (s *Service) txnEnd(ctx context.Context, r *streamRec, id string) (map[int64]int64, error) {
	t, _, err := s.loadTxn(ctx, r.Config.ScopeName, r.Config.StreamName, id)
	if err != nil {
		return nil, err
	}
	if t.Status != api.TxnCommitted {
		return nil, fmt.Errorf("%w: transaction %s is %s, not %s: its time counts once it is committed", ErrConflict, id, t.Status, api.TxnCommitted)
	}
	parents := api.StreamCut{}
	for _, p := range t.Parents {
		parents[p] = 0
	}
	pos, err := r.cutNumbers(parents)
	if err != nil {
		return nil, err
	}
	for n := range pos {
		info, err := s.segs.GetSegmentInfo(ctx, r.name(r.Segments[n]))
		if err != nil {
			return nil, err
		}
		pos[n] = info.Length
	}
	return pos, nil
}

// RemoveWriter forgets writer's reports (a writer that closed): it no
// longer holds the stream's time back. Forgetting an unknown writer is
// not an error; an unknown stream is ErrNotFound.
func (s *Service) RemoveWriter(ctx context.Context, scope, stream, writer string) error {
	if err := checkWriterID(writer); err != nil {
		return err
	}
	if _, err := s.load(ctx, scope, stream); err != nil {
		return err
	}
	err := s.store.Delete(ctx, writerKey(scope, stream, writer), cluster.AnyVersion)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil
	}
	return err
}

// Watermarks returns the stream's watermarks numbered after after, oldest
// first (at most MaxWatermarks are kept).
func (s *Service) Watermarks(ctx context.Context, scope, stream string, after int64) ([]api.Watermark, error) {
	r, err := s.load(ctx, scope, stream)
	if err != nil {
		return nil, err
	}
	rec, _, err := s.loadWatermarks(ctx, scope, stream)
	if err != nil {
		return nil, err
	}
	out := []api.Watermark{}
	for _, m := range rec.Marks {
		if m.Seq <= after {
			continue
		}
		if m.Epoch < 0 || m.Epoch >= int64(len(r.Epochs)) {
			// Not of this stream (a record left by a deleted stream of
			// the name, which CreateStream clears): skip it.
			continue
		}
		if m.Epoch < r.FirstEpoch {
			continue // wholly before the truncation head: dropped from the record
		}
		nums := r.Epochs[m.Epoch].Segments
		out = append(out, api.Watermark{Seq: m.Seq, LowerTime: m.Lower, UpperTime: m.Upper, Cut: r.cutNames(m.Cut), Segments: r.ranges(nums)})
	}
	return out, nil
}

func (s *Service) loadWatermarks(ctx context.Context, scope, stream string) (*watermarkRec, cluster.Version, error) {
	kv, err := s.store.Get(ctx, watermarksKey(scope, stream))
	if errors.Is(err, cluster.ErrNotFound) || err == nil && len(kv.Value) == 0 {
		return &watermarkRec{}, cluster.AnyVersion, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var rec watermarkRec
	if err := json.Unmarshal(kv.Value, &rec); err != nil {
		return nil, 0, fmt.Errorf("controller: watermark record %s: %w", kv.Key, err)
	}
	return &rec, kv.Version, nil
}

// watermarker runs WatermarkStep every WatermarkInterval until Close.
func (s *Service) watermarker() {
	defer s.wg.Done()
	retry.Every(s.ctx, s.opts.WatermarkInterval, s.WatermarkStep, func(err error) {
		s.log.WithError(err).Warn("controller: watermark step failed; retrying at the next interval")
	})
}

// WatermarkStep computes every stream's next watermark once: for each
// stream with writer reports, it forgets the writers silent for longer
// than Options.WriterTimeout and appends the watermark watermark.Compute
// decides. Every write is a compare-and-set (or a delete of the version
// read), so several controllers may run it at once. It returns the first
// error and goes on with the other streams.
func (s *Service) WatermarkStep(ctx context.Context) error {
	ctx = WithInternal(ctx)
	return s.eachStream(ctx, func(scope, stream string) error {
		if err := s.watermarkStream(ctx, scope, stream); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("controller: watermark of %s/%s: %w", scope, stream, err)
		}
		return nil
	})
}

func (s *Service) watermarkStream(ctx context.Context, scope, stream string) error {
	writers, err := s.list(ctx, writersKey(scope, stream))
	if err != nil || len(writers) == 0 {
		return err
	}
	r, _, err := s.loadStream(ctx, scope, stream)
	if err != nil {
		return err
	}
	rec, version, err := s.loadWatermarks(ctx, scope, stream)
	if err != nil {
		return err
	}
	in := watermark.Input{Now: s.nowMillis(), Timeout: s.opts.WriterTimeout.Milliseconds(), Created: map[int64]int64{}}
	for _, e := range r.Epochs {
		in.Epochs = append(in.Epochs, e.Segments)
	}
	for _, sg := range r.Segments[r.FirstSegment:] {
		in.Created[sg.Number] = sg.Epoch
	}
	versions := map[string]cluster.KV{}
	for _, kv := range writers {
		var w writerRec
		if err := json.Unmarshal(kv.Value, &w); err != nil {
			return fmt.Errorf("controller: writer record %s: %w", kv.Key, err)
		}
		versions[w.Writer] = kv
		in.Reports = append(in.Reports, watermark.Report{Writer: w.Writer, Time: w.Time, Position: w.Position, Received: w.Received})
	}
	var next int64 = 1
	if n := len(rec.Marks); n > 0 {
		prev := rec.Marks[n-1].Watermark
		in.Prev = &prev
		next = rec.Marks[n-1].Seq + 1
	}
	out, err := watermark.Compute(in)
	if err != nil {
		return err
	}
	for _, w := range out.TimedOut {
		kv := versions[w]
		// The version read: a writer that reported meanwhile stays.
		if err := s.store.Delete(ctx, kv.Key, kv.Version); err != nil && !errors.Is(err, cluster.ErrNotFound) && !errors.Is(err, cluster.ErrVersionMismatch) {
			return err
		}
		s.log.WithField("stream", scope+"/"+stream).WithField("writer", w).Info("controller: writer timed out; its time no longer holds watermarks back")
	}
	if out.Next == nil {
		return nil
	}
	marks := append(rec.Marks, markRec{Seq: next, Watermark: *out.Next})
	// Keep at most MaxWatermarks, and none whose cut truncation deleted
	// (the newest always stays: the next one is computed from it).
	kept := marks[:0]
	for i, m := range marks {
		if i < len(marks)-MaxWatermarks {
			continue
		}
		if i < len(marks)-1 && !r.cutUsable(m.Cut) {
			continue
		}
		kept = append(kept, m)
	}
	rec.Marks = kept
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	var written cluster.Version
	if version == cluster.AnyVersion {
		written, err = s.createVersion(ctx, watermarksKey(scope, stream), b)
	} else {
		written, err = s.store.CompareAndSet(ctx, watermarksKey(scope, stream), b, version)
	}
	if errors.Is(err, cluster.ErrVersionMismatch) || errors.Is(err, cluster.ErrExists) {
		return nil // another controller appended meanwhile; the next step goes on from its
	}
	if err != nil {
		return err
	}
	// The stream's delete may have removed its records since we read
	// them: take the record back out, so that it does not outlive the
	// stream (the version written: a later step's stays).
	if err := s.streamGone(ctx, scope, stream, false); err != nil {
		s.store.Delete(ctx, watermarksKey(scope, stream), written)
		return err
	}
	return nil
}

// removeWatermarkRecords deletes a stream's writer reports and
// watermarks (the delete workflow's last step, and CreateStream's first:
// a watermark step or a writer's report racing an old stream's delete may
// have left some behind).
func (s *Service) removeWatermarkRecords(ctx context.Context, scope, stream string) error {
	writers, err := s.store.List(ctx, writersKey(scope, stream))
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return err
	}
	keys := []string{}
	for _, kv := range writers {
		keys = append(keys, kv.Key)
	}
	keys = append(keys, writersKey(scope, stream), watermarksKey(scope, stream))
	for _, k := range keys {
		if err := s.store.Delete(ctx, k, cluster.AnyVersion); err != nil && !errors.Is(err, cluster.ErrNotFound) {
			return err
		}
	}
	return nil
}
