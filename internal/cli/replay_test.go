package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/playback"
)

// recordMini records the mini fixture's session and exports it as a tape in
// a fresh folder; it returns the tape's path.
func recordMini(t *testing.T, env ...string) string {
	t.Helper()
	store := t.TempDir()
	argv, fenv := fixture("mini", env...)
	cmd := exec.Command(tapedeckBin, append([]string{"--store", store, "record", "--name", "mini"}, argv...)...)
	cmd.Env = append(os.Environ(), fenv...)
	h := newHost(t, cmd)
	miniSession(h)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record mini: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mini.jsonl")
	if r := tapedeck(t, store, nil, nil, "export", "mini", "-o", path); r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	return path
}

type replayJSON struct {
	Same        bool `json:"same"`
	Differences []struct {
		Kind    string `json:"kind"`
		What    string `json:"what"`
		Changes []struct {
			Path, Old, New string
		} `json:"changes"`
	} `json:"differences"`
	Unmatched []string `json:"unmatched"`
	Notes     []string `json:"notes"`
	Proposed  []string `json:"proposedIgnores"`
	Stable    []struct {
		Method, Path, Old, New string
	} `json:"stableChanges"`
}

// acceptPending checks that replay --update left the tape as it was and
// wrote its change beside it, then accepts the change with review.
func acceptPending(t *testing.T, tape string, before []byte) {
	t.Helper()
	if now, _ := os.ReadFile(tape); string(now) != string(before) {
		t.Fatalf("replay --update changed %s itself; the change belongs in %s.new", tape, tape)
	}
	if _, err := os.Stat(tape + ".new"); err != nil {
		t.Fatalf("replay --update wrote no pending change: %v", err)
	}
	if r := tapedeck(t, t.TempDir(), nil, nil, "review", "--accept", tape); r.code != 0 {
		t.Fatalf("review --accept %s: exit %d %s", tape, r.code, r.stderr)
	}
	if _, err := os.Stat(tape + ".new"); err == nil {
		t.Fatalf("review --accept left %s.new", tape)
	}
}

func replayTape(t *testing.T, path string, env []string, args ...string) (replayJSON, result) {
	t.Helper()
	fenv := append([]string{"TAPEDECK_FIXTURE=mini"}, env...)
	r := tapedeck(t, t.TempDir(), nil, fenv, append([]string{"replay", path, "--json"}, args...)...)
	var out replayJSON
	if r.code != 2 {
		if err := json.Unmarshal(r.stdout, &out); err != nil {
			t.Fatalf("replay --json output: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
	}
	return out, r
}

func summary(o replayJSON) string {
	var s []string
	for _, d := range o.Differences {
		s = append(s, d.Kind+" "+d.What)
	}
	return strings.Join(s, "; ")
}

func TestReplayNamesEachRegression(t *testing.T) {
	t.Parallel()
	tapePath := recordMini(t)
	cases := []struct {
		name string
		env  []string
		code int
		want string
	}{
		{"unchanged, answers out of order", nil, 0, ""},
		{"changed label", []string{"FIXTURE_LABEL=Howdy"}, 1, "changed request ui/setPanel"},
		{"dropped notification", []string{"FIXTURE_DROP=1"}, 1, "missing notification ui/notify"},
		{"added frame", []string{"FIXTURE_EXTRA=1"}, 1, "extra notification ui/notify"},
		{"swapped frames", []string{"FIXTURE_SWAP=1"}, 1, "moved notification"},
		{"crash", []string{"FIXTURE_CRASH=1"}, 1, "exit exit: recorded code 0, replayed code 3"},
		{"hang", []string{"FIXTURE_HANG=1"}, 1, "exit exit: recorded code 0, replayed signal SIG"}, // SIGTERM, or SIGKILL when a loaded machine takes more than the grace period to deliver it
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, r := replayTape(t, tapePath, c.env, "--step-timeout", "2s")
			elapsed := time.Since(start)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			got := summary(out)
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("differences %q, want %q", got, c.want)
			}
			if elapsed > 60*time.Second {
				t.Errorf("took %v: not bounded", elapsed)
			}
			t.Logf("%v: %s", elapsed.Round(time.Millisecond), got)
		})
	}
	out, _ := replayTape(t, tapePath, []string{"FIXTURE_LABEL=Howdy"})
	if len(out.Differences) == 0 || len(out.Differences[0].Changes) != 1 ||
		out.Differences[0].Changes[0].Path != "params.tree.children[0].text" ||
		out.Differences[0].Changes[0].Old != `"Hello"` || out.Differences[0].Changes[0].New != `"Howdy"` {
		t.Errorf("changed label: %+v", out.Differences)
	}
	if _, r := replayTape(t, tapePath, []string{"FIXTURE_LABEL=Howdy"}, "--ignore", "ui/setPanel:params.tree..text"); r.code != 0 {
		t.Errorf("an ignore rule on the label still differs: %s", r.stdout)
	}
}

