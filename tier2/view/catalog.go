package view

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-streams/sluice/client/ctlclient"
)

// controllerCatalog is the Catalog of a controller, through its REST API.
type controllerCatalog struct{ c *ctlclient.Client }

// CatalogOf returns the Catalog of the controller c talks to.
func CatalogOf(c *ctlclient.Client) Catalog { return controllerCatalog{c} }

func (k controllerCatalog) Scopes(ctx context.Context) ([]string, error) {
	ss, err := k.c.ListScopes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ScopeName
	}
	return out, nil
}

func (k controllerCatalog) Streams(ctx context.Context, scope string) ([]string, error) {
	ss, err := k.c.ListStreams(ctx, scope, nil)
	if errors.Is(err, ctlclient.ErrNotFound) {
		return nil, fmt.Errorf("scope %q: %w", scope, ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.StreamName
	}
	return out, nil
}
