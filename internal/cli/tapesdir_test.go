package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// TestTapesWherePlayKeepsThem: test, review and coverage with no path
// look where play's "Keep it" writes (tapes/) and where the README keeps
// a repository's tapes (testdata/); with neither there they say in one
// line where they looked, and exit 2.
func TestTapesWherePlayKeepsThem(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	for _, cmd := range []string{"test", "review", "coverage"} {
		r := tapedeckIn(t, empty, t.TempDir(), nil, cmd)
		want := "tapedeck: " + cmd + ": no tapes here: looked in tapes/ (where tapedeck play's \"Keep it\" writes them) and testdata/; name a folder or a tape: tapedeck " + cmd + " PATH\n"
		if r.code != 2 || string(r.stderr) != want {
			t.Errorf("%s in an empty folder: exit %d, stderr %q; want 2 and %q", cmd, r.code, r.stderr, want)
		}
	}
	mini := recordMini(t)
	data, err := os.ReadFile(mini)
	if err != nil {
		t.Fatal(err)
	}
	for _, folder := range []string{"tapes", "testdata"} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, folder, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, folder, "sub", "mini.jsonl"), data, 0o644)
		r := tapedeckIn(t, dir, t.TempDir(), []string{"TAPEDECK_FIXTURE=mini"}, "test")
		if want := "ok    " + filepath.Join(folder, "sub", "mini.jsonl"); r.code != 0 || !strings.HasPrefix(string(r.stdout), want) {
			t.Errorf("test with the tape in %s/: exit %d\n%s%s\nwant %q", folder, r.code, r.stdout, r.stderr, want)
		}
		if r := tapedeckIn(t, dir, t.TempDir(), nil, "coverage"); r.code != 0 {
			t.Errorf("coverage with the tape in %s/: exit %d %s", folder, r.code, r.stderr)
		}
		if r := tapedeckIn(t, dir, t.TempDir(), nil, "review", "--list"); r.code != 0 {
			t.Errorf("review --list with the tape in %s/: exit %d %s", folder, r.code, r.stderr)
		}
	}
}

// TestEverythingSkipped: a run in which every tape was skipped (its
// plugin's program is not installed here) tested nothing: it says so,
// and under CI it fails.
func TestEverythingSkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tape := filepath.Join(dir, "gone.jsonl")
	os.WriteFile(tape, tapeOf(t, frame.Session{ID: "01hzzzzzzzzzzzzzzzzzzzzzzz", Command: []string{"tapedeck-no-such-runtime", "main.x"}}, nil), 0o644)
	r := tapedeck(t, t.TempDir(), nil, nil, "test", dir)
	const said = "every tape was skipped: nothing was tested"
	if r.code != 0 || !strings.Contains(string(r.stdout), "0 passed, 0 failed, 1 skipped") || !strings.Contains(string(r.stderr), said) {
		t.Errorf("without CI: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = tapedeck(t, t.TempDir(), nil, []string{"CI=true"}, "test", dir)
	if r.code != 1 || !strings.Contains(string(r.stderr), said) || !strings.Contains(string(r.stderr), "CI is set, so this run fails") {
		t.Errorf("under CI: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// One tape that ran is a test: the skipped one is only said.
	os.WriteFile(filepath.Join(dir, "mini.jsonl"), mustRead(t, recordMini(t)), 0o644)
	if r := tapedeck(t, t.TempDir(), nil, []string{"CI=true", "TAPEDECK_FIXTURE=mini"}, "test", dir); r.code != 0 {
		t.Errorf("one passed, one skipped, under CI: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
