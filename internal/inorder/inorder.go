// Package inorder runs work side by side and hands on its results in the
// order of the work: a suite of tapes, the further replays of replay
// --runs. Run owns the goroutines it starts and returns once each has
// ended.
package inorder

import (
	"context"
	"sync"
)

// Run runs work for 0 … n-1, up to jobs at once, each on a goroutine
// of its own (jobs 1 or less: one after the other on the calling
// goroutine), and calls each with every result in order, from the calling
// goroutine, as soon as it and those before it are done. An error from
// each stops the rest as one from work does. At most 2 × jobs
// results are under way or waiting for each at a time. The first error
// in order stops the rest: ctx is cancelled for the work under way, no
// more starts, and Run returns its index and the error once every
// goroutine it started has ended. Work that would start once ctx is done
// fails with ctx's error without being called (when several run at once).
func Run[T any](ctx context.Context, n, jobs int, work func(context.Context, int) (T, error), each func(int, T) error) (int, error) {
	if jobs <= 1 {
		for i := range n {
			v, err := work(ctx, i)
			if err != nil {
				return i, err
			}
			if err := each(i, v); err != nil {
				return i, err
			}
		}
		return 0, nil
	}
	type result struct {
		v    T
		err  error
		done chan struct{} // closed once v and err are set
	}
	results := make([]result, n)
	for i := range results {
		results[i].done = make(chan struct{})
	}
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel, below: the work under way ends soon
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The feeder hands out every index in order, each once a slot is free:
	// a slot is held from the index handed out until each has had its
	// result. It stops when Run returns (leaving), not when ctx is
	// done: work given a done ctx fails at once, so every index the loop
	// below waits for is handed out.
	slots := make(chan struct{}, 2*jobs)
	next := make(chan int)
	leaving := make(chan struct{})
	defer close(leaving)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(next)
		for i := range n {
			select {
			case slots <- struct{}{}:
			case <-leaving:
				return
			}
			select {
			case next <- i:
			case <-leaving:
				return
			}
		}
	}()
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &results[i]
				if r.err = ctx.Err(); r.err == nil {
					r.v, r.err = work(ctx, i)
				}
				close(r.done)
			}
		}()
	}
	for i := range results {
		r := &results[i]
		<-r.done
		if r.err != nil {
			return i, r.err
		}
		v := r.v
		results[i] = result{}
		if err := each(i, v); err != nil {
			return i, err
		}
		<-slots
	}
	return 0, nil
}
