package cassandra

import (
	"context"
	"errors"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// A load write that times out is tried again until it succeeds; an error no retry mends
// (a statement the server refuses) is returned at once; tries are bounded.
func TestRetryLoadWrite(t *testing.T) {
	timeout := &gocql.RequestErrWriteTimeout{Consistency: gocql.All, Received: 2, BlockFor: 3, WriteType: "BATCH"}
	failing := func(n int, err error) (func() error, *int) {
		calls := 0
		return func() error {
			calls++
			if calls <= n {
				return err
			}
			return nil
		}, &calls
	}

	var b Backend
	w, calls := failing(2, timeout)
	if err := b.retryLoadWrite(context.Background(), w); err != nil || *calls != 3 || b.loadRetries.Load() != 2 {
		t.Errorf("two timeouts, then success: err %v, %d calls, %d retries counted", err, *calls, b.loadRetries.Load())
	}

	var c Backend
	refused := errors.New("Invalid query") // not a server answer a retry mends
	w, calls = failing(5, refused)
	if err := c.retryLoadWrite(context.Background(), w); err != refused || *calls != 1 || c.loadRetries.Load() != 0 {
		t.Errorf("refused statement: err %v, %d calls, %d retries", err, *calls, c.loadRetries.Load())
	}

	var d Backend
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w, calls = failing(loadAttempts+5, timeout)
	if err := d.retryLoadWrite(ctx, w); err == nil || *calls != 1 {
		t.Errorf("interrupted load: err %v after %d calls; want the timeout after one call", err, *calls)
	}
}
