package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Reader groups.
//
// The controller keeps a reader group as one record,
// scopes/<scope>/readergroups/<group>, and knows nothing of what its
// state means: it checks the state's shape (a JSON object of at most
// api.MaxReaderGroupState bytes) and writes it with compare-and-set
// against the version the writer read. The rules of the group (who reads
// which segment, checkpoints) live in the client library, which reads the
// record, computes the next state and writes it back, retrying on
// ErrConflict. This stands where Pravega's state synchronizer (a revisioned
// segment with conditional appends) stands; see docs/ARCHITECTURE.md.

func readerGroupsKey(scope string) string       { return scopeKey(scope) + "/readergroups" }
func readerGroupKey(scope, group string) string { return readerGroupsKey(scope) + "/" + group }

type readerGroupRec struct {
	ScopeName    string          `json:"scopeName"`
	GroupName    string          `json:"groupName"`
	Streams      []string        `json:"streams"`
	StartCut     api.StreamCut   `json:"startCut,omitempty"`
	CreationTime int64           `json:"creationTime"`
	State        json.RawMessage `json:"state"`
}

func (r *readerGroupRec) api(v cluster.Version) api.ReaderGroup {
	return api.ReaderGroup{ScopeName: r.ScopeName, GroupName: r.GroupName, Streams: r.Streams,
		StartCut: r.StartCut, CreationTime: r.CreationTime, Version: int64(v), State: r.State}
}

// checkGroupState checks a state's shape: a JSON object, not too large.
func checkGroupState(state json.RawMessage) error {
	if len(state) > api.MaxReaderGroupState {
		return fmt.Errorf("%w: reader group state: %d bytes, at most %d", ErrInvalid, len(state), api.MaxReaderGroupState)
	}
	t := bytes.TrimSpace(state)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return fmt.Errorf("%w: reader group state: want a JSON object", ErrInvalid)
	}
	return nil
}

// checkGroup validates scope and reader group names: both come from path
// parameters, which may hold an escaped '/' that would point the key
// elsewhere in the store.
func checkGroup(ctx context.Context, scope, group string) error {
	if err := checkName(ctx, "scope", scope); err != nil {
		return err
	}
	return checkName(ctx, "reader group", group)
}

// CreateReaderGroup creates a reader group of the streams of cfg (each
// "scope/stream", existing) with cfg.State as its state. ErrExists if the
// group exists.
func (s *Service) CreateReaderGroup(ctx context.Context, scope string, cfg api.ReaderGroupConfig) (api.ReaderGroup, error) {
	if err := checkName(ctx, "reader group", cfg.GroupName); err != nil {
		return api.ReaderGroup{}, err
	}
	if _, err := s.GetScope(ctx, scope); err != nil {
		return api.ReaderGroup{}, err
	}
	if len(cfg.Streams) == 0 {
		return api.ReaderGroup{}, fmt.Errorf("%w: reader group %s/%s: no streams", ErrInvalid, scope, cfg.GroupName)
	}
	for _, st := range cfg.Streams {
		sc, name, ok := strings.Cut(st, "/")
		if !ok {
			return api.ReaderGroup{}, fmt.Errorf("%w: reader group stream %q: want scope/stream", ErrInvalid, st)
		}
		if _, err := s.load(ctx, sc, name); err != nil {
			return api.ReaderGroup{}, err
		}
	}
	if err := cfg.StartCut.Validate(); err != nil {
		return api.ReaderGroup{}, fmt.Errorf("%w: startCut: %w", ErrInvalid, err)
	}
	if err := checkGroupState(cfg.State); err != nil {
		return api.ReaderGroup{}, err
	}
	rec := readerGroupRec{ScopeName: scope, GroupName: cfg.GroupName, Streams: cfg.Streams,
		StartCut: cfg.StartCut, CreationTime: s.nowMillis(), State: cfg.State}
	b, err := json.Marshal(rec)
	if err != nil {
		return api.ReaderGroup{}, err
	}
	if err := s.create(ctx, readerGroupKey(scope, cfg.GroupName), b); errors.Is(err, cluster.ErrExists) {
		return api.ReaderGroup{}, fmt.Errorf("%w: reader group %s/%s", ErrExists, scope, cfg.GroupName)
	} else if err != nil {
		return api.ReaderGroup{}, err
	}
	return s.GetReaderGroup(ctx, scope, cfg.GroupName)
}

