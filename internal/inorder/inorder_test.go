package inorder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// patience bounds every wait of these tests for something that a correct
// Run makes happen: a broken one fails them instead of hanging them.
const patience = 10 * time.Second

// TestInOrderRunsSideBySideAndReportsInOrder: with jobs 3, work 0 ends
// only once work 1 and 2 have started (so they run beside it) and work 1
// only once work 2 has ended (so results come in out of order); each
// still has every result in order, and never more than 3 work at once.
func TestInOrderRunsSideBySideAndReportsInOrder(t *testing.T) {
	const n, jobs = 9, 3
	started := make([]chan struct{}, n)
	ended := make([]chan struct{}, n)
	for i := range n {
		started[i], ended[i] = make(chan struct{}), make(chan struct{})
	}
	var running, most atomic.Int32
	await := func(ch chan struct{}, what string) error {
		select {
		case <-ch:
			return nil
		case <-time.After(patience):
			return errors.New(what)
		}
	}
	work := func(_ context.Context, i int) (string, error) {
		now := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		close(started[i])
		defer close(ended[i])
		switch i {
		case 0:
			if err := await(started[1], "work 1 did not start beside work 0"); err != nil {
				return "", err
			}
			if err := await(started[2], "work 2 did not start beside work 0"); err != nil {
				return "", err
			}
		case 1:
			if err := await(ended[2], "work 2 did not end while work 1 was under way"); err != nil {
				return "", err
			}
		}
		return fmt.Sprint("result ", i), nil
	}
	var got []string
	if i, err := Run(context.Background(), n, jobs, work, func(i int, v string) error {
		if want := fmt.Sprint("result ", len(got)); v != want {
			t.Errorf("each had %q (index %d) after %d results, want %q", v, i, len(got), want)
		}
		got = append(got, v)
		return nil
	}); err != nil {
		t.Fatalf("work %d: %v", i, err)
	}
	if len(got) != n {
		t.Errorf("each had %d results, want %d", len(got), n)
	}
	if m := most.Load(); m > jobs {
		t.Errorf("%d ran at once, want at most %d", m, jobs)
	}
}

// TestInOrderStopsAtTheFirstError: work 3 fails; the work after it waits
// for its ctx to be cancelled. Run returns work 3's error once all
// the work it started has ended, each having had results 0 to 2 only, and
// has started no more than 2 × jobs beyond the results each had.
func TestInOrderStopsAtTheFirstError(t *testing.T) {
	const n, jobs = 100, 2
	boom := errors.New("boom")
	var running, calls atomic.Int32
	work := func(ctx context.Context, i int) (int, error) {
		calls.Add(1)
		running.Add(1)
		defer running.Add(-1)
		switch {
		case i < 3:
			return i, nil
		case i == 3:
			return 0, boom
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(patience):
			return 0, errors.New("ctx was not cancelled")
		}
	}
	var had []int
	i, err := Run(context.Background(), n, jobs, work, func(_ int, v int) error { had = append(had, v); return nil })
	if i != 3 || !errors.Is(err, boom) {
		t.Fatalf("Run returned %d, %v; want 3, %v", i, err, boom)
	}
	if r := running.Load(); r != 0 {
		t.Errorf("%d work still under way after Run returned", r)
	}
	if fmt.Sprint(had) != "[0 1 2]" {
		t.Errorf("each had %v, want [0 1 2]", had)
	}
	if c := calls.Load(); c > 3+2*jobs {
		t.Errorf("%d work started, want at most %d (3 results had, 2 × jobs beyond)", c, 3+2*jobs)
	}
}

// TestInOrderStopsWhenCtxIsDone: the caller's ctx cancelled while work 0
// is under way stops it and everything after it, with ctx's error.
func TestInOrderStopsWhenCtxIsDone(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		t.Run(fmt.Sprint("jobs ", jobs), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var calledAfter []int // work called once ctx was done
			work := func(ctx context.Context, i int) (int, error) {
				if i == 0 {
					cancel()
				} else if ctx.Err() != nil {
					mu.Lock()
					calledAfter = append(calledAfter, i)
					mu.Unlock()
				}
				select {
				case <-ctx.Done():
					return 0, ctx.Err()
				case <-time.After(patience):
					return 0, errors.New("ctx was not cancelled")
				}
			}
			i, err := Run(ctx, 10, jobs, work, func(i, _ int) error { t.Errorf("each had result %d", i); return nil })
			if i != 0 || !errors.Is(err, context.Canceled) {
				t.Errorf("Run returned %d, %v; want 0, %v", i, err, context.Canceled)
			}
			if len(calledAfter) > 0 {
				t.Errorf("work %v called with a done ctx", calledAfter)
			}
		})
	}
}

// TestInOrderStopsAtAnErrorOfEach: an error from each  ends Run with
// its index, and each hears of nothing after it.
func TestInOrderStopsAtAnErrorOfEach(t *testing.T) {
	stop := errors.New("each stops here")
	for _, jobs := range []int{1, 3} {
		var had []int
		work := func(_ context.Context, i int) (int, error) { return i, nil }
		i, err := Run(context.Background(), 10, jobs, work, func(i, v int) error {
			had = append(had, v)
			if i == 2 {
				return stop
			}
			return nil
		})
		if i != 2 || !errors.Is(err, stop) || len(had) != 3 {
			t.Errorf("jobs %d: Run returned %d, %v after %v; want 2, %v after [0 1 2]", jobs, i, err, had, stop)
		}
	}
}
