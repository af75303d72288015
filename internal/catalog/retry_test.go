package catalog

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestRetryBusyHonoursContext checks that the retry of a busy catalog stops
// when its context ends, at once, rather than sleeping on to its own
// deadline; and that it retries while the error is busy and stops at the
// first other answer.
func TestRetryBusyHonoursContext(t *testing.T) {
	busy := errors.New("database is locked (5) (SQLITE_BUSY)")
	t.Run("cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			calls := 0
			start := time.Now()
			err := retryBusy(ctx, func(context.Context) error {
				calls++
				if calls == 3 {
					cancel()
				}
				return busy
			})
			if !errors.Is(err, context.Canceled) || !errors.Is(err, busy) {
				t.Errorf("got %v, want the cancellation and the busy error", err)
			}
			if calls != 3 {
				t.Errorf("got %d calls, want 3: none after the cancellation", calls)
			}
			// In the bubble, time moves only while every goroutine waits:
			// the two back-offs before the third call, 5ms and 10ms, and
			// nothing after the cancellation.
			if got := time.Since(start); got != 15*time.Millisecond {
				t.Errorf("waited %v, want 15ms", got)
			}
		})
	})
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			err := retryBusy(ctx, func(context.Context) error { return busy })
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("got %v, want the deadline", err)
			}
		})
	})
	t.Run("other error", func(t *testing.T) {
		other := errors.New("no such table")
		calls := 0
		err := retryBusy(t.Context(), func(context.Context) error {
			calls++
			if calls < 2 {
				return busy
			}
			return other
		})
		if err != other || calls != 2 {
			t.Errorf("got %v after %d calls, want %v after 2", err, calls, other)
		}
	})
}

// TestOpenBesideAWriter opens a catalog that is up to date while another
// connection holds its write lock, as a serve refreshing its catalog does:
// learning that the schema needs nothing takes no lock, so the open does
// not wait for the writer, and what is there can be read.
func TestOpenBesideAWriter(t *testing.T) {
	c, path := openTemp(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	writer, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	tx, err := writer.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("PRAGMA user_version"); err != nil {
		t.Fatal(err)
	}
	c, err = open(path, 50*time.Millisecond)
	if err != nil {
		t.Fatalf("opening the catalog while another connection writes: %v", err)
	}
	defer c.Close()
	if _, err := c.Servers(t.Context()); err != nil {
		t.Errorf("reading beside the writer: %v", err)
	}
}
