package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol/api"
)

// createTxn asks the controller for a transaction, retrying the one
// refusal that passes by itself (ctlclient.ErrScalePending: the stream's
// automatic scale waits for its open transactions, and takes priority
// over new ones) with the Writer's backoff until ctx is done; without
// wait, not at all.
func (w *Writer) createTxn(ctx context.Context, tc TxnController, lease time.Duration, wait bool) (api.TxnInfo, error) {
	bo := w.cfg.newBackoff()
	for attempt := 1; ; attempt++ {
		info, err := tc.CreateTxn(ctx, w.scope, w.stream, lease)
		if err == nil || !wait || !errors.Is(err, ctlclient.ErrScalePending) {
			return info, err
		}
		if cerr := ctx.Err(); cerr != nil {
			return api.TxnInfo{}, fmt.Errorf("%w; last refusal: %w", cerr, err)
		}
		w.c.retrying(attempt, fmt.Errorf("client: begin transaction on %s/%s: %w", w.scope, w.stream, err))
		if serr := retry.Sleep(ctx, bo.NextBackOff()); serr != nil {
			return api.TxnInfo{}, fmt.Errorf("%w; last refusal: %w", serr, err)
		}
	}
}
