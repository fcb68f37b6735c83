package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
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
		{"hang", []string{"FIXTURE_HANG=1"}, 1, "exit exit: recorded code 0, replayed signal SIGTERM"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
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

func TestTestCommand(t *testing.T) {
	good := recordMini(t)
	dir := t.TempDir()
	data, _ := os.ReadFile(good)
	os.WriteFile(filepath.Join(dir, "a-good.jsonl"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "b-bad.jsonl"), []byte(strings.Replace(string(data), `\"text\":\"Hello\"`, `\"text\":\"Bye\"`, 1)), 0o644)
	bad, _ := os.ReadFile(filepath.Join(dir, "b-bad.jsonl"))
	if string(bad) == string(data) {
		// The tape writes the frame as verbatim JSON: edit that form.
		os.WriteFile(filepath.Join(dir, "b-bad.jsonl"), []byte(strings.Replace(string(data), `"text":"Hello"`, `"text":"Bye"`, 1)), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte("{\"not\":\"a tape\"}\n"), 0o644)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini"}, "test", "-j", "2", "--junit", junit, dir)
	if r.code != 1 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(r.stdout)), "\n")
	if last := lines[len(lines)-1]; last != "1 passed, 1 failed" {
		t.Errorf("closing line %q", last)
	}
	if !strings.HasPrefix(lines[0], "ok    "+filepath.Join(dir, "a-good.jsonl")) {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.Contains(string(r.stdout), "FAIL  "+filepath.Join(dir, "b-bad.jsonl")) || !strings.Contains(string(r.stdout), `"Bye" → "Hello"`) {
		t.Errorf("the failing tape's diff is not shown:\n%s", r.stdout)
	}
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	b, _ := os.ReadFile(junit)
	if err := xml.Unmarshal(b, &suite); err != nil || suite.Tests != 2 || suite.Failures != 1 {
		t.Errorf("junit %+v %v:\n%s", suite, err, b)
	}
}

// TestBundledTapesReplayStably replays every bundled example tape 20 times
// in a row while busy goroutines load every core: no run may differ.
func TestBundledTapesReplayStably(t *testing.T) {
	tapes, _ := filepath.Glob("testdata/tapes/*.jsonl")
	if len(tapes) == 0 {
		t.Fatal("no bundled tapes in testdata/tapes")
	}
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
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
	defer func() { close(stop); load.Wait() }()
	for _, tp := range tapes {
		t.Run(filepath.Base(tp), func(t *testing.T) {
			src, err := readTapeFile(tp)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := exec.LookPath(src.meta.Command[0]); err != nil {
				t.Skipf("%s is not installed: %v", src.meta.Command[0], err)
			}
			for i := range rounds {
				r := tapedeck(t, t.TempDir(), nil, nil, "replay", tp)
				if r.code != 0 {
					t.Fatalf("round %d: exit %d\n%s\n%s", i+1, r.code, r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestExportRelativeReplaysFromAnotherCheckout exports a golden tape with
// --relative, moves plugin and tape together, and replays it there.
func TestExportRelativeReplaysFromAnotherCheckout(t *testing.T) {
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
