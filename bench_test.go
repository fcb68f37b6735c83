package main

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestBenchScriptsRun runs the benchmark scripts as bench/README.md and
// the README show them, the relay and replay benchmarks in their smoke
// form (bash bench/run.sh -quick, bash bench/replay.sh -rounds 1) and bash
// bench/golden.sh: each builds what it measures, runs it and prints every
// table with its ratios. It asserts what they print, never a figure:
// figures are measured, not asserted.
func TestBenchScriptsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the benchmarks: not with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the benchmarks read /proc: Linux only")
	}
	for _, tool := range []string{"bash", "cat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	for _, c := range []struct {
		argv []string
		want []string
	}{
		{[]string{"bench/run.sh", "-quick"}, []string{
			"load average at start",
			"ratio: tapedeck added ÷ reference added",
			"ratio: tapedeck --no-record added ÷ reference added",
			"tapedeck/direct",
			"tapedeck/ref+file",
			"Peak RSS, 16 MiB lines",
			"targets: added p50",
		}},
		{[]string{"bench/replay.sh", "-rounds", "1"}, []string{
			"tape: 10000 frames",
			"tapedeck÷lockstep",
			"replays per minute of testdata/tapes/hello-go.jsonl",
			"tapedeck (default -j)",
			"tapedeck -j 1",
			"load average at end",
		}},
		{[]string{"bench/golden.sh"}, []string{
			"tapedeck test, 50 copies of testdata/tapes/",
			"50 passed, 0 failed",
			"speed-up with",
		}},
	} {
		// One after the other: each measures, and would slow the other.
		out, err := exec.Command("bash", c.argv...).CombinedOutput()
		if err != nil {
			t.Fatalf("bash %s: %v\n%s", strings.Join(c.argv, " "), err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("bash %s printed no %q:\n%s", strings.Join(c.argv, " "), w, out)
			}
		}
	}
}
