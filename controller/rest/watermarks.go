package rest

import (
	"net/http"
	"strconv"

	"github.com/sluice-streams/sluice/protocol/api"
)

// Event time and watermarks.

func (h *handler) noteWriterTime(r *http.Request) (int, any, error) {
	var wt api.WriterTime
	if err := decode(r, &wt, false); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, h.svc.NoteWriterTime(r.Context(), r.PathValue("scope"), r.PathValue("stream"), r.PathValue("writer"), wt)
}

func (h *handler) removeWriter(r *http.Request) (int, any, error) {
	return http.StatusNoContent, nil, h.svc.RemoveWriter(r.Context(), r.PathValue("scope"), r.PathValue("stream"), r.PathValue("writer"))
}

// watermarks serves the stream's watermarks, with ?after=SEQ only those
// numbered after SEQ.
func (h *handler) watermarks(r *http.Request) (int, any, error) {
	var after int64
	if q := r.URL.Query(); q.Has("after") {
		v, err := strconv.ParseInt(q.Get("after"), 10, 64)
		if err != nil || v < 0 {
			return 0, nil, invalid("query parameter after=%q: want a watermark number (a non-negative integer)", q.Get("after"))
		}
		after = v
	}
	ws, err := h.svc.Watermarks(r.Context(), r.PathValue("scope"), r.PathValue("stream"), after)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.WatermarkList{Watermarks: nonNil(ws)}, nil
}