// GetReaderGroup returns a reader group with its state and the state's
// version, or ErrNotFound.
func (s *Service) GetReaderGroup(ctx context.Context, scope, group string) (api.ReaderGroup, error) {
	if err := checkGroup(ctx, scope, group); err != nil {
		return api.ReaderGroup{}, err
	}
	kv, err := s.store.Get(ctx, readerGroupKey(scope, group))
	if errors.Is(err, cluster.ErrNotFound) || err == nil && len(kv.Value) == 0 {
		return api.ReaderGroup{}, fmt.Errorf("%w: reader group %s/%s", ErrNotFound, scope, group)
	}
	if err != nil {
		return api.ReaderGroup{}, err
	}
	var rec readerGroupRec
	if err := json.Unmarshal(kv.Value, &rec); err != nil {
		return api.ReaderGroup{}, fmt.Errorf("controller: reader group record %s: %w", kv.Key, err)
	}
	return rec.api(kv.Version), nil
}

// ListReaderGroups returns a scope's reader groups, sorted by name.
func (s *Service) ListReaderGroups(ctx context.Context, scope string) ([]api.ReaderGroup, error) {
	if _, err := s.GetScope(ctx, scope); err != nil {
		return nil, err
	}
	kvs, err := s.list(ctx, readerGroupsKey(scope))
	if err != nil {
		return nil, err
	}
	out := make([]api.ReaderGroup, 0, len(kvs))
	for _, kv := range kvs {
		var rec readerGroupRec
		if err := json.Unmarshal(kv.Value, &rec); err != nil {
			return nil, fmt.Errorf("controller: reader group record %s: %w", kv.Key, err)
		}
		out = append(out, rec.api(kv.Version))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupName < out[j].GroupName })
	return out, nil
}

// UpdateReaderGroupState replaces a reader group's state if its version is
// still expected (ErrConflict otherwise) and returns the new version.
func (s *Service) UpdateReaderGroupState(ctx context.Context, scope, group string, state json.RawMessage, expected int64) (int64, error) {
	if err := checkGroupState(state); err != nil {
		return 0, err
	}
	cur, err := s.GetReaderGroup(ctx, scope, group)
	if err != nil {
		return 0, err
	}
	if cur.Version != expected {
		return 0, fmt.Errorf("%w: reader group %s/%s: state version %d, not %d", ErrConflict, scope, group, cur.Version, expected)
	}
	rec := readerGroupRec{ScopeName: cur.ScopeName, GroupName: cur.GroupName, Streams: cur.Streams,
		StartCut: cur.StartCut, CreationTime: cur.CreationTime, State: state}
	b, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	v, err := s.store.CompareAndSet(ctx, readerGroupKey(scope, group), b, cluster.Version(expected))
	switch {
	case errors.Is(err, cluster.ErrVersionMismatch):
		return 0, fmt.Errorf("%w: reader group %s/%s: state changed since version %d", ErrConflict, scope, group, expected)
	case errors.Is(err, cluster.ErrNotFound):
		return 0, fmt.Errorf("%w: reader group %s/%s", ErrNotFound, scope, group)
	case err != nil:
		return 0, err
	}
	return int64(v), nil
}

// DeleteReaderGroup deletes a reader group (its readers fail on their next
// state update with ErrNotFound).
func (s *Service) DeleteReaderGroup(ctx context.Context, scope, group string) error {
	if err := checkGroup(ctx, scope, group); err != nil {
		return err
	}
	err := s.store.Delete(ctx, readerGroupKey(scope, group), cluster.AnyVersion)
	if errors.Is(err, cluster.ErrNotFound) {
		return fmt.Errorf("%w: reader group %s/%s", ErrNotFound, scope, group)
	}
	if err != nil {
		return err
	}
	// Drop the parent once empty, so that an empty scope can be deleted.
	if err := s.deleteTree(ctx, readerGroupsKey(scope)); err != nil && !errors.Is(err, cluster.ErrHasChildren) {
		return err
	}
	return nil
}
