package cli

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/tapedeck/tapedeck/playback"
)

// The soft memory limit of a command that holds whole recordings
// (replay, test, shrink): memoryBase + memoryPerByte × the bytes of the
// tapes it holds at once, set once they pass memoryFrom. The Go collector
// lets the heap grow to twice what was live at its last run; a replay's
// live set grows through it (the live timeline, then the diff), so a
// replay of a 110 MB tape peaked at 1.4 times its live heap and a shrink
// at twice. Near the limit the collector runs sooner instead. What such a
// command keeps live is about 2 to 2.4 times the tape, most while the
// replay's plan is made (docs/performance.md; 3.2 at 1,000,000 frames
// until the plan's reading stopped allocating for each frame), under the
// limit.
//
// A replay whose plugin says more than recorded, or other lines (a failing
// test: every line kept twice, and the differences), keeps more: past the
// limit the collector ran without end, held back only by the runtime's
// cap of half the CPU, and such a replay of 30,000 frames took 1,033
// collections and 2.4 times as long. So the limit follows the live heap
// (guardLimit): when the collector has taken more than memoryBusy of the
// CPU since the last look and the heap may no longer grow by memoryRoom
// over what is live, the limit rises to let it grow by memoryRaise.
const (
	memoryBase    = 8 << 20
	memoryPerByte = 2.7
	memoryFrom    = 1 << 20

	memoryBusy  = 0.2
	memoryRoom  = 0.1
	memoryRaise = 0.3
	memoryLook  = 50 * time.Millisecond
)

// limitMemory sets the soft memory limit for holding held bytes of tape,
// when the command owns its process (a command run in a test's process
// leaves the process's limit alone), the tapes are big enough for it to
// matter, and GOMEMLIMIT does not set a limit of its own; stop ends its
// watch of the collector (guardLimit), and the command calls it before
// it returns.
func (e *env) limitMemory(held int64) (stop func()) {
	if !e.ownsProcess || held < memoryFrom || e.getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		guardLimit(memoryBase+int64(memoryPerByte*float64(held)), done)
	}()
	return func() { close(done); wg.Wait() }
}

// guardLimit sets the soft memory limit to limit and, every memoryLook
// until done is closed, raises it when the collector is held to it: when
// it took more than memoryBusy of the CPU since the last look and the heap
// may grow by less than memoryRoom of what is live, to let it grow by
// memoryRaise (the limit then stands above the heap by what the runtime
// keeps beside it, as it did).
func guardLimit(limit int64, done <-chan struct{}) {
	debug.SetMemoryLimit(limit)
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/total:cpu-seconds"},
	}
	var gcWas, allWas float64
	t := time.NewTicker(memoryLook)
	defer t.Stop()
	for {
		metrics.Read(s)
		live, goal := float64(s[0].Value.Uint64()), float64(s[1].Value.Uint64())
		gc, all := s[2].Value.Float64(), s[3].Value.Float64()
		if all > allWas && (gc-gcWas) > memoryBusy*(all-allWas) && goal < live*(1+memoryRoom) {
			limit += int64(live*(1+memoryRaise) - goal)
			debug.SetMemoryLimit(limit)
		}
		gcWas, allWas = gc, all
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// heldBytes is what a recording costs held whole, in bytes of tape: its
// file's size, or for a stored session its frames' bytes and a tape
// line's framing (about 50 bytes) each.
func heldBytes(rec *playback.Recording) int64 {
	if rec.TapePath != "" {
		if fi, err := os.Stat(rec.TapePath); err == nil {
			return fi.Size()
		}
	}
	var n int64
	for i := range rec.Frames {
		n += int64(len(rec.Frames[i].Raw)) + 50
	}
	return n
}

// largestTapes is the total size of the jobs largest files of paths: what
// jobs replays at once hold at most.
func largestTapes(paths []string, jobs int) int64 {
	sizes := make([]int64, 0, len(paths))
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			sizes = append(sizes, fi.Size())
		}
	}
	slices.Sort(sizes)
	var n int64
	for i := len(sizes) - 1; i >= 0 && i >= len(sizes)-max(jobs, 1); i-- {
		n += sizes[i]
	}
	return n
}

// replaysHold is what replaying recs, runs times each with jobs runs at
// once, holds at most (see withRuns).
func replaysHold(recs []*playback.Recording, runs, jobs int) int64 {
	var held int64
	for _, rec := range recs {
		held += heldBytes(rec)
	}
	if runs <= 1 {
		return held
	}
	return withRuns(held, min(jobs, runs-1))
}

// withRuns is what held bytes of recording cost with atOnce more replays
// of it under way (a replay --runs, or shrink's candidates): each holds
// its live timeline, or a candidate and its replay, about half what the
// recording costs beside it.
func withRuns(held int64, atOnce int) int64 { return held * int64(1+max(atOnce, 1)) / 2 }
