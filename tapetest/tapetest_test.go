package tapetest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
