package viewtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sluice-streams/sluice/tier2/view"
)

// Catalog is a view.Catalog over a map of scope to streams, safe for
// concurrent use: tests change it while heads list through it. It counts
// the calls made to it.
type Catalog struct {
	calls atomic.Int64
	mu    struct {
		sync.Mutex
		streams map[string][]string
		err     error
	}
}

var _ view.Catalog = (*Catalog)(nil)

// NewCatalog returns a Catalog naming the scopes of streams (a scope
// with no streams is a key with a nil value). It keeps a copy.
func NewCatalog(streams map[string][]string) *Catalog {
	c := &Catalog{}
	c.mu.streams = make(map[string][]string, len(streams))
	for scope, ss := range streams {
		c.mu.streams[scope] = slices.Clone(ss)
	}
	return c
}

// Scopes returns the scopes, in no particular order, or the error Fail
// set.
func (c *Catalog) Scopes(context.Context) ([]string, error) {
	c.calls.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.err != nil {
		return nil, c.mu.err
	}
	return slices.Collect(maps.Keys(c.mu.streams)), nil
}

// Streams returns the streams of scope (a copy), an error wrapping
// view.ErrNotExist if there is no such scope, or the error Fail set.
func (c *Catalog) Streams(_ context.Context, scope string) ([]string, error) {
	c.calls.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.err != nil {
		return nil, c.mu.err
	}
	ss, ok := c.mu.streams[scope]
	if !ok {
		return nil, fmt.Errorf("viewtest: scope %q: %w", scope, view.ErrNotExist)
	}
	return slices.Clone(ss), nil
}

// Set makes scope's streams exactly streams, adding the scope if it is
// new: a stream left out is a deleted one.
func (c *Catalog) Set(scope string, streams ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.streams[scope] = slices.Clone(streams)
}

// Add adds streams to scope, adding the scope if it is new.
func (c *Catalog) Add(scope string, streams ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.streams[scope] = append(slices.Clone(c.mu.streams[scope]), streams...)
}

// Remove deletes stream from scope, as the controller does a deleted
// stream.
func (c *Catalog) Remove(scope, stream string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.streams[scope] = slices.DeleteFunc(slices.Clone(c.mu.streams[scope]), func(s string) bool { return s == stream })
}

// RemoveScope deletes scope and its streams.
func (c *Catalog) RemoveScope(scope string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.streams, scope)
}

// Fail makes every later call fail with err, as when the controller is
// away; Fail(nil) ends that.
func (c *Catalog) Fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.err = err
}

// Calls is the number of Scopes and Streams calls so far.
func (c *Catalog) Calls() int64 { return c.calls.Load() }

// Down returns a Catalog whose every call fails with err, as a controller
// that cannot be reached.
func Down(err error) *Catalog {
	c := NewCatalog(nil)
	c.Fail(err)
	return c
}