func TestReplayTextOutputShowsTheDiff(t *testing.T) {
	t.Parallel()
	tapePath := recordMini(t)
	r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=Howdy"}, "replay", tapePath)
	if r.code != 1 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"1 difference",
		`params.tree.children[0].text: "Hello" → "Howdy"`,
		"--- recorded", "+++ replayed", "@@ ",
		`-          "text": "Hello"`, `+          "text": "Howdy"`,
	} {
		if !strings.Contains(string(r.stdout), want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(string(r.stdout), "\x1b[") {
		t.Error("colour escapes in output that is not a terminal")
	}
}

func TestReplayUpdateAndNoise(t *testing.T) {
	t.Parallel()
	tapePath := recordMini(t)
	before, _ := os.ReadFile(tapePath)
	if _, r := replayTape(t, tapePath, []string{"FIXTURE_LABEL=Howdy", "CI=true"}, "--update"); r.code != 2 || !strings.Contains(string(r.stderr), "CI") {
		t.Fatalf("--update with CI set: exit %d, %s", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(tapePath); string(after) != string(before) {
		t.Fatal("the refused --update changed the tape")
	}
	if _, r := replayTape(t, tapePath, []string{"FIXTURE_LABEL=Howdy", "CI=true"}, "--update", "--force"); r.code != 0 {
		t.Fatalf("--update --force: exit %d, %s", r.code, r.stderr)
	}
	acceptPending(t, tapePath, before)
	if _, r := replayTape(t, tapePath, []string{"FIXTURE_LABEL=Howdy"}); r.code != 0 {
		t.Fatalf("after --update the new label is golden, but replay says: %s", r.stdout)
	}

	noisy := recordMini(t, "FIXTURE_NOISE=1")
	out, r := replayTape(t, noisy, []string{"FIXTURE_NOISE=1"}, "--runs", "3", "--write-config")
	if r.code != 1 {
		t.Fatalf("noisy replay: exit %d", r.code)
	}
	if len(out.Proposed) != 1 || out.Proposed[0] != "ui/setBadge:params.nonce" {
		t.Fatalf("proposed %v, want [ui/setBadge:params.nonce]", out.Proposed)
	}
	cfg, err := os.ReadFile(filepath.Join(filepath.Dir(noisy), "tapedeck.json"))
	if err != nil || !strings.Contains(string(cfg), "ui/setBadge:params.nonce") {
		t.Fatalf("tapedeck.json: %s %v", cfg, err)
	}
	if _, r := replayTape(t, noisy, []string{"FIXTURE_NOISE=1"}); r.code != 0 {
		t.Fatalf("with the proposed rule in tapedeck.json the replay still differs: %s", r.stdout)
	}
}

// TestBundledTapesReplayStably replays every bundled example tape 20 times
// at once, through its recorded command, while busy goroutines load every
// core: no run may differ. Among them are the waiter plugins, which answer
// after a debounce timer, a child process and a long sleep.
func TestBundledTapesReplayStably(t *testing.T) {
	tapes, _ := filepath.Glob("testdata/tapes/*.jsonl")
	if len(tapes) == 0 {
		t.Fatal("no bundled tapes in testdata/tapes")
	}
	rounds := soakRounds(t, 20, 3)
	soakLoad(t)
	for _, tp := range tapes {
		t.Run(filepath.Base(tp), func(t *testing.T) {
			soakSubtest(t)
			src, err := playback.ReadTape(tp)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := exec.LookPath(src.Meta.Command[0]); err != nil {
				t.Skipf("%s is not installed: %v", src.Meta.Command[0], err)
			}
			for i, r := range tapedeckMany(t, rounds, nil, "replay", tp) {
				if r.code != 0 {
					t.Errorf("round %d of %d: exit %d\n%s\n%s", i+1, rounds, r.code, r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestReplaySeveralAsTheReadmeShows runs the README's replay of two
// bundled tapes exactly as shown: both reported, in order, exit 0.
func TestReplaySeveralAsTheReadmeShows(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	r := tapedeck(t, t.TempDir(), nil, nil, "replay", "testdata/tapes/hello-go.jsonl", "testdata/tapes/hello-python.jsonl")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(r.stdout)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "testdata/tapes/hello-go.jsonl: same (compared 7 recorded and 7 replayed frames, ") ||
		!strings.HasPrefix(lines[1], "testdata/tapes/hello-python.jsonl: same (compared 7 recorded and 7 replayed frames, ") {
		t.Fatalf("want one line per tape, in order:\n%s", r.stdout)
	}
}

// TestExportRelativeReplaysFromAnotherCheckout exports a golden tape with
// --relative, moves plugin and tape together, and replays it there.
func TestExportRelativeReplaysFromAnotherCheckout(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	repo := t.TempDir()
	plugin := filepath.Join(repo, "plugin")
	os.MkdirAll(plugin, 0o755)
	src, _ := os.ReadFile("testdata/plugins/hello-python/main.py")
	os.WriteFile(filepath.Join(plugin, "main.py"), src, 0o644)
	store := t.TempDir()
	cmd := exec.Command(tapedeckBin, "--store", store, "record", "--name", "g", "--", "python3", filepath.Join(plugin, "main.py"))
	cmd.Dir = plugin
	h := newHost(t, cmd)
	helloSession(h, "hello-python")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	tapePath := filepath.Join(repo, "tapes", "g.jsonl")
	os.MkdirAll(filepath.Dir(tapePath), 0o755)
	if r := tapedeck(t, store, nil, nil, "export", "g", "-o", tapePath, "--relative"); r.code != 0 {
		t.Fatalf("export --relative: %s", r.stderr)
	}
	moved := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Rename(repo, moved); err != nil {
		t.Fatal(err)
	}
	head, _ := os.ReadFile(filepath.Join(moved, "tapes", "g.jsonl"))
	if !strings.Contains(string(head), `"cwd":"../plugin"`) || !strings.Contains(string(head), `"command":["python3","main.py"]`) {
		t.Fatalf("tape header is not relative: %.300s", head)
	}
	if r := tapedeck(t, store, nil, nil, "replay", filepath.Join(moved, "tapes", "g.jsonl")); r.code != 0 {
		t.Fatalf("replay from the moved checkout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestReplayDashDashRunsTheGivenCommand: the documented form
// `replay TAPE -- COMMAND ARGS…` runs COMMAND with its arguments.
func TestReplayDashDashRunsTheGivenCommand(t *testing.T) {
	t.Parallel()
	tp := recordMini(t)
	for _, args := range [][]string{
		{"replay", tp, "--", os.Args[0], "-test.run=^$"},
		{"replay", "--json", tp, "--", os.Args[0]},
	} {
		r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini"}, args...)
		if r.code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestReplayReportsReordersAsMoves: two requests made in the other order
// are one moved frame (their ids are the ids they stand for), and a plugin
// that now waits for one answer before the other request is reported
// without a note that says something that did not happen.
func TestReplayReportsReordersAsMoves(t *testing.T) {
	t.Parallel()
	tp := recordMini(t)
	out, r := replayTape(t, tp, []string{"FIXTURE_REVERSE=1"})
	if r.code != 1 || len(out.Differences) != 1 || out.Differences[0].Kind != "moved" {
		t.Fatalf("reversed requests: exit %d, %q\n%s", r.code, summary(out), r.stdout)
	}
	if len(out.Notes) != 0 {
		t.Errorf("reversed requests: notes %q", out.Notes)
	}
	out, r = replayTape(t, tp, []string{"FIXTURE_SEQUENTIAL=1"}, "--step-timeout", "1s")
	if r.code != 1 {
		t.Fatalf("sequential requests: exit %d\n%s", r.code, r.stdout)
	}
	for _, d := range out.Differences {
		if d.Kind != "moved" {
			t.Errorf("sequential requests: %s %s, want only moves (%q)", d.Kind, d.What, summary(out))
		}
		for _, c := range d.Changes {
			if c.Path == "id" {
				t.Errorf("sequential requests: an id reported as changed: %+v", c)
			}
		}
	}
	for _, n := range out.Notes {
		if strings.Contains(n, "never") {
			t.Errorf("sequential requests: false note %q", n)
		}
	}
}

// TestReplayOfARedactedTape: a placeholder matches the live value at its
// place (exactly under the recording's key, as a placeholder under another
// key), and no output shows a value the tape redacted.
func TestReplayOfARedactedTape(t *testing.T) {
	t.Parallel()
	const secret, other = "sk-live-abc123", "sk-live-zzz999"
	store := t.TempDir()
	argv, fenv := fixture("mini", "FIXTURE_SECRET="+secret)
	cmd := exec.Command(tapedeckBin, append([]string{"--store", store, "record", "--name", "mini", "--redact-regex", "sk-live-[a-z0-9]+"}, argv...)...)
	cmd.Env = append(os.Environ(), fenv...)
	h := newHost(t, cmd)
	miniSession(h)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	tp := filepath.Join(t.TempDir(), "mini.jsonl")
	if r := tapedeck(t, store, nil, nil, "export", "mini", "-o", tp); r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	data, _ := os.ReadFile(tp)
	if strings.Contains(string(data), secret) || !strings.Contains(string(data), `"redaction":{"regexps":["sk-live-[a-z0-9]+"]`) {
		t.Fatalf("tape: %.400s", data)
	}
	env := func(v string) []string { return []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_SECRET=" + v} }
	for _, st := range []string{store, t.TempDir()} { // the recording's key, then another
		if r := tapedeck(t, st, nil, env(secret), "replay", tp); r.code != 0 {
			t.Errorf("same secret (store %s): exit %d\n%s%s", st, r.code, r.stdout, r.stderr)
		}
	}
	report := filepath.Join(t.TempDir(), "r.html")
	outputs := map[string]result{
		"text": tapedeck(t, store, nil, env(other), "replay", tp, "--html", report),
		"json": tapedeck(t, store, nil, env(other), "replay", "--json", tp),
	}
	for name, r := range outputs {
		if r.code != 1 {
			t.Errorf("%s: another secret under the same key: exit %d, want 1\n%s", name, r.code, r.stdout)
		}
		if strings.Contains(string(r.stdout)+string(r.stderr), other) {
			t.Errorf("%s output shows the live secret:\n%s%s", name, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(string(outputs["text"].stdout), "«redacted:") {
		t.Errorf("the difference is not shown as placeholders:\n%s", outputs["text"].stdout)
	}
	if html, _ := os.ReadFile(report); len(html) == 0 || strings.Contains(string(html), other) {
		t.Errorf("the HTML report (%d bytes) shows the live secret", len(html))
	}
	before, _ := os.ReadFile(tp)
	if r := tapedeck(t, store, nil, env(other), "replay", "--update", tp); r.code != 0 {
		t.Fatalf("--update: exit %d %s", r.code, r.stderr)
	}
	if data, _ := os.ReadFile(tp + ".new"); strings.Contains(string(data), other) {
		t.Error("--update saved the live secret in the pending change")
	}
	acceptPending(t, tp, before)
	if data, _ := os.ReadFile(tp); strings.Contains(string(data), other) {
		t.Error("--update saved the live secret")
	}
}

// TestReplayNoiseRulesAreExact: --runs proposes the narrowest rule (the
// index kept), so a change elsewhere still fails after --write-config; and
// what all runs agree on but the recording does not is named.
func TestReplayNoiseRulesAreExact(t *testing.T) {
	t.Parallel()
	tp := recordMini(t, "FIXTURE_CLOCK=1")
	out, r := replayTape(t, tp, []string{"FIXTURE_CLOCK=1"}, "--runs", "3", "--write-config")
	if r.code != 1 || strings.Join(out.Proposed, " ") != "ui/setPanel:params.tree.children[1].text" {
		t.Fatalf("exit %d, proposed %q", r.code, out.Proposed)
	}
	if _, r := replayTape(t, tp, []string{"FIXTURE_CLOCK=1"}); r.code != 0 {
		t.Fatalf("with the proposed rule the replay still differs:\n%s", r.stdout)
	}
	out, r = replayTape(t, tp, []string{"FIXTURE_CLOCK=1", "FIXTURE_LABEL=Howdy"})
	if r.code != 1 || len(out.Differences) != 1 || len(out.Differences[0].Changes) != 1 || out.Differences[0].Changes[0].Path != "params.tree.children[0].text" {
		t.Fatalf("a changed label passed the noise rule: exit %d %+v", r.code, out.Differences)
	}

	tp = recordMini(t, "FIXTURE_WHEN=this minute")
	env := []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_WHEN=10 minutes ago"}
	r = tapedeck(t, t.TempDir(), nil, env, "replay", tp, "--runs", "2")
	for _, want := range []string{
		"2 runs agree with each other: no noise to ignore",
		"all 2 runs agree with each other but differ from the recording",
		`ui/setPanel:params.tree.children[1].text  "this minute" → "10 minutes ago"`,
	} {
		if !strings.Contains(string(r.stdout), want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestReplayUpdateKeepsUnchangedLines: --update rewrites only the frames
// that differ; without a difference it leaves the file alone.
func TestReplayUpdateKeepsUnchangedLines(t *testing.T) {
	t.Parallel()
	tp := recordMini(t)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(tp, old, old)
	before, _ := os.ReadFile(tp)
	if _, r := replayTape(t, tp, nil, "--update"); r.code != 0 {
		t.Fatalf("--update, no change: exit %d %s", r.code, r.stderr)
	}
	fi, _ := os.Stat(tp)
	if after, _ := os.ReadFile(tp); string(after) != string(before) || !fi.ModTime().Equal(old) {
		t.Fatalf("an update without a difference rewrote the tape (mtime %v)", fi.ModTime())
	}
	if _, err := os.Stat(tp + ".new"); err == nil {
		t.Fatal("an update without a difference left a pending change")
	}
	lines := func(b []byte) []string { return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") }

	if _, r := replayTape(t, tp, []string{"FIXTURE_LABEL=Howdy"}, "--update"); r.code != 0 {
		t.Fatalf("--update, changed label: exit %d %s", r.code, r.stderr)
	}
	acceptPending(t, tp, before)
	changed, _ := os.ReadFile(tp)
	a, b := lines(before), lines(changed)
	if len(a) != len(b) {
		t.Fatalf("a changed label changed the number of lines: %d → %d", len(a), len(b))
	}
	// The header takes the live run's fingerprint (so that later drift is
	// told against what was accepted); nothing else in it changes.
	if withoutFingerprint(t, a[0]) != withoutFingerprint(t, b[0]) {
		t.Errorf("the header changed beyond its fingerprint:\n%s\n%s", a[0], b[0])
	}
	var differ []int
	for i := 1; i < len(a); i++ {
		if a[i] != b[i] {
			differ = append(differ, i)
		}
	}
	if len(differ) != 1 || !strings.Contains(b[differ[0]], "Howdy") {
		t.Fatalf("a changed label rewrote lines %v", differ)
	}
	if _, r := replayTape(t, tp, []string{"FIXTURE_LABEL=Howdy"}); r.code != 0 {
		t.Fatalf("the updated tape does not replay the same:\n%s", r.stdout)
	}

	if _, r := replayTape(t, tp, []string{"FIXTURE_LABEL=Howdy", "FIXTURE_EXTRA=1"}, "--update"); r.code != 0 {
		t.Fatalf("--update, extra frame: exit %d %s", r.code, r.stderr)
	}
	acceptPending(t, tp, changed)
	extra, _ := os.ReadFile(tp)
	c := lines(extra)
	if len(c) != len(b)+1 {
		t.Fatalf("an extra frame made %d lines of %d", len(c), len(b))
	}
	kept := 0
	for i, j := 1, 1; i < len(b) && j < len(c); j++ { // every frame line kept, in order
		if b[i] == c[j] {
			i, kept = i+1, kept+1
		}
	}
	if kept != len(b)-1 {
		t.Fatalf("an extra frame kept %d of %d frame lines:\n%s", kept, len(b)-1, extra)
	}
	if _, r := replayTape(t, tp, []string{"FIXTURE_LABEL=Howdy", "FIXTURE_EXTRA=1"}); r.code != 0 {
		t.Fatalf("the tape with the inserted frame does not replay the same:\n%s", r.stdout)
	}
	if out, _ := replayTape(t, tp, []string{"FIXTURE_LABEL=Howdy"}, "--step-timeout", "1s"); summary(out) != "missing notification ui/notify" {
		t.Fatalf("without the extra frame: %q", summary(out))
	}
}

// TestReplayTimeoutEndsThePluginAndItsChildren: a plugin that stops
// answering is given up after --timeout, the replay fails saying so, and
// every process the plugin started is gone.
func TestReplayTimeoutEndsThePluginAndItsChildren(t *testing.T) {
	t.Parallel()
	tp := recordMini(t)
	start := time.Now()
	r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_HANG=1", "FIXTURE_HANG_CHILD=1"}, "replay", tp, "--timeout", "2s")
	if r.code != 1 || !strings.Contains(string(r.stdout), "ran longer than its time limit (2s, --timeout)") || !strings.Contains(string(r.stdout), "timed out") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v with --timeout 2s", d)
	}
	var pid int
	for _, l := range strings.Split(string(r.stdout), "\n") {
		if _, err := fmt.Sscanf(strings.TrimSpace(l), "grandchild %d", &pid); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("no grandchild pid in the output:\n%s", r.stdout)
	}
	waitFor(t, "the grandchild to be gone", 10*time.Second, func() bool { return !alive(pid) })
}

// TestReplayAppliesOnlyAgenttyVariables: a tape can name any variable in
// its env; a replay applies the AGENTTY_* ones only, and says so.
func TestReplayAppliesOnlyAgenttyVariables(t *testing.T) {
	t.Parallel()
	meta := frame.Session{ID: "01m8env0000000000000000000", Command: []string{os.Args[0]}, Env: map[string]string{
		"AGENTTY_PLUGIN_ID": "envy", "PATH": "/nowhere", "NODE_OPTIONS": "--require /tmp/evil.js", "LD_PRELOAD": "/nonexistent/evil.so",
	}}
	want, _ := json.Marshal(map[string]string{"path": os.Getenv("PATH"), "node": os.Getenv("NODE_OPTIONS"), "preload": os.Getenv("LD_PRELOAD"), "pluginId": "envy"})
	code := 0
	tp := writeFile(t, "env.jsonl", tapeOf(t, meta, []frame.Frame{
		{Seq: 1, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","method":"hello"}`)},
		{Seq: 2, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","method":"env","params":` + string(want) + `}`)},
		{Seq: 3, Event: frame.EventEOF, Dir: frame.In},
		frame.Frame{Seq: 4, Event: frame.EventExit}.WithEnd("", &code),
	}))
	r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=envdump"}, "replay", "-v", tp)
	if r.code != 0 {
		t.Fatalf("exit %d: the tape's variables reached the plugin?\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, k := range []string{"LD_PRELOAD", "NODE_OPTIONS", "PATH"} {
		if !strings.Contains(string(r.stdout), "note: the recording's environment sets \""+k+"\": not applied") {
			t.Errorf("no note line on the ignored variable %s:\n%s", k, r.stdout)
		}
	}
	if !strings.Contains(string(r.stderr), "adding  AGENTTY_PLUGIN_ID=envy\n") {
		t.Errorf("-v does not say what is added:\n%s", r.stderr)
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil && runtime.GOOS != "linux"
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestReplayOutputsHideNoControls: what a plugin says reaches replay
// --json, test --json and JUnit with bidi and C1 controls escaped.
func TestReplayOutputsHideNoControls(t *testing.T) {
	t.Parallel()
	tp := recordMini(t)
	env := []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=evil\u202etxt.exe\u009b31m"}
	junit := filepath.Join(t.TempDir(), "j.xml")
	for name, r := range map[string]result{
		"replay --json": tapedeck(t, t.TempDir(), nil, env, "replay", "--json", tp),
		"test --json":   tapedeck(t, t.TempDir(), nil, env, "test", "--json", "--junit", junit, tp),
	} {
		if r.code != 1 {
			t.Errorf("%s: exit %d", name, r.code)
		}
		if strings.ContainsAny(string(r.stdout), "\u202e\u009b") {
			t.Errorf("%s shows a raw control:\n%q", name, r.stdout)
		}
		if !strings.Contains(string(r.stdout), `\u202e`) {
			t.Errorf("%s lacks the escaped control:\n%s", name, r.stdout)
		}
	}
	if b, _ := os.ReadFile(junit); len(b) == 0 || strings.ContainsAny(string(b), "\u202e\u009b") {
		t.Errorf("JUnit shows a raw control (%d bytes):\n%q", len(b), b)
	}
}

// TestReplaySaysWhatItWaitsForOnATerminal: a wait longer than 2 s says, on
// a terminal, what it waits for (a dropped notification, a floor of 2.5 s),
// in replay and in test (which names the tape); into a pipe it says nothing
// of it.
func TestReplaySaysWhatItWaitsForOnATerminal(t *testing.T) {
	t.Parallel()
	tapePath := recordMini(t)
	env := []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_DROP=1"}
	for _, args := range [][]string{{"replay", tapePath}, {"test", tapePath}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			m, s, err := openPTY()
			if err != nil {
				t.Skipf("no pseudo-terminal: %v", err)
			}
			defer m.Close()
			cmd := exec.Command(tapedeckBin, append([]string{"--store", t.TempDir()}, append(args, "--min-wait", "2.5s")...)...)
			cmd.Env = append(os.Environ(), env...)
			var out bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, &out, s
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			s.Close()
			seen := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(m) // ends with EIO once the command has closed the terminal
				seen <- b
			}()
			if err := cmd.Wait(); err == nil {
				t.Fatalf("a plugin that drops a notification passed:\n%s", out.Bytes())
			}
			m.Close()
			terminal := <-seen
			if !bytes.Contains(terminal, []byte("tapedeck: waiting 2")) || !bytes.Contains(terminal, []byte("before host frame seq")) {
				t.Errorf("the terminal was not told what %s waits for:\n%q", args[0], terminal)
			}
			if args[0] == "test" && !bytes.Contains(terminal, []byte(tapePath+": ")) {
				t.Errorf("test's wait line does not name the tape:\n%q", terminal)
			}
			if r := tapedeck(t, t.TempDir(), nil, env, append(args, "--min-wait", "2.5s")...); bytes.Contains(r.stderr, []byte("tapedeck: waiting")) {
				t.Errorf("into a pipe the wait was said: %s", r.stderr)
			}
		})
	}
}

// withoutFingerprint is a tape header line without its fingerprint, as
// canonical JSON.
func withoutFingerprint(t *testing.T, header string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(header), &m); err != nil {
		t.Fatalf("header %q: %v", header, err)
	}
	if session, ok := m["session"].(map[string]any); ok {
		delete(session, "fingerprint")
	}
	b, _ := json.Marshal(m)
	return string(b)
}
