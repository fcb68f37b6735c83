package cli

import (
	"os"
	"runtime/debug"
	"slices"

	"github.com/tapedeck/tapedeck/playback"
)

// The soft memory limit of a command that holds whole recordings (diff,
// replay, test, shrink): memoryBase + memoryPerByte × the bytes of the
// tapes it holds at once, set once they pass memoryFrom. The Go collector
// lets the heap grow to twice what was live at its last run; a replay's
// live set grows through it (the live timeline, then the diff), so a
// replay of a 110 MB tape peaked at 1.4 times its live heap and a shrink
// at twice. Near the limit the collector runs sooner instead. What such a
// command keeps live is about 2 to 2.4 times the tape, most while the
// replay's plan is made (docs/performance.md; 3.2 at 1,000,000 frames
// until the plan's reading stopped allocating for each frame), under the
// limit; a recording that needs more still
// gets it (the limit is soft, and the runtime caps the collector's share
// of the CPU), at the cost of more collections.
const (
	memoryBase    = 8 << 20
	memoryPerByte = 2.7
	memoryFrom    = 1 << 20
)

// limitMemory sets the soft memory limit for holding held bytes of tape,
// when the command owns its process (a command run in a test's process
// leaves the process's limit alone), the tapes are big enough for it to
// matter, and GOMEMLIMIT does not set a limit of its own.
func (e *env) limitMemory(held int64) {
	if !e.ownsProcess || held < memoryFrom || e.getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(memoryBase + int64(memoryPerByte*float64(held)))
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
