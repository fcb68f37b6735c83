package playback

import (
	"os"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/note"
)

// TestTapeEnvironmentIsChecked: of a tape's environment only variable
// names ([A-Za-z_][A-Za-z0-9_]*) with values without NUL are applied, and
// of those none that changes how programs are loaded or started (the
// loader's, the interpreters' hooks, PATH, tapedeck's own); each other one
// is said on a line of its own and skipped.
func TestTapeEnvironmentIsChecked(t *testing.T) {
	rec := &Recording{Name: "t.jsonl", Meta: &frame.Session{Env: map[string]string{
		"AGENTTY_OK":             "1",
		"AGENTTY_B\nLD_PRELOAD":  "/tmp/evil.so",
		"AGENTTY_NUL":            "a\x00b",
		"AGENTTY_lower":          "x",
		"AGENTTY_":               "x",
		"LD_PRELOAD":             "/tmp/evil.so",
		"AGENTTY_A=B":            "x",
		"AGENTTY_" + "X\x00Y":    "x",
		"AGENTTY_SPACE IN_NAME ": "x",
		"NODE_OPTIONS":           "--require /tmp/evil.js",
		"PATH":                   "/tmp/evil",
		"MEMORY_FILE_PATH":       "/data/memory.json",
	}}}
	e, err := prepareEnv(rec, &Options{Env: []string{"HOME=/h"}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := strings.Join(e.env, " "); got != "HOME=/h AGENTTY_=x AGENTTY_OK=1 AGENTTY_lower=x MEMORY_FILE_PATH=/data/memory.json" {
		t.Errorf("env %q, want AGENTTY_, AGENTTY_OK, AGENTTY_lower and MEMORY_FILE_PATH added", got)
	}
	if len(e.notes) != 8 {
		t.Errorf("%d notes, want one for each of the 8 skipped: %q", len(e.notes), e.notes)
	}
	for _, n := range note.Strings(e.notes) {
		if strings.ContainsAny(n, "\n\x00") || !strings.HasPrefix(n, "the recording's environment sets \"") {
			t.Errorf("note %q: want one quoted line", n)
		}
	}
}

// TestFreshDirs: each --fresh-dir variable names a new, empty folder for
// the run, removed by Close; a name that is no variable's is refused.
func TestFreshDirs(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	rec := &Recording{Name: "t.jsonl", Meta: &frame.Session{}}
	e, err := prepareEnv(rec, &Options{Env: []string{"STAMP_HOME=/recorded"}, FreshDirs: []string{"STAMP_HOME"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := ""
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "STAMP_HOME="); ok {
			if dir != "" {
				t.Errorf("STAMP_HOME set twice: %q", e.env)
			}
			dir = v
		}
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 || dir == "/recorded" {
		t.Fatalf("STAMP_HOME=%s: %v %v, want a new empty folder", dir, ents, err)
	}
	os.WriteFile(dir+"/state", []byte("x"), 0o600)
	e.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s", dir)
	}
	for _, bad := range []string{"A-B", "", "PATH", "TAPEDECK_CLOCK_SEED", "X=Y"} {
		if _, err := prepareEnv(rec, &Options{FreshDirs: []string{bad}}); err == nil || !strings.Contains(err.Error(), "--fresh-dir") {
			t.Errorf("--fresh-dir %q: %v, want refused", bad, err)
		}
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}
