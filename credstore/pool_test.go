package credstore_test

import (
	"fmt"
	"sync"
	"testing"
)

// TestPostgresLocksLeaveConnections: many refreshes of different tokens at
// once in one process, each holding its lock while it reads and writes,
// all complete: the locks (a connection each) never take every connection
// of the pool, which the reads and writes under them need.
func TestPostgresLocksLeaveConnections(t *testing.T) {
	s := newPostgres(t, pgDB(t), testKey(1)) // pgstore.Open's pool: 16 connections
	const n = 48
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("oauth/s%d/token", i)
			unlock, err := s.Lock(t.Context(), key)
			if err != nil {
				errs <- err
				return
			}
			defer unlock()
			if _, _, err := s.Get(key); err != nil {
				errs <- err
				return
			}
			if err := s.Set(key, []byte("v")); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if keys, err := s.Keys("oauth/"); err != nil || len(keys) != n {
		t.Errorf("Keys = %d keys, %v; want %d", len(keys), err, n)
	}
}
