package datafolder

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// tree lists a folder: each entry's path, and a file's contents.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case rel == ".":
		case d.IsDir():
			out = append(out, rel+"/")
		case d.Type().IsRegular():
			b, _ := os.ReadFile(path)
			out = append(out, rel+"="+string(b))
		default:
			out = append(out, rel+"?")
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
}

// TestCopy: folders and regular files are copied with their modes and
// times; a link inside is left out and named, never followed; the source
// itself may be a link.
func TestCopy(t *testing.T) {
	src := t.TempDir()
	write(t, filepath.Join(src, "config.json"), `{"notes":"n"}`)
	write(t, filepath.Join(src, "n", "a.md"), "a")
	if err := os.Mkdir(filepath.Join(src, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, secret, "no")
	if err := os.Symlink(secret, filepath.Join(src, "n", "link")); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(filepath.Join(src, "config.json"), old, old)
	via := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(src, via); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	c, err := Copy(dst, via, Carried)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"config.json=" + `{"notes":"n"}`, "empty/", "n/", "n/a.md=a"}
	if got := tree(t, dst); !slices.Equal(got, want) {
		t.Errorf("copied %q, want %q", got, want)
	}
	if c.Files != 4 || c.Bytes != 14 || !slices.Equal(c.Left, []string{filepath.Join("n", "link")}) {
		t.Errorf("Copied = %+v", c)
	}
	fi, err := os.Stat(filepath.Join(dst, "config.json"))
	if err != nil || fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(old) {
		t.Errorf("config.json copied as %v %v, want 0640 %v", fi.Mode(), fi.ModTime(), old)
	}
	if _, err := Copy(dst, src, Carried); err == nil {
		t.Error("Copy into a folder that exists did not fail")
	}
}

// TestCopyBounded: past its limits a copy stops, says so, and leaves
// nothing behind.
func TestCopyBounded(t *testing.T) {
	src := t.TempDir()
	for i := range 5 {
		write(t, filepath.Join(src, string(rune('a'+i))), "12345")
	}
	for _, lim := range []Limits{{Bytes: 20}, {Files: 4}} {
		dst := filepath.Join(t.TempDir(), "copy")
		_, err := Copy(dst, src, lim)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), src+" holds more than") {
			t.Errorf("Copy within %+v: %v, want ErrTooLarge naming the folder", lim, err)
		}
		if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Copy within %+v left %s", lim, dst)
		}
	}
	if _, err := Copy(filepath.Join(t.TempDir(), "c"), src, Limits{Bytes: 25, Files: 5}); err != nil {
		t.Errorf("Copy at its limits: %v", err)
	}
}

// TestBesideAndRead: a tape's data is NAME.data beside it; Read takes
// what folders.json says, refuses a link and a bad variable name, and
// says nothing of a tape without data.
func TestBesideAndRead(t *testing.T) {
	for in, want := range map[string]string{"tapes/a.jsonl": "tapes/a.data", "b.tape": "b.data", "c": "c.data", "d.e.jsonl": "d.e.data"} {
		if got := Beside(in); got != want {
			t.Errorf("Beside(%q) = %q, want %q", in, got, want)
		}
	}
	dir := t.TempDir()
	tape := filepath.Join(dir, "kept.jsonl")
	if d, s, err := Read(tape); d != "" || s != nil || err != nil {
		t.Errorf("Read of a tape without data = %q, %v, %v", d, s, err)
	}
	data := Beside(tape)
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(tape); err == nil || !strings.Contains(err.Error(), StartFile) {
		t.Errorf("Read without %s: %v", StartFile, err)
	}
	start := &Start{Data: "/tmp/play-1", Env: map[string]string{"COSMICA_HOME": "/tmp/c", "A_B": "/x"}}
	if err := start.Write(data); err != nil {
		t.Fatal(err)
	}
	d, s, err := Read(tape)
	if err != nil || d != data || s.Data != "/tmp/play-1" || !slices.Equal(s.Vars(), []string{"A_B", "COSMICA_HOME"}) {
		t.Errorf("Read = %q, %+v, %v", d, s, err)
	}
	write(t, filepath.Join(data, StartFile), `{"env":{"X\nLD_PRELOAD":"/x"}}`)
	if _, _, err := Read(tape); err == nil || !strings.Contains(err.Error(), "names the variable") {
		t.Errorf("Read of a bad variable name: %v", err)
	}
	start.Write(data)
	if err := os.Symlink(t.TempDir(), DataDir(data)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(tape); !errors.Is(err, ErrLink) {
		t.Errorf("Read with data/ a link: %v", err)
	}
	other := filepath.Join(dir, "other.jsonl")
	if err := os.Symlink(data, Beside(other)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(other); !errors.Is(err, ErrLink) {
		t.Errorf("Read with NAME.data a link: %v", err)
	}
}

// TestFill: a folder the tape's data names but does not hold (git keeps
// no empty folder) starts empty.
func TestFill(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "run")
	if _, err := Fill(dst, filepath.Join(t.TempDir(), "absent")); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dst); len(got) != 0 {
		t.Errorf("filled from nothing: %q", got)
	}
}

// TestWatch: a folder the run opened something in, or wrote in, was
// used; one it left alone was not (where the system can tell).
func TestWatch(t *testing.T) {
	read, wrote, alone, listed := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(read, "sub", "config.json"), "{}")
	write(t, filepath.Join(alone, "x"), "x")
	w := Watch([]string{read, wrote, alone, listed})
	defer w.Close()
	if _, err := os.ReadFile(filepath.Join(read, "sub", "config.json")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(wrote, "n.md"), "n")
	os.ReadFile(filepath.Join(alone, "missing")) // a lookup that finds nothing is no use
	if _, err := os.ReadDir(listed); err != nil {
		t.Fatal(err)
	}
	got := w.Uses()
	want := []Use{Used, Used, Unused, Used}
	if runtime.GOOS != "linux" {
		want = []Use{Unknown, Used, Unknown, Unknown}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Uses = %v, want %v", got, want)
	}
}

// TestVarName: a variable a tape's data names is a folder's name there
// and a variable of the plugin's.
func TestVarName(t *testing.T) {
	for name, want := range map[string]bool{"COSMICA_HOME": true, "_x1": true, "a": true, "": false, "1A": false, "A-B": false, "A B": false, "../x": false, "X\nLD_PRELOAD": false, "É": false} {
		if got := VarName(name); got != want {
			t.Errorf("VarName(%q) = %v, want %v", name, got, want)
		}
	}
}
