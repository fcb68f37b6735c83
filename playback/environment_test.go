package playback

import (
	"os"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/profile"
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
	e, err := prepareEnv(rec, &Options{Env: []string{"HOME=/h"}}, nil, nil)
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
	opt := &Options{Env: []string{"STAMP_HOME=/recorded"}, FreshDirs: []string{"STAMP_HOME"}}
	fs, err := foldersOf(rec, profile.Agentty{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	e, err := prepareEnv(rec, opt, nil, fs)
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
		if _, err := foldersOf(rec, profile.Agentty{}, &Options{FreshDirs: []string{bad}}); err == nil || !strings.Contains(err.Error(), "--fresh-dir") {
			t.Errorf("--fresh-dir %q: %v, want refused", bad, err)
		}
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// TestTheEnvironmentTravels: --env NAME=VALUE sets a variable over the
// recorded one; a recorded value that is redacted is not applied, and a
// variable tapedeck.json lists that the recording lacks is said in a note
// with what stood in (the caller's value, or none).
func TestTheEnvironmentTravels(t *testing.T) {
	rec := &Recording{Name: "t.jsonl", Meta: &frame.Session{Env: map[string]string{
		"MEMORY_FILE_PATH": "/recorded/memory.jsonl",
		"API_KEY":          "«redacted:0123456789ab»",
		"OVERRIDDEN":       "recorded",
	}}}
	e, err := prepareEnv(rec, &Options{Env: []string{"HOME=/h", "API_KEY=mine", "ALLOWED_DIR=/caller"}, SetEnv: []string{"OVERRIDDEN=given"}}, []string{"ALLOWED_DIR", "NOT_ANYWHERE", "MEMORY_FILE_PATH"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	env := map[string]string{}
	for _, kv := range e.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, want := range map[string]string{"MEMORY_FILE_PATH": "/recorded/memory.jsonl", "API_KEY": "mine", "OVERRIDDEN": "given", "ALLOWED_DIR": "/caller"} {
		if env[k] != want {
			t.Errorf("%s=%q, want %q", k, env[k], want)
		}
	}
	notes := strings.Join(note.Strings(e.notes), "\n")
	for _, want := range []string{
		"ran without the recorded API_KEY (the recording holds it redacted): it ran with the caller's (4 bytes)",
		"ran without the recorded ALLOWED_DIR (tapedeck.json's env lists it, but the recording has none",
		"ran without the recorded NOT_ANYWHERE (tapedeck.json's env lists it, but the recording has none: record it again where tapedeck.json is, or with --env NOT_ANYWHERE): it ran without it",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes\n%s\nlack %q", notes, want)
		}
	}
	if strings.Contains(notes, "MEMORY_FILE_PATH") || strings.Contains(notes, "OVERRIDDEN") || len(e.notes) != 3 {
		t.Errorf("notes\n%s\nwant exactly the three", notes)
	}
	if _, err := prepareEnv(rec, &Options{SetEnv: []string{"NOEQUALS"}}, nil, nil); err == nil || !strings.Contains(err.Error(), "--env") {
		t.Errorf("--env NOEQUALS: %v", err)
	}
}
