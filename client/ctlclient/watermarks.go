package ctlclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/sluice-streams/sluice/protocol/api"
)

func writerPath(scope, stream, writer string) string {
	return streamPath(scope, stream) + "/writers/" + url.PathEscape(writer)
}

// NoteWriterTime reports that writer noted event time wt.Time at
// wt.Position (or at the end of the committed transaction wt.Txn).
func (c *Client) NoteWriterTime(ctx context.Context, scope, stream, writer string, wt api.WriterTime) error {
	return c.do(ctx, http.MethodPost, writerPath(scope, stream, writer)+"/time", wt, nil)
}

// RemoveWriter tells the controller that writer is gone, so that it no
// longer holds the stream's watermarks back.
func (c *Client) RemoveWriter(ctx context.Context, scope, stream, writer string) error {
	return c.do(ctx, http.MethodDelete, writerPath(scope, stream, writer), nil, nil)
}

// Watermarks returns the stream's watermarks numbered after after (0: all
// kept), oldest first.
func (c *Client) Watermarks(ctx context.Context, scope, stream string, after int64) ([]api.Watermark, error) {
	var l api.WatermarkList
	err := c.do(ctx, http.MethodGet, streamPath(scope, stream)+"/watermarks?after="+strconv.FormatInt(after, 10), nil, &l)
	return l.Watermarks, err
}
