package upstream

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// TestShareFetchLeaderLeaves checks that callers waiting for a list fetch
// share it without fetching themselves, and that when the caller running it
// leaves (its context ends), one still waiting fetches again instead of
// failing with the other's cancellation.
func TestShareFetchLeaderLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &server{}
		key := listKey{kindTools, 1}
		lctx, leave := context.WithCancel(t.Context())
		leader := make(chan error, 1)
		go func() {
			_, err := s.shareFetch(lctx, key, func(ctx context.Context) (any, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})
			leader <- err
		}()
		synctest.Wait() // the leader's fetch is under way

		fetches := 0
		type answer struct {
			items any
			err   error
		}
		follower := make(chan answer, 1)
		go func() {
			items, err := s.shareFetch(t.Context(), key, func(context.Context) (any, error) {
				fetches++
				return []string{"a"}, nil
			})
			follower <- answer{items, err}
		}()
		synctest.Wait() // the follower waits for the leader's fetch
		if fetches != 0 {
			t.Fatalf("a caller fetched while a fetch of the same list was under way")
		}
		leave()
		if err := <-leader; !errors.Is(err, context.Canceled) {
			t.Errorf("leader: err = %v, want context.Canceled", err)
		}
		a := <-follower
		if a.err != nil || fetches != 1 {
			t.Errorf("follower after the leader left: err = %v after %d fetches, want the list after 1", a.err, fetches)
		}
	})
}

// TestShareFetchSharesFailure checks that a fetch that fails on its own
// (the server answered an error) fails every caller that waited for it,
// without another request.
func TestShareFetchSharesFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &server{}
		key := listKey{kindPrompts, 3}
		release := make(chan struct{})
		boom := errors.New("boom")
		fetches := 0
		fetch := func(context.Context) (any, error) {
			fetches++
			<-release
			return nil, boom
		}
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := s.shareFetch(t.Context(), key, fetch)
				errs <- err
			}()
		}
		synctest.Wait()
		close(release)
		for range 3 {
			if err := <-errs; !errors.Is(err, boom) {
				t.Errorf("err = %v, want the fetch's error", err)
			}
		}
		if fetches != 1 {
			t.Errorf("%d fetches, want 1", fetches)
		}
	})
}
