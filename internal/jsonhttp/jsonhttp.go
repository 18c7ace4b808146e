package jsonhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// NewRequest builds a request to url with in encoded as its JSON body (no
// body if in is nil), asking for a JSON reply.
func NewRequest(ctx context.Context, method, url string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}
