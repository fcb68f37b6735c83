package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// TestRecordRedactWithoutAKeyStillRuns: record --redact used to refuse to
// start the plugin when the store could not give the placeholder key
// (read-only, full, not ours): the host got nothing. Now the plugin runs
// and is relayed byte for byte, nothing is recorded (so nothing is kept
// unredacted), and tapedeck writes one line.
func TestRecordRedactWithoutAKeyStillRuns(t *testing.T) {
	t.Parallel()
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

// TestExportRedactsTheHeader: export's redactions used to skip the tape's
// header, so --redact-regex said "0 matches" while the tape kept the value
// in env, tags and command. Now every redaction applies to the header too,
// and the default rule to credential-like environment variable names and
// --NAME=VALUE arguments.
func TestExportRedactsTheHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	putSessions(t, dir, 1, func(int) (frame.Session, []frame.Frame) {
		m, f := fakeSession("leaky", "p", time.Date(2025, 5, 5, 0, 0, 0, 0, time.UTC))
		m.Command = []string{"node", "main.mjs", "--api-key=sk-live-42", "--region=eu"}
		m.Env = map[string]string{"AGENTTY_API_TOKEN": "hunter2", "AGENTTY_PLUGIN_ID": "p"}
		m.Tags = map[string]string{"ticket": "sk-live-43"}
		return m, f
	})
	r := tapedeck(t, dir, nil, nil, "export", "leaky", "--redact-regex", `sk-live-[0-9]+`)
	if r.code != 0 {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
	header, _, _ := bytes.Cut(r.stdout, []byte("\n"))
	for _, secret := range []string{"sk-live-42", "sk-live-43", "hunter2"} {
		if bytes.Contains(r.stdout, []byte(secret)) {
			t.Errorf("the tape keeps %q:\n%s", secret, header)
		}
	}
	for _, kept := range []string{`"--region=eu"`, `"AGENTTY_PLUGIN_ID":"p"`, `"--api-key=«redacted:`} {
		if !bytes.Contains(header, []byte(kept)) {
			t.Errorf("the header lost %s:\n%s", kept, header)
		}
	}
	want := "tapedeck: export: redacted 1 match of --redact-regex sk-live-[0-9]+\n" +
		"tapedeck: export: redacted 2 credential-like values (--no-default-redactions keeps them)\n"
	if string(r.stderr) != want {
		t.Errorf("stderr:\n%s\nwant\n%s", r.stderr, want)
	}
	r = tapedeck(t, dir, nil, nil, "export", "leaky", "--no-default-redactions")
	if !bytes.Contains(r.stdout, []byte("hunter2")) || len(r.stderr) != 0 {
		t.Errorf("--no-default-redactions: the header was redacted anyway (stderr %q)", r.stderr)
	}
}

// TestRecordRedactsTheHeader: record --redact-regex keeps a matching value
// out of the stored header (name, tags, command) as well as the frames.
func TestRecordRedactsTheHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argv, env := fixture("echo")
	argv = append(argv, "--api-key=sk-live-77")
	r := tapedeck(t, dir, someLines(3, 1), env, append([]string{"record", "--name", "run-sk-live-78", "--tag", "t=sk-live-79", "--redact-regex", `sk-live-[0-9]+`}, argv...)...)
	if r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("sk-live-7")) {
				t.Errorf("%s holds a redacted value", p)
			}
		}
		return nil
	})
}
