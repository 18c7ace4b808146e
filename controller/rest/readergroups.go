package rest

import (
	"net/http"

	"github.com/sluice-streams/sluice/protocol/api"
)

// Reader groups: the controller stores their state opaquely, with
// compare-and-set on its version (controller/readergroups.go).

func (h *handler) createReaderGroup(r *http.Request) (int, any, error) {
	var cfg api.ReaderGroupConfig
	if err := decode(r, &cfg, false); err != nil {
		return 0, nil, err
	}
	g, err := h.svc.CreateReaderGroup(r.Context(), r.PathValue("scope"), cfg)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, g, nil
}

func (h *handler) listReaderGroups(r *http.Request) (int, any, error) {
	gs, err := h.svc.ListReaderGroups(r.Context(), r.PathValue("scope"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.ReaderGroupList{ReaderGroups: nonNil(gs)}, nil
}

func (h *handler) getReaderGroup(r *http.Request) (int, any, error) {
	g, err := h.svc.GetReaderGroup(r.Context(), r.PathValue("scope"), r.PathValue("group"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, g, nil
}

func (h *handler) deleteReaderGroup(r *http.Request) (int, any, error) {
	return http.StatusNoContent, nil, h.svc.DeleteReaderGroup(r.Context(), r.PathValue("scope"), r.PathValue("group"))
}

func (h *handler) updateReaderGroupState(r *http.Request) (int, any, error) {
	var st api.ReaderGroupState
	if err := decode(r, &st, false); err != nil {
		return 0, nil, err
	}
	v, err := h.svc.UpdateReaderGroupState(r.Context(), r.PathValue("scope"), r.PathValue("group"), st.State, st.Version)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.ReaderGroupState{Version: v}, nil
}
