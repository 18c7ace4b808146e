package controller

import (
	"context"

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
	for _, e := range r.Epochs {
		out = append(out, api.EpochInfo{Epoch: e.Epoch, CreationTime: e.CreationTime, Segments: r.ranges(e.Segments)})
	}
	return out
}
