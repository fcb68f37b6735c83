package store

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
)

// TestCompactHoldsABoundOfTheCopy: gc copies the database a few MiB at a
// time, so its heap does not grow with the file: 40 MiB of frames took
// it 200 MB of heap (RssAnon) with 32 MiB copied in each transaction.
func TestCompactHoldsABoundOfTheCopy(t *testing.T) {
	if race.Enabled {
		t.Skip("measures the heap, which the race detector multiplies; the plain run measures it")
	}
	st, err := Open(t.TempDir(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	line := bytes.Repeat([]byte("x"), 16<<10)
	frames := make([]frame.Frame, 2560) // 40 MiB
	for i := range frames {
		frames[i] = frame.Frame{Seq: uint64(i + 1), At: int64(i), Dir: frame.Out, Raw: line}
	}
	putFrames(t, st, frame.Session{ID: "big", Command: []string{"p"}, Status: "complete"}, frames)
	frames = nil
	// The heap's peak while it compacts, sampled until it is done.
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err = st.Compact()
	close(done)
	wg.Wait()
	if err != nil && !errors.Is(err, ErrWouldGrow) {
		t.Fatal(err)
	}
	grown := int64(peak) - int64(before.HeapInuse)
	t.Logf("compacting 40 MiB of frames: heap in use grew by %.1f MiB at most", float64(grown)/(1<<20))
	if grown > 48<<20 {
		t.Errorf("compacting 40 MiB of frames grew the heap by %d MiB: it holds the copy", grown>>20)
	}
}
