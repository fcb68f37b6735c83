package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBenchScriptsRun runs the benchmark scripts as bench/README.md and
// the README show them, the relay and replay benchmarks in their smoke
// form (bash bench/run.sh -quick, bash bench/replay.sh -rounds 1), bash
// bench/golden.sh, bash bench/shrink.sh and bash bench/memory.sh 2000:
// each builds what it measures,
// runs it and prints every table with its ratios. It asserts what they
// print, never a figure: figures are measured, not asserted. Shrink's
// result is no figure: each tape keeps its one needed step of six.
func TestBenchScriptsRun(t *testing.T) {
	t.Parallel()
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
		{[]string{"bench/golden.sh", "8"}, []string{
			"tapedeck test, 8 copies of testdata/tapes/",
			"8 passed, 0 failed",
			"speed-up with",
		}},
		// The hello tapes: the waiter tapes' replays wait seconds each, and
		// shrink runs dozens; what the script prints is the same for them.
		{[]string{"bench/shrink.sh", "hello-go", "hello-node"}, shrinkLines("hello-go", "hello-node")},
		// Every command's row, on small tapes.
		{[]string{"bench/memory.sh", "2000"}, []string{
			"load average at start",
			"tapes: 2000 frames",
			"RSS ÷ tape",
			"check", "show", "textconv", "import", "export", "diff", "replay", "test", "shrink",
			"load average at end",
		}},
	} {
		// Side by side: the figures they print are slower for it, and this
		// test asserts none of them.
		t.Run(strings.TrimSuffix(filepath.Base(c.argv[0]), ".sh"), func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("bash", c.argv...).CombinedOutput()
			if err != nil {
				t.Fatalf("bash %s: %v\n%s", strings.Join(c.argv, " "), err, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("bash %s printed no %q:\n%s", strings.Join(c.argv, " "), w, out)
				}
			}
		})
	}
}

// shrinkLines is what bash bench/shrink.sh prints for each of tapes
// and -j: shrink's closing line, or that the plugin's interpreter is
// missing.
func shrinkLines(tapes ...string) []string {
	var want []string
	for _, tape := range tapes {
		interp := map[string]string{"node": "node", "python": "python3"}[tape[strings.LastIndex(tape, "-")+1:]]
		if interp != "" {
			if _, err := exec.LookPath(interp); err != nil {
				want = append(want, tape+": "+interp+" is not installed: skipped")
				continue
			}
		}
		for _, j := range []string{"1", "2"} {
			want = append(want, tape+" -j "+j+": 1 of 6 host steps left after")
		}
	}
	return want
}

// TestFirstbyteRuns runs the fingerprint benchmark as bench/README.md
// shows it (go run ./bench/firstbyte -tapedeck BIN [-n N] [-- PLUGIN]),
// two rounds against the Go fixture plugin, and checks that it prints a
// row for each variant.
func TestFirstbyteRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a benchmark: not with -short")
	}
	dir := t.TempDir()
	bin, plugin := filepath.Join(dir, "tapedeck"), filepath.Join(dir, "hello-go")
	for _, b := range [][2]string{{bin, "."}, {plugin, "./testdata/plugins/hello-go"}} {
		build := exec.Command("go", "build", "-o", b[0], b[1])
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // the binary as the README installs it: static
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	out, err := exec.Command("go", "run", "./bench/firstbyte", "-tapedeck", bin, "-n", "2", "--", plugin).CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./bench/firstbyte: %v\n%s", err, out)
	}
	for _, w := range []string{"2 rounds, plugin [" + plugin + "]", "first byte p10/p50/p90", "with fingerprint ", "--no-fingerprint "} {
		if !strings.Contains(string(out), w) {
			t.Errorf("firstbyte printed no %q:\n%s", w, out)
		}
	}
}

// TestBenchReadmeGoLines runs bench/README.md's quick go test -bench lines
// as shown, from the module root (the ones that run for a few seconds and
// write no profile): each benchmark runs and prints its figures. The
// longer lines (seconds per benchmark, three counts, a 10,000-session
// store) and the profiling ones are for a person at the machine.
func TestBenchReadmeGoLines(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs benchmarks: not with -short")
	}
	readme, err := os.ReadFile("bench/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ line, want string }{
		{"go test -run '^$' -bench BenchmarkReplay10k -benchtime 10x ./internal/host", "BenchmarkReplay10k"},
		{"go test -run '^$' -bench BenchmarkNoiseHelloGo -benchtime 100x ./internal/noise", "BenchmarkNoiseHelloGo/j1"},
		{"go test -run '^$' -bench . ./message", "BenchmarkParse/scan"},
	} {
		if !strings.Contains(string(readme), "\n    "+c.line+"\n") {
			t.Fatalf("bench/README.md does not show %s", c.line)
		}
		out, err := exec.Command("bash", "-c", c.line).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.line, err, out)
		}
		if !strings.Contains(string(out), c.want) || !strings.Contains(string(out), " ns/op") {
			t.Errorf("%s printed no %s figures:\n%s", c.line, c.want, out)
		}
	}
}
