package cli

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestLargestTapes: what jobs replays at once hold is the sum of the jobs
// largest tapes; a path that is gone counts nothing.
func TestLargestTapes(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, size := range []int{10, 40, 20, 30} {
		p := filepath.Join(dir, string(rune('a'+i))+".jsonl")
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	paths = append(paths, filepath.Join(dir, "gone.jsonl"))
	for jobs, want := range map[int]int64{0: 40, 1: 40, 2: 70, 3: 90, 8: 100} {
		if got := largestTapes(paths, jobs); got != want {
			t.Errorf("largestTapes(…, %d) = %d, want %d", jobs, got, want)
		}
	}
}

// TestLimitMemoryOnlyForTheProcess: a command run in a test's process
// leaves the process's memory limit alone, however big its tapes.
func TestLimitMemoryOnlyForTheProcess(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	e := &env{}
	e.limitMemory(1 << 30)()
	if got := debug.SetMemoryLimit(-1); got != before {
		debug.SetMemoryLimit(before)
		t.Fatalf("a command in a test's process set the memory limit to %d (was %d)", got, before)
	}
}

// TestWithRuns: one replay (or candidate) beside the recording costs what
// the recording does; each more at once half of it again.
func TestWithRuns(t *testing.T) {
	for atOnce, want := range map[int]int64{0: 100, 1: 100, 2: 150, 3: 200} {
		if got := withRuns(100, atOnce); got != want {
			t.Errorf("withRuns(100, %d) = %d, want %d", atOnce, got, want)
		}
	}
}
