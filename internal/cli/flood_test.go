package cli

// A plugin that floods, and one that leaves a child behind: replay and
// test keep only what the recording can explain and end in time, and end
// what the plugin started, even out of its process group.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
)

// tinyTape writes a tape of one host request answered, recorded of command.
func tinyTape(t *testing.T, command []string) string {
	t.Helper()
	code := 0
	meta := frame.Session{ID: "01m8f1ood000000000000000000", Command: command}
	return writeFile(t, "tiny.jsonl", tapeOf(t, meta, []frame.Frame{
		{Seq: 1, At: 1000, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)},
		{Seq: 2, At: 2000, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{Seq: 3, At: 3000, Event: frame.EventEOF, Dir: frame.In},
		frame.Frame{Seq: 4, At: 4000, Event: frame.EventExit}.WithEnd("", &code),
	}))
}

// boundedRun runs the tapedeck binary under a 4 GiB address-space limit
// (ulimit -v, which its plugin inherits: a guard for the machine, well
// above the 1.7 GB of address space a replay reserves, far below the 15 GB
// a flood took before it was bounded) and returns what it printed, its
// peak resident memory in MiB and how long it took.
func boundedRun(t *testing.T, args ...string) (out string, code int, rssMiB int64, took time.Duration) {
	t.Helper()
	script := `ulimit -v 4194304 && exec "$@"`
	if race.Enabled {
		script = `exec "$@"` // the race detector's shadow memory needs more address space
	}
	peak := filepath.Join(t.TempDir(), "peak")
	cmd := exec.Command("sh", append([]string{"-c", script, "sh", peakRSSProgram(t), peak, tapedeckBin, "--store", t.TempDir()}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run tapedeck %v: %v", args, err)
	}
	return stdout.String() + stderr.String(), cmd.ProcessState.ExitCode(), readPeakKiB(t, peak) / 1024, took
}

// TestReplayKeepsOnlyWhatTheRecordingExplains: a plugin that floods its
// stdout with lines (sh running yes, the audit's case: 14.9 GB and 125 s
// with --timeout 15s), writes one endless line (9 GB), or floods stderr,
// is replayed and tested against a one-request tape with --timeout 3s
// (CI's soak step, TAPEDECK_SOAK=1; plain runs flood 1 s a case, still
// 50-90 MB in a million lines on a loaded 2-core machine, and a GB in
// the endless line): each run stays under 200 MB and ends within the
// timeout and a few seconds, fails, and says how much it counted but did
// not keep.
func TestReplayKeepsOnlyWhatTheRecordingExplains(t *testing.T) {
	t.Parallel() // its cases run one after another: each floods a core
	skipUnderRace(t)
	soakLater(t)
	if testing.Short() {
		t.Skip("floods for 1 s a case")
	}
	flooding := 1 * time.Second
	if os.Getenv("TAPEDECK_SOAK") != "" {
		flooding = 3 * time.Second
	}
	if _, err := exec.LookPath("yes"); err != nil {
		t.Skip("no yes(1)")
	}
	flood := goProgram(t, "./testdata/plugins/flood-go", "flood-go")
	for _, c := range []struct {
		name string
		argv []string
		note string
	}{
		{"lines", []string{"sh", "-c", `yes '{"jsonrpc":"2.0","method":"x"}'`}, "the plugin said more on stdout than the recording can explain: "},
		{"endless line", []string{flood, "endless"}, "the plugin said longer lines on stdout than the recording can explain: 1 line kept cut at 1048576 bytes ("},
		{"stderr", []string{flood, "stderr"}, "the plugin said more on stderr than the recording can explain: "},
	} {
		for _, command := range []string{"replay", "test"} {
			t.Run(c.name+"/"+command, func(t *testing.T) {
				tape := tinyTape(t, c.argv)
				args := []string{command, "--timeout", flooding.String(), tape}
				if command == "replay" {
					args = append(args, "--")
					args = append(args, c.argv...)
				}
				const limit = 200 // MiB
				out, code, rss, took := boundedRun(t, args...)
				if code != 1 {
					t.Errorf("exit %d, want 1 (differs)", code)
				}
				if rss > limit && !race.Enabled { // the race-built binary's memory is the detector's
					t.Errorf("peak RSS %d MiB, want at most %d", rss, limit)
				}
				if took > flooding+5*time.Second {
					t.Errorf("took %v with --timeout %v", took, flooding)
				}
				if !strings.Contains(out, c.note) || !strings.Contains(out, "counted, not kept") {
					t.Errorf("no note of what was counted, not kept (%q):\n%.3000s", c.note, out)
				}
				if len(out) > 64<<10 {
					t.Errorf("printed %d bytes", len(out))
				}
				counted, _, _ := strings.Cut(out[max(0, strings.Index(out, c.note)):], "\n")
				t.Logf("peak RSS %d MiB, %v: %.200s", rss, took.Round(time.Millisecond), counted)
			})
		}
	}
}

// TestReplayEndsASetsidChild: a plugin that starts a child in a session of
// its own (out of its process group) and then exits, or hangs past
// --timeout: once replay returns, the child is gone.
func TestReplayEndsASetsidChild(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid(1)")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: the subreaper is Linux's")
	}
	for _, mode := range []string{"exit", "hang"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			argv := []string{"sh", "testdata/plugins/setsid-sh/main.sh", mode}
			tape := tinyTape(t, argv)
			pidfile := filepath.Join(t.TempDir(), "child.pid")
			r := tapedeckBinary(t, t.TempDir(), nil, []string{"SETSID_PIDFILE=" + pidfile},
				append([]string{"replay", "--timeout", "2s", "--step-timeout", "1s", tape, "--"}, argv...)...)
			b, err := os.ReadFile(pidfile)
			if err != nil {
				t.Fatalf("the plugin wrote no pid (exit %d): %v\n%s%s", r.code, err, r.stdout, r.stderr)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file: %v", err)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if alive(pid) {
				stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				t.Errorf("the plugin's setsid child %d outlived the replay (%s)\n%s%s", pid, stat, r.stdout, r.stderr)
			}
		})
	}
}
