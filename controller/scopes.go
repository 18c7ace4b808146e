package controller

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/protocol/api"
)

type scopeRec struct {
	ScopeName    string `json:"scopeName"`
	CreationTime int64  `json:"creationTime"`
}

// create writes a key that must not exist. A key that exists only as a
// parent created implicitly (empty value) counts as absent.
func (s *Service) create(ctx context.Context, key string, value []byte) error {
	_, err := s.createVersion(ctx, key, value)
	return err
}

// createVersion is create, returning the version written.
func (s *Service) createVersion(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	v, err := s.store.Create(ctx, key, value)
	if !errors.Is(err, cluster.ErrExists) {
		return v, err
	}
	kv, gerr := s.store.Get(ctx, key)
	if gerr != nil || len(kv.Value) > 0 {
		return 0, err
	}
	v, err = s.store.CompareAndSet(ctx, key, value, kv.Version)
	if errors.Is(err, cluster.ErrVersionMismatch) {
		return 0, cluster.ErrExists
	}
	return v, err
}

// CreateScope creates a scope. ErrExists if it exists.
func (s *Service) CreateScope(ctx context.Context, scope string) error {
	if err := checkName(ctx, "scope", scope); err != nil {
		return err
	}
	b, _ := json.Marshal(scopeRec{ScopeName: scope, CreationTime: s.nowMillis()})
	err := s.create(ctx, scopeKey(scope), b)
	if errors.Is(err, cluster.ErrExists) {
		return fmt.Errorf("%w: scope %s", ErrExists, scope)
	}
	return err
}

// GetScope returns a scope, or ErrNotFound.
func (s *Service) GetScope(ctx context.Context, scope string) (api.ScopeProperty, error) {
	if err := checkName(ctx, "scope", scope); err != nil {
		return api.ScopeProperty{}, err
	}
	kv, err := s.store.Get(ctx, scopeKey(scope))
	if errors.Is(err, cluster.ErrNotFound) || err == nil && len(kv.Value) == 0 {
		return api.ScopeProperty{}, fmt.Errorf("%w: scope %s", ErrNotFound, scope)
	}
	if err != nil {
		return api.ScopeProperty{}, err
	}
	return api.ScopeProperty{ScopeName: scope}, nil
}

// ListScopes returns every scope, sorted by name; internal scopes only for
// an internal ctx.
func (s *Service) ListScopes(ctx context.Context) ([]api.ScopeProperty, error) {
	kvs, err := s.list(ctx, "scopes")
	if err != nil {
		return nil, err
	}
	out := []api.ScopeProperty{}
	for _, kv := range kvs {
		name := kv.Key[len("scopes/"):]
		if checkName(ctx, "scope", name) == nil {
			out = append(out, api.ScopeProperty{ScopeName: name})
		}
	}
	return out, nil
}

// DeleteScope deletes a scope that has no streams and no reader groups
// (ErrConflict otherwise, saying which).
func (s *Service) DeleteScope(ctx context.Context, scope string) error {
	if _, err := s.GetScope(ctx, scope); err != nil {
		return err
	}
	streams, err := s.list(ctx, streamsKey(scope))
	if err != nil {
		return err
	}
	if len(streams) > 0 {
		return fmt.Errorf("%w: scope %s has %d streams; delete them first", ErrConflict, scope, len(streams))
	}
	if err := s.scopeGroupsConflict(ctx, scope); err != nil {
		return err
	}
	if err := s.deleteTree(ctx, streamsKey(scope)); errors.Is(err, cluster.ErrHasChildren) {
		return fmt.Errorf("%w: scope %s: a stream is being created in it", ErrConflict, scope)
	} else if err != nil {
		return err
	}
	// An empty readergroups parent (left by a delete that raced) goes too.
	if err := s.deleteTree(ctx, readerGroupsKey(scope)); errors.Is(err, cluster.ErrHasChildren) {
		return s.scopeGroupsConflict(ctx, scope)
	} else if err != nil {
		return err
	}
	err = s.store.Delete(ctx, scopeKey(scope), cluster.AnyVersion)
	switch {
	case errors.Is(err, cluster.ErrHasChildren):
		// A stream or a reader group was created meanwhile: say which.
		if gerr := s.scopeGroupsConflict(ctx, scope); gerr != nil {
			return gerr
		}
		return fmt.Errorf("%w: scope %s: a stream is being created in it", ErrConflict, scope)
	case errors.Is(err, cluster.ErrNotFound):
		return fmt.Errorf("%w: scope %s", ErrNotFound, scope)
	}
	return err
}

// scopeGroupsConflict returns ErrConflict naming the scope's reader groups
// if it has any, nil if it has none.
func (s *Service) scopeGroupsConflict(ctx context.Context, scope string) error {
	groups, err := s.list(ctx, readerGroupsKey(scope))
	if err != nil {
		return err
	}
	if len(groups) == 0 {
		return nil
	}
	names := make([]string, len(groups))
	for i, kv := range groups {
		names[i] = path.Base(kv.Key)
	}
	sort.Strings(names)
	return fmt.Errorf("%w: scope %s has reader groups: delete them first (%s)", ErrConflict, scope, strings.Join(names, ", "))
}

// deleteTree deletes key and its children that have no value (parents
// created implicitly); a child with a value gives ErrHasChildren. A missing
// key is success.
func (s *Service) deleteTree(ctx context.Context, key string) error {
	kvs, err := s.store.List(ctx, key)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		if len(kv.Value) > 0 {
			return cluster.ErrHasChildren
		}
		if err := s.deleteTree(ctx, kv.Key); err != nil {
			return err
		}
	}
	err = s.store.Delete(ctx, key, cluster.AnyVersion)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil
	}
	return err
}

// newUUID returns a random (version 4) UUID in canonical text.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
