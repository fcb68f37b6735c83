package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// waiters are the fixture plugins that wait as real ones do: a debounce
// timer, a child process, a long sleep before a request.
var waiters = []struct{ id, interpreter, main string }{
	{"waiter-node", "node", "main.mjs"},
	{"waiter-python", "python3", "main.py"},
}

// TestWaitingPluginsReplayCleanWithTheirCommand replays each waiter's tape 20
// times at once with the command given after --, comparing stderr too,
// while busy goroutines load every core: every run is the same. (The
// recorded command is replayed 20 times by TestBundledTapesReplayStably.)
func TestWaitingPluginsReplayCleanWithTheirCommand(t *testing.T) {
	rounds := soakRounds(t, 20, 3)
	soakLoad(t)
	for _, w := range waiters {
		t.Run(w.id, func(t *testing.T) {
			soakSubtest(t)
			if _, err := exec.LookPath(w.interpreter); err != nil {
				t.Skipf("%s is not installed", w.interpreter)
			}
			tp := filepath.Join("testdata", "tapes", w.id+".jsonl")
			main := filepath.Join("testdata", "plugins", w.id, w.main)
			for i, r := range tapedeckMany(t, rounds, nil, "replay", tp, "--compare-stderr", "--", w.interpreter, main) {
				if r.code != 0 {
					t.Errorf("round %d of %d: exit %d\n%s\n%s", i+1, rounds, r.code, r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestWaitingPluginsChangesAreCaught: one changed string in a waiting
// plugin is one changed frame, and one extra notification is exactly one
// extra difference: nothing after it shifts.
func TestWaitingPluginsChangesAreCaught(t *testing.T) {
	t.Parallel()
	for _, w := range waiters {
		t.Run(w.id, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(w.interpreter); err != nil {
				t.Skipf("%s is not installed", w.interpreter)
			}
			tp := filepath.Join("testdata", "tapes", w.id+".jsonl")
			out, r := replayTape(t, tp, []string{"WAITER_LABEL=found"})
			if r.code != 1 || summary(out) != "changed request ui/setPanel" {
				t.Fatalf("changed label: exit %d, differences %q\n%s", r.code, summary(out), r.stdout)
			}
			if ch := out.Differences[0].Changes; len(ch) != 1 || ch[0].Path != "params.tree.children[1].text" || ch[0].New != `"found bui"` {
				t.Errorf("changed label: changes %+v", ch)
			}
			out, r = replayTape(t, tp, []string{"WAITER_EXTRA=1"})
			if r.code != 1 || summary(out) != "extra notification ui/setBadge" {
				t.Fatalf("extra frame: exit %d, differences %q\n%s", r.code, summary(out), r.stdout)
			}
			if len(out.Notes) != 0 {
				t.Errorf("extra frame: notes %q", out.Notes)
			}
		})
	}
}

// TestReplayVerboseSaysWhatRuns: -v names the command, its folder and the
// variables a replay adds, before anything runs.
func TestReplayVerboseSaysWhatRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	tp := filepath.Join("testdata", "tapes", "waiter-node.jsonl")
	r := tapedeck(t, t.TempDir(), nil, nil, "replay", "-v", tp)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"runs node main.mjs", "in      " + filepath.Join("testdata", "tapes", "..", "plugins", "waiter-node"), "adding  AGENTTY_LANGUAGE=en AGENTTY_PLUGIN_ID=waiter-node AGENTTY_VERSION=1.9.0"} {
		if !strings.Contains(string(r.stderr), want) {
			t.Errorf("-v output lacks %q:\n%s", want, r.stderr)
		}
	}
}

// TestReplayVerboseAsTheReadmeShows runs the README's -v example exactly
// as shown, from the module root, and finds the lines it shows (the folder
// is this checkout's, not /home/me/tapedeck).
func TestReplayVerboseAsTheReadmeShows(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	readme := docsText(t)
	_, rest, ok := strings.Cut(readme, "\n  $ tapedeck replay -v ")
	if !ok {
		t.Fatal("README.md shows no tapedeck replay -v")
	}
	block, _, _ := strings.Cut(rest, "\n  ```")
	lines := strings.Split(block, "\n")
	line := "tapedeck replay -v " + lines[0]
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	r := readmeCmd(t, wd, []string{"TAPEDECK_STORE=" + t.TempDir()}, line, nil)
	if r.code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", line, r.code, r.stdout, r.stderr)
	}
	out := string(r.stdout) + string(r.stderr)
	for _, shown := range lines[1:] {
		want := strings.TrimPrefix(shown, "  ")
		switch {
		case strings.HasPrefix(want, "  in      "):
			want = "  in      " + wd
		case strings.Contains(want, ": same (compared "):
			want, _, _ = strings.Cut(want, " frames, ")
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s printed no %q:\n%s", line, want, out)
		}
	}
}

// TestReadmeWaitingReplaysAsShown runs the README's replays of the
// waiting plugins with a change switched on (an extra notification; a
// changed label, twice with --runs 2) exactly as shown, from the module
// root, and finds the lines shown after each, in order (times aside).
func TestReadmeWaitingReplaysAsShown(t *testing.T) {
	t.Parallel()
	for _, prog := range []string{"node", "python3"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed", prog)
		}
	}
	readme := docsText(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"WAITER_EXTRA=1 tapedeck replay testdata/tapes/waiter-python.jsonl",
		"WAITER_LABEL=found tapedeck replay testdata/tapes/waiter-node.jsonl --runs 2",
	} {
		t.Run(strings.Fields(line)[0], func(t *testing.T) {
			t.Parallel()
			_, rest, ok := strings.Cut(readme, "\n$ "+line+"\n")
			if !ok {
				t.Fatalf("README.md does not show $ %s", line)
			}
			block, _, _ := strings.Cut(rest, "```")
			shown := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
			r := readmeCmd(t, wd, []string{"TAPEDECK_STORE=" + t.TempDir()}, line, nil)
			if r.code != 1 {
				t.Errorf("%s: exit %d, want 1 (a difference)", line, r.code)
			}
			if missing, ok := shownIn(shown, string(r.stdout)+string(r.stderr)); !ok {
				t.Errorf("%s printed no %q where the README shows it:\n%s%s", line, missing, r.stdout, r.stderr)
			}
		})
	}
}

// TestNotesHintRunsAsPrinted: a grouped note says "(-v lists them)";
// the same replay with -v added lists each note of the group on its own
// line, and says the hint no more.
func TestNotesHintRunsAsPrinted(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	tp := filepath.Join("testdata", "tapes", "hello-python.jsonl")
	env := []string{"FIXTURE_LABEL=Howdy"}
	r := tapedeck(t, t.TempDir(), nil, env, "replay", tp)
	m := regexp.MustCompile(`(?m)^note: (\d+) requests answered from a recorded call whose params differed: ui/setPanel ×(\d+) \(-v lists them\)$`).FindStringSubmatch(string(r.stdout))
	if r.code != 1 || m == nil {
		t.Fatalf("replay: exit %d, no grouped note with its hint:\n%s", r.code, r.stdout)
	}
	n, _ := strconv.Atoi(m[1])
	v := tapedeck(t, t.TempDir(), nil, env, "replay", "-v", tp)
	each := regexp.MustCompile(`(?m)^note: ui/setPanel \(replay seq \d+\) answered from a recorded call whose params differed$`).FindAllString(string(v.stdout), -1)
	if v.code != 1 || len(each) != n || strings.Contains(string(v.stdout), "(-v lists them)") {
		t.Errorf("replay -v: exit %d, %d notes of the %d the hint promised:\n%s", v.code, len(each), n, v.stdout)
	}
}
