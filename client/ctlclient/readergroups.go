package ctlclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/sluice-streams/sluice/protocol/api"
)

func readerGroupPath(scope, group string) string {
	return "/v1/scopes/" + url.PathEscape(scope) + "/readergroups/" + url.PathEscape(group)
}

// CreateReaderGroup creates a reader group with its initial state
// (ErrExists if it exists).
func (c *Client) CreateReaderGroup(ctx context.Context, scope string, cfg api.ReaderGroupConfig) (api.ReaderGroup, error) {
	var g api.ReaderGroup
	err := c.do(ctx, http.MethodPost, "/v1/scopes/"+url.PathEscape(scope)+"/readergroups", cfg, &g)
	return g, err
}

// ListReaderGroups returns a scope's reader groups, sorted by name.
func (c *Client) ListReaderGroups(ctx context.Context, scope string) ([]api.ReaderGroup, error) {
	var l api.ReaderGroupList
	err := c.do(ctx, http.MethodGet, "/v1/scopes/"+url.PathEscape(scope)+"/readergroups", nil, &l)
	return l.ReaderGroups, err
}

// GetReaderGroup returns a reader group, its state and the state's
// version.
func (c *Client) GetReaderGroup(ctx context.Context, scope, group string) (api.ReaderGroup, error) {
	var g api.ReaderGroup
	err := c.do(ctx, http.MethodGet, readerGroupPath(scope, group), nil, &g)
	return g, err
}

// UpdateReaderGroupState replaces a reader group's state if its version is
// still version, and returns the new version. ErrConflict if it changed.
func (c *Client) UpdateReaderGroupState(ctx context.Context, scope, group string, version int64, state json.RawMessage) (int64, error) {
	var out api.ReaderGroupState
	err := c.do(ctx, http.MethodPut, readerGroupPath(scope, group)+"/state", api.ReaderGroupState{Version: version, State: state}, &out)
	return out.Version, err
}

// DeleteReaderGroup deletes a reader group.
func (c *Client) DeleteReaderGroup(ctx context.Context, scope, group string) error {
	return c.do(ctx, http.MethodDelete, readerGroupPath(scope, group), nil, nil)
}
