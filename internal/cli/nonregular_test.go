package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNamesThatNeverEnd: a file tapedeck is given by name, or finds in a
// plugin folder, can be a named pipe nobody writes or a link to /dev/zero
// (a cloned repository can carry either). Each command says so in one line
// and exits 1, or, for the fingerprint's look at the plugin folder, leaves
// the file out; none waits for a writer or reads without end. A command
// that hung would be killed after a minute and fail the test.
func TestNamesThatNeverEnd(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	run := func(t *testing.T, dir string, args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, tapedeckBin, append([]string{"--store", filepath.Join(dir, "store")}, args...)...)
		cmd.Dir = dir
		r := runCommand(t, cmd)
		if ctx.Err() != nil {
			t.Fatalf("tapedeck %s did not end within a minute", strings.Join(args, " "))
		}
		return r
	}
	never := func(t *testing.T, path, what string) {
		t.Helper()
		switch what {
		case "fifo":
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		case "zero":
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, what := range []string{"fifo", "zero"} {
		t.Run("tapedeck.json "+what, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tape := filepath.Join(dir, "hello-go.jsonl")
			b, _ := os.ReadFile(filepath.Join("testdata", "tapes", "hello-go.jsonl"))
			os.WriteFile(tape, b, 0o644)
			never(t, filepath.Join(dir, "tapedeck.json"), what)
			r := run(t, dir, "diff", tape, tape)
			oneLine(t, r.stderr, "tapedeck.json")
			if r.code == 0 || !strings.Contains(string(r.stderr), "not a regular file") {
				t.Errorf("diff beside a tapedeck.json that is a %s: exit %d, %s", what, r.code, r.stderr)
			}
		})
		t.Run("tape "+what, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			never(t, filepath.Join(dir, "t.jsonl"), what)
			for _, args := range [][]string{{"show", "t.jsonl"}, {"check", "t.jsonl"}, {"import", "t.jsonl"}, {"replay", "t.jsonl"}, {"textconv", "t.jsonl"}} {
				r := run(t, dir, args...)
				if r.code == 0 || !strings.Contains(string(r.stderr), "not a regular file") {
					t.Errorf("%s of a tape that is a %s: exit %d, %s", strings.Join(args, " "), what, r.code, r.stderr)
				}
			}
		})
		t.Run("--host "+what, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			never(t, filepath.Join(dir, "host.jsonl"), what)
			r := run(t, dir, "record", "--host", "host.jsonl", "--", "true")
			if r.code == 0 || !strings.Contains(string(r.stderr), "--host") || !strings.Contains(string(r.stderr), "not a regular file") {
				t.Errorf("record --host of a %s: exit %d, %s", what, r.code, r.stderr)
			}
		})
		t.Run("manifest "+what, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "p")
			os.MkdirAll(filepath.Join(dir, ".tapedeck"), 0o755)
			never(t, filepath.Join(dir, "agentty-plugin.json"), what)
			os.WriteFile(filepath.Join(dir, ".tapedeck", "launch"), []byte("#!/bin/sh\n"), 0o755)
			r := run(t, filepath.Dir(dir), "doctor", dir)
			if r.code != 1 || !strings.Contains(string(r.stdout)+string(r.stderr), "not a regular file") {
				t.Errorf("doctor of a manifest that is a %s: exit %d, %s%s", what, r.code, r.stdout, r.stderr)
			}
		})
		t.Run("launcher and original "+what, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "p")
			os.MkdirAll(filepath.Join(dir, ".tapedeck"), 0o755)
			os.WriteFile(filepath.Join(dir, "agentty-plugin.json"), []byte(`{"id":"p","main":".tapedeck/launch","runtime":"executable"}`), 0o644)
			never(t, filepath.Join(dir, ".tapedeck", "launch"), what)
			never(t, filepath.Join(dir, ".tapedeck", "agentty-plugin.json.orig"), what)
			r := run(t, filepath.Dir(dir), "doctor", dir)
			if r.code != 1 || !strings.Contains(string(r.stdout)+string(r.stderr), "not a regular file") {
				t.Errorf("doctor of a launcher that is a %s: exit %d, %s%s", what, r.code, r.stdout, r.stderr)
			}
		})
		t.Run("fingerprint "+what, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "agentty-plugin.json"), []byte(`{"id":"p","main":"main.sh","runtime":"executable"}`), 0o644)
			os.Mkdir(filepath.Join(dir, "sdk"), 0o755)
			never(t, filepath.Join(dir, "sdk", "package.json"), what)
			never(t, filepath.Join(dir, ".gitignore"), what)
			r := run(t, dir, "record", "--", "sh", "-c", "exit 0")
			if r.code != 0 {
				t.Errorf("record in a folder with a %s for package.json and .gitignore: exit %d, %s", what, r.code, r.stderr)
			}
		})
	}
}
