package controller

import (
	"context"
	"fmt"

	"github.com/sluice-streams/sluice/protocol/api"
)

// Epochs returns a stream's history: every epoch, oldest first (the last
// is the current one), each with its creation time and its segments
// ordered by key range. Epochs are never forgotten, so segments that
// truncation deleted still appear in the epochs they were active in. The
// slice is the caller's.
func (s *Service) Epochs(ctx context.Context, scope, stream string) ([]api.EpochInfo, error) {
	r, err := s.load(ctx, scope, stream)
	if err != nil {
		return nil, err
	}
	return r.epochs(), nil
}

// epochs is the stream record's history in the API's form.
func (r *streamRec) epochs() []api.EpochInfo {
	out := make([]api.EpochInfo, 0, len(r.Epochs))
	for _, e := range r.Epochs[r.FirstEpoch:] { // the dropped ones lay wholly before the truncation head
		ei := api.EpochInfo{Epoch: e.Epoch, CreationTime: e.CreationTime, Segments: r.ranges(e.Segments), Trigger: e.Trigger, Reason: e.Reason}
		switch {
		case e.Epoch == 0:
			ei.Trigger = api.TriggerCreate
		case ei.Trigger == "":
			// Recorded before triggers were kept: only manual scales existed.
			ei.Trigger = api.TriggerManual
		}
		out = append(out, ei)
	}
	return out
}

// checkMinSegments refuses a scale that seals sealed segments and creates
// created ones if it leaves the stream below its policy's minimum (a
// stream already below it may still grow).
func checkMinSegments(r *streamRec, sealed, created int) error {
	have := len(r.current().Segments)
	after := have - sealed + created
	minimum := int(r.Config.ScalingPolicy.MinSegments)
	if after < minimum && after < have {
		return fmt.Errorf("%w: the scale would leave %d segments, and stream %s/%s keeps at least %d (scalingPolicy.minSegments)",
			ErrInvalid, after, r.Config.ScopeName, r.Config.StreamName, minimum)
	}
	return nil
}
