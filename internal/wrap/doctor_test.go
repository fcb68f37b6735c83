package wrap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/shellword"
)

// TestDoctorRunsNothingTheFolderNames is the audit's attack: a cloned
// plugin folder whose launcher names a "tapedeck" that is the folder's own
// script, reached as /proc/self/cwd/pwn.sh (which passes an "absolute and
// executable" check), through a link to /proc, by its own path, or through
// a link into the folder; and one that is writable by anyone. Doctor runs
// none of them (each would create a marker), and calls each a problem.
func TestDoctorRunsNothingTheFolderNames(t *testing.T) {
	cases := map[string]func(t *testing.T, dir, pwn string) string{
		"/proc/self/cwd": func(t *testing.T, dir, pwn string) string { return "/proc/self/cwd/pwn.sh" },
		"link to /proc": func(t *testing.T, dir, pwn string) string {
			link := filepath.Join(t.TempDir(), "tapedeck")
			if err := os.Symlink("/proc/self/cwd/pwn.sh", link); err != nil {
				t.Fatal(err)
			}
			return link
		},
		"inside the folder": func(t *testing.T, dir, pwn string) string { return pwn },
		"link into the folder": func(t *testing.T, dir, pwn string) string {
			link := filepath.Join(t.TempDir(), "tapedeck")
			if err := os.Symlink(pwn, link); err != nil {
				t.Fatal(err)
			}
			return link
		},
		"writable by anyone": func(t *testing.T, dir, pwn string) string {
			p := filepath.Join(t.TempDir(), "tapedeck")
			b, _ := os.ReadFile(pwn)
			writeExec(t, p, string(b))
			if err := os.Chmod(p, 0o777); err != nil {
				t.Fatal(err)
			}
			return p
		},
	}
	for name, named := range cases {
		t.Run(name, func(t *testing.T) {
			dir, f, td, _ := doctorFolder(t)
			marker := filepath.Join(t.TempDir(), "ran")
			pwn := filepath.Join(dir, "pwn.sh")
			writeExec(t, pwn, "#!/bin/sh\necho ran >> "+shellword.Quote(marker)+"\necho tapedeck version pwned\n")
			launcher := filepath.Join(dir, LauncherFile)
			script, err := os.ReadFile(launcher)
			if err != nil {
				t.Fatal(err)
			}
			evil := named(t, dir, pwn)
			edited := strings.Replace(string(script), shellword.Quote(td), shellword.Quote(evil), 1)
			if edited == string(script) {
				t.Fatalf("launcher does not name %s:\n%s", td, script)
			}
			if err := os.WriteFile(launcher, []byte(edited), 0o755); err != nil {
				t.Fatal(err)
			}
			// The host's working folder is the plugin's: doctor run there too
			// would resolve /proc/self/cwd into it.
			t.Chdir(dir)
			r, err := Doctor(context.Background(), dir, f)
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(marker); err == nil {
				t.Errorf("doctor ran %s (%q)", evil, b)
			}
			ps := r.Problems()
			if len(ps) != 1 || !strings.HasPrefix(ps[0], "tapedeck "+evil+": ") || !strings.Contains(ps[0], "doctor does not run it") {
				t.Errorf("problems %q, want one tapedeck problem saying doctor does not run it", ps)
			}
		})
	}
}

// TestDoctorNamesThisTapedeck: a launcher naming the running binary is
// said to be this tapedeck, without running it.
func TestDoctorNamesThisTapedeck(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	d, p := tapedeckCheck(self, t.TempDir())
	if p != "" || !strings.Contains(d, "(this tapedeck; not run)") {
		t.Errorf("tapedeckCheck(itself) = %q, %q", d, p)
	}
}

// TestWrapAndDoctorAgreeOnIDAndFolder: the host's rule (the id equals the
// folder name) decides for both: wrap refuses a plugin that breaks it,
// doctor calls a wrapped folder that was renamed since a problem, with
// the same reason.
func TestWrapAndDoctorAgreeOnIDAndFolder(t *testing.T) {
	const rule = "the host starts a plugin only when its id equals its folder name"
	dir := plugin(t, "folder", `{"id":"other","main":"m.py","runtime":"python"}`, "m.py", 0o644)
	_, err := Prepare(context.Background(), dir, Options{Tapedeck: testTapedeck, Store: testStore})
	if !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), rule) || !strings.Contains(err.Error(), `"other" differs from its folder name "folder"`) {
		t.Errorf("wrap of a plugin whose id is not its folder's name: %v", err)
	}
	wrapped, f, _, _ := doctorFolder(t)
	renamed := filepath.Join(filepath.Dir(wrapped), "renamed")
	if err := os.Rename(wrapped, renamed); err != nil {
		t.Fatal(err)
	}
	r, err := Doctor(context.Background(), renamed, f)
	if err != nil {
		t.Fatal(err)
	}
	var idProblems []string
	for _, p := range r.Problems() {
		if strings.HasPrefix(p, "plugin id ") {
			idProblems = append(idProblems, p)
		}
	}
	if len(idProblems) != 1 || !strings.Contains(idProblems[0], rule) {
		t.Errorf("doctor of a renamed folder: problems %q, want one saying %q", r.Problems(), rule)
	}
}
