package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRecordRedactWithoutAKeyStillRuns: record --redact used to refuse to
// start the plugin when the store could not give the placeholder key
// (read-only, full, not ours): the host got nothing. Now the plugin runs
// and is relayed byte for byte, nothing is recorded (so nothing is kept
// unredacted), and tapedeck writes one line.
func TestRecordRedactWithoutAKeyStillRuns(t *testing.T) {
	input := someLines(200, 50)
	args := []string{"record", "--redact-regex", "pad", "--redact", "m:params.i"}
	check := func(t *testing.T, store string, want string) {
		t.Helper()
		argv, env := fixture("echo")
		r := tapedeck(t, store, input, env, append(args, argv...)...)
		if r.code != 0 || !bytes.Equal(r.stdout, input) {
			t.Fatalf("record: exit %d, %d of %d bytes relayed; stderr %q", r.code, len(r.stdout), len(input), r.stderr)
		}
		oneLine(t, r.stderr, want)
		spools, _ := filepath.Glob(filepath.Join(store, "spool", "*"))
		if len(spools) > 0 {
			t.Errorf("spools %v: nothing may be recorded without redaction", spools)
		}
	}
	t.Run("key unreadable", func(t *testing.T) {
		store := t.TempDir()
		os.Mkdir(filepath.Join(store, "redact.key"), 0o700) // not a key: a folder
		check(t, store, "cannot record (--redact needs the store's redaction key")
		if _, err := os.Stat(filepath.Join(store, "tapedeck.db")); err == nil {
			t.Error("a database was made: something was recorded")
		}
	})
	t.Run("read-only store", func(t *testing.T) {
		dir := t.TempDir()
		mountTmpfs(t, dir, "1m")
		os.MkdirAll(filepath.Join(dir, "store", "spool"), 0o700)
		if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot remount read-only: %v %s", err, out)
		}
		check(t, filepath.Join(dir, "store"), "read-only file system")
	})
}
