package cli

// Waiting on other processes, and loading the machine while a test runs.

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// busy keeps every core busy with spinning goroutines until the test ends:
// what must hold on a loaded machine is tested on one.
func busy(t *testing.T) {
	stop := make(chan struct{})
	var load sync.WaitGroup
	for range runtime.NumCPU() {
		load.Add(1)
		go func() {
			defer load.Done()
			x := 0
			for {
				select {
				case <-stop:
					return
				default:
					for i := range 100000 {
						x += i
					}
				}
			}
		}()
	}
	t.Cleanup(func() { close(stop); load.Wait() })
}

// waitFor polls cond until it holds or the deadline passes. It is for
// conditions in other processes, which cannot signal us.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		case <-tick.C:
		}
	}
}
