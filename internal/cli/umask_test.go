package cli

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// tapedeckUmask runs the binary under umask 077, as a shell that set it
// would (the umask is the process's: it cannot be set for an in-process
// run alone).
func tapedeckUmask(t *testing.T, store string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `umask 077; exec "$0" "$@"`, tapedeckBin, "--store", store}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return runCommand(t, cmd)
}

// TestOutputFilesHonourTheUmask: under umask 077 every file tapedeck
// writes for a person (an exported tape, HTML reports, JUnit XML, a
// pending NAME.jsonl.new) is its owner's alone; a replaced file keeps
// its mode.
func TestOutputFilesHonourTheUmask(t *testing.T) {
	t.Parallel()
	mini := recordMini(t)
	store, work := t.TempDir(), t.TempDir()
	if r := tapedeckUmask(t, store, nil, "import", mini); r.code != 0 {
		t.Fatalf("import: exit %d %s", r.code, r.stderr)
	}
	exported := filepath.Join(work, "out", "exported.jsonl")
	if r := tapedeckUmask(t, store, nil, "export", "mini", "-o", exported); r.code != 0 {
		t.Fatalf("export: exit %d %s", r.code, r.stderr)
	}
	tapes := filepath.Join(work, "tapes")
	if err := os.Mkdir(tapes, 0o755); err != nil {
		t.Fatal(err)
	}
	tape := filepath.Join(tapes, "mini.jsonl")
	b, err := os.ReadFile(mini)
	if err != nil || os.WriteFile(tape, b, 0o644) != nil {
		t.Fatalf("copy %s: %v", mini, err)
	}
	changed := []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=Howdy"}
	replayHTML := filepath.Join(work, "replay.html")
	if r := tapedeckUmask(t, store, changed, "replay", "--html", replayHTML, tape); r.code != 1 {
		t.Fatalf("replay --html of a changed label: exit %d %s", r.code, r.stderr)
	}
	junit, htmlDir := filepath.Join(work, "junit.xml"), filepath.Join(work, "html")
	if r := tapedeckUmask(t, store, changed, "test", "--update", "--junit", junit, "--html", htmlDir, tapes); r.code != 0 { // --update exits 0: the change is pending
		t.Fatalf("test --update --junit --html: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	files := []string{exported, replayHTML, junit, filepath.Join(htmlDir, "index.html"), tape + ".new"}
	err = filepath.WalkDir(htmlDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != files[3] {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) < 6 {
		t.Fatalf("the HTML folder: %v, files %q", err, files)
	}
	for _, p := range append(files, filepath.Dir(exported), htmlDir) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s: mode %04o under umask 077, want no bits for group or others", p, perm)
		}
	}

	// A file that is replaced keeps the mode it had.
	if err := os.Chmod(exported, 0o640); err != nil {
		t.Fatal(err)
	}
	if r := tapedeckUmask(t, store, nil, "export", "mini", "-o", exported); r.code != 0 {
		t.Fatalf("export again: exit %d %s", r.code, r.stderr)
	}
	if fi, err := os.Stat(exported); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("replaced %s: %v, mode %v; want 0640 kept", exported, err, fi.Mode())
	}
}
