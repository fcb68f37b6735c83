package tapetest

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/playback"
)

// TestMissingTapesAreTheScriptsWithoutOne: a host script whose tape is
// beside it is not recorded again; one without is, in a nested folder
// too; node_modules and hidden folders are passed over.
func TestMissingTapesAreTheScriptsWithoutOne(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.host.jsonl", "a.jsonl", "b.host.jsonl", "sub/c.host.jsonl", "node_modules/d.host.jsonl", ".x/e.host.jsonl", "f.jsonl"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := missingTapes(t, []string{dir})
	want := []string{filepath.Join(dir, "b.host.jsonl"), filepath.Join(dir, "sub", "c.host.jsonl")}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("missing tapes %q, want %q", got, want)
	}
}

// TestRecordNeedsTheCommand: without a command, recording a missing tape
// fails in one line that says which tape, which script and what to set.
func TestRecordNeedsTheCommand(t *testing.T) {
	err := record("testdata/tapes/greet.host.jsonl", "testdata/tapes/greet.jsonl", nil)
	if err == nil || !strings.Contains(err.Error(), "testdata/tapes/greet.jsonl is missing") || !strings.Contains(err.Error(), "set playback.Options.Command") || strings.Contains(err.Error(), "\n") {
		t.Errorf("record without a command: %v", err)
	}
}

// TestUpdateAsked: an update is asked for by TAPEDECK_UPDATE=1 (not by
// another value), or by a boolean update flag the test binary defines and
// that is set; an update flag of another kind asks for nothing.
func TestUpdateAsked(t *testing.T) {
	for _, c := range []struct {
		name string
		env  string
		flag func(*flag.FlagSet) // defines the test's own flags
		args []string
		want bool
	}{
		{name: "nothing", want: false},
		{name: "variable", env: "1", want: true},
		{name: "variable not 1", env: "true", want: false},
		{name: "flag set", flag: func(fs *flag.FlagSet) { fs.Bool("update", false, "") }, args: []string{"-update"}, want: true},
		{name: "flag defined, not set", flag: func(fs *flag.FlagSet) { fs.Bool("update", false, "") }, want: false},
		{name: "flag set false, variable 1", env: "1", flag: func(fs *flag.FlagSet) { fs.Bool("update", false, "") }, args: []string{"-update=false"}, want: true},
		{name: "a string flag named update", flag: func(fs *flag.FlagSet) { fs.String("update", "", "") }, args: []string{"-update=yes"}, want: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			if c.flag != nil {
				c.flag(fs)
			}
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string {
				if k == UpdateVar {
					return c.env
				}
				return ""
			}
			if got := updateAsked(getenv, fs.Lookup); got != c.want {
				t.Errorf("updateAsked = %v, want %v", got, c.want)
			}
		})
	}
}

// TestRecordWritesAGoldenThatReplays: a host script recorded as a tape
// (the bundled Go plugin, built) gives a tape that replays the same at
// once, that names no folder of this machine (it goes into git), and
// whose name is the tape's; a plugin that cannot start says so in one
// line naming the tape.
func TestRecordWritesAGoldenThatReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bundled plugin; not in -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "hello-go")
	if out, err := exec.Command("go", "build", "-o", bin, "../testdata/plugins/hello-go").CombinedOutput(); err != nil {
		t.Fatalf("build hello-go: %v\n%s", err, out)
	}
	for src, dst := range map[string]string{"agentty-plugin.json": "agentty-plugin.json", "host.jsonl": "tapes/greet.host.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "plugins", "hello-go", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, dst)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, tape := filepath.Join(dir, "tapes", "greet.host.jsonl"), filepath.Join(dir, "tapes", "greet.jsonl")
	opt := &playback.Options{Command: []string{bin}, Dir: dir}
	if err := record(script, tape, opt); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tape)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), dir) {
		t.Errorf("the recorded tape names the folder it was recorded in (%s): it would not replay from another checkout", dir)
	}
	if !strings.Contains(string(b), `"name":"greet"`) {
		t.Errorf("the recorded tape is not named greet:\n%.300s", b)
	}
	r := playback.RunTape(context.Background(), tape, opt)
	switch {
	case r.Skip != "":
		t.Fatalf("the recorded tape is skipped: %s", r.Skip)
	case r.Outcome.Err != nil:
		t.Fatal(r.Outcome.Err)
	case !r.Outcome.Same():
		t.Errorf("the recorded tape does not replay the same at once:\n%s", Report(r.Outcome))
	}

	err = record(script, filepath.Join(dir, "tapes", "other.jsonl"), &playback.Options{Command: []string{filepath.Join(dir, "no-such-plugin")}, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "record "+filepath.Join(dir, "tapes", "other.jsonl")) || strings.Contains(err.Error(), "\n") {
		t.Errorf("recording with a plugin that cannot start: %v", err)
	}
}
