package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/internal/race"
)

// readmeCmd runs one command line of the README's "When a golden fails"
// exactly as shown ("VAR=value tapedeck ARGS…", arguments split on
// spaces, one level of single quotes), in dir, with env added; stdin, when
// set, drives the plugin as a host.
func readmeCmd(t *testing.T, dir string, env []string, line string, host func(*host)) result {
	t.Helper()
	words := splitWords(line)
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env = append(env, words[0])
		words = words[1:]
	}
	if len(words) == 0 || words[0] != "tapedeck" {
		t.Fatalf("README line %q does not run tapedeck", line)
	}
	cmd := exec.Command(tapedeckBin, words[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stderr = &errb
	var err error
	if host != nil {
		h := newHost(t, cmd)
		host(h)
		err = cmd.Wait()
	} else {
		cmd.Stdout = &out
		err = cmd.Run()
	}
	r := result{stdout: out.Bytes(), stderr: errb.Bytes()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	t.Logf("$ %s\n%s%s(exit %d)", line, r.stdout, r.stderr, r.code)
	return r
}

func splitWords(s string) []string {
	var words []string
	var w strings.Builder
	quoted, in := false, false
	for _, c := range s {
		switch {
		case c == '\'':
			quoted, in = !quoted, true
		case c == ' ' && !quoted:
			if in {
				words = append(words, w.String())
			}
			w.Reset()
			in = false
		default:
			w.WriteRune(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

func wantIn(t *testing.T, r result, code int, wants ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d", r.code, code)
	}
	all := string(r.stdout) + string(r.stderr)
	for _, w := range wants {
		if !strings.Contains(all, w) {
			t.Errorf("output lacks %q", w)
		}
	}
}

// TestReadmeWhenAGoldenFails runs docs/when-a-golden-fails.md's walk
// through the report, the pinned clock, drift and shrink, command for
// command, each a line the guide shows.
func TestReadmeWhenAGoldenFails(t *testing.T) {
	t.Parallel()
	if race.Enabled {
		t.Skip("the README's walk repeats what the clock, fingerprint and shrink tests cover; under the race detector it only costs time")
	}
	for _, prog := range []string{"node", "python3"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed", prog)
		}
	}
	// Each line this walk runs is one docs/when-a-golden-fails.md shows.
	shown := docsText(t)
	for _, line := range []string{
		"cd clock-node",
		"tapedeck record --pin-clock --name clock -- node main.mjs",
		"tapedeck export clock -o ../tapes/clock.jsonl --relative",
		"tapedeck show clock",
		"tapedeck replay tapes/clock.jsonl --pin-clock=false",
		"tapedeck replay tapes/clock.jsonl",
		"tapedeck test tapes",
		"FIXTURE_LABEL=Howdy tapedeck shrink testdata/tapes/hello-python.jsonl -o min.jsonl",
		"FIXTURE_LABEL=Howdy tapedeck replay min.jsonl",
		"FIXTURE_CRASH_AFTER=1 tapedeck replay testdata/tapes/hello-python.jsonl",
	} {
		if !strings.Contains(shown, "\n$ "+line+"\n") && !strings.Contains(shown, "\n$ "+line+" ") {
			t.Errorf("the guides no longer show $ %s, which this walk runs", line)
		}
	}
	ws := t.TempDir()
	plugin := filepath.Join(ws, "clock-node")
	copyDir(t, filepath.Join("testdata", "plugins", "clock-node"), plugin)
	os.Mkdir(filepath.Join(ws, "tapes"), 0o755)
	// Saved 10 minutes and 1 s ago: the walk has 59 s to reach the replay
	// that says "10 → 1450 minutes", as the guide shows.
	saved := time.Now().Add(-10*time.Minute - time.Second).UnixMilli()
	base := []string{"TAPEDECK_STORE=" + t.TempDir(), "CLOCK_SAVED_AT=" + strconv.FormatInt(saved, 10), "CLOCK_DIR=" + t.TempDir()}
	nodeOn := func(v string) []string {
		return append([]string{"PATH=" + fakeNode(t, v) + string(os.PathListSeparator) + os.Getenv("PATH")}, base...)
	}
	env := nodeOn("20.11.1")

	r := readmeCmd(t, plugin, env, "tapedeck record --pin-clock --name clock -- node main.mjs", clockSession)
	wantIn(t, r, 0)
	wantIn(t, readmeCmd(t, plugin, env, "tapedeck export clock -o ../tapes/clock.jsonl --relative", nil), 0)
	wantIn(t, readmeCmd(t, ws, env, "tapedeck show clock", nil), 0,
		"\nclock        pinned to ", "\nfingerprint  linux/amd64 · node 20.11.1 (", ") · clock-node 1.0.0 api 1 · SDK 0.3.1 · 4 files hashed in .\n")

	// A day later, on the real clock, then pinned.
	later := append(dayLater(t), env...)
	wantIn(t, readmeCmd(t, ws, later, "tapedeck replay tapes/clock.jsonl --pin-clock=false", nil), 1,
		`params.tree.children[0].text: "draft saved 10 minutes ago" → "draft saved 1450 minutes ago"`,
		`params.message: "saved draft-`)
	wantIn(t, readmeCmd(t, ws, later, "tapedeck replay tapes/clock.jsonl", nil), 0, "tapes/clock.jsonl: same (compared 3 recorded and 3 replayed frames, ")

	// main.mjs changed, node upgraded, two files added.
	main := filepath.Join(plugin, "main.mjs")
	b, _ := os.ReadFile(main)
	os.WriteFile(main, []byte(strings.Replace(string(b), `"draft saved "`, `"draft kept "`, 1)), 0o644)
	os.WriteFile(filepath.Join(plugin, "notes.txt"), []byte("n\n"), 0o644)
	os.WriteFile(filepath.Join(plugin, "sdk", "extra.mjs"), []byte("export {}\n"), 0o644)
	wantIn(t, readmeCmd(t, ws, nodeOn("22.3.0"), "tapedeck test tapes", nil), 1,
		"FAIL  tapes/clock.jsonl  ",
		"tapes/clock.jsonl: 1 difference (compared 3 recorded and 3 replayed frames, ",
		"drift since the recording: main.mjs changed; node 20.11.1 → 22.3.0; 2 files added\nchanged   request ui/setPanel",
		"0 passed, 1 failed")

	// Shrink a bundled tape against a plugin whose label changed.
	tdir := filepath.Join(ws, "testdata")
	copyDir(t, filepath.Join("testdata", "tapes"), filepath.Join(tdir, "tapes"))
	copyDir(t, filepath.Join("testdata", "plugins", "hello-python"), filepath.Join(tdir, "plugins", "hello-python"))
	wantIn(t, readmeCmd(t, ws, base, "FIXTURE_LABEL=Howdy tapedeck shrink testdata/tapes/hello-python.jsonl -o min.jsonl", nil), 0,
		"tapedeck: shrink testdata/tapes/hello-python.jsonl: 6 host steps (3 kept: initialize and the ending); chasing changed ui/setPanel at params.tree.children[0].text (the first difference)\n",
		"tapedeck: shrink: 1 of 6 host steps left after ",
		"; wrote min.jsonl\n  kept: panel/open (seq 2)\n")
	wantIn(t, readmeCmd(t, ws, base, "FIXTURE_LABEL=Howdy tapedeck replay min.jsonl", nil), 1,
		"min.jsonl: 1 difference (compared 2 recorded and 2 replayed frames, ",
		`params.tree.children[0].text: "Hello" → "Howdy"`)

	// Reading the report: a plugin that crashed half way.
	wantIn(t, readmeCmd(t, ws, base, "FIXTURE_CRASH_AFTER=1 tapedeck replay testdata/tapes/hello-python.jsonl", nil), 1,
		"testdata/tapes/hello-python.jsonl: 6 differences (compared 7 recorded and 2 replayed frames, ",
		"\nmissing   request ui/setPanel  recorded seq 9\n",
		"\nexit      recorded code 0, replayed code 3\n",
		"\nnote: the plugin exited before host frame seq 10; the rest was not sent\n")
}
