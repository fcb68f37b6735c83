package fingerprint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTakeHashesWhatThePluginCouldLoad(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"plugin/agentty-plugin.json":           `{"id":"p","version":"2.0.0"}`,
		"plugin/src/main.py":                   "print()\n",
		"plugin/agentty_sdk/__init__.py":       "__version__ = '1.4.2'\n",
		"plugin/__pycache__/main.cpython.pyc":  "x",
		"plugin/src/__pycache__/x.cpython.pyc": "x",
		"plugin/.tapedeck/launch":              "x",
		"plugin/node_modules/a/index.js":       "x",
		"plugin/.git/HEAD":                     "x",
		"elsewhere.txt":                        "x",
	})
	fp, err := Take(context.Background(), Options{Command: []string{"/no/such/python3", "-X", "dev", "plugin/src/main.py"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for f := range fp.Files {
		files = append(files, f)
	}
	if got := strings.Join(slices.Sorted(slices.Values(files)), " "); got != "agentty-plugin.json agentty_sdk/__init__.py src/main.py" {
		t.Errorf("files %q", got)
	}
	if fp.Root != "plugin" || fp.SDK != "1.4.2" || fp.Manifest == nil || fp.Manifest.APIVersion != 1 || fp.Manifest.Version != "2.0.0" {
		t.Errorf("root %q, SDK %q, manifest %+v", fp.Root, fp.SDK, fp.Manifest)
	}
	if fp.Interpreter == nil || fp.Interpreter.Name != "python3" || len(fp.Notes) == 0 || !strings.Contains(fp.Notes[0], "python3 not found") {
		t.Errorf("interpreter %+v, notes %q", fp.Interpreter, fp.Notes)
	}
}

func TestTakeCapsTheFilesHashed(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"agentty-plugin.json": "{}", "a": "1", "b": "2", "c": "3", "main": "#!/bin/sh\n"})
	fp, err := Take(context.Background(), Options{Command: []string{"./main"}, Dir: dir, MaxFiles: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(fp.Files) != 2 || fp.Capped != 3 || fp.Interpreter != nil || !strings.Contains(strings.Join(fp.Notes, "\n"), "more than 2 files") {
		t.Errorf("capped at 2: %d files, %d capped, notes %q", len(fp.Files), fp.Capped, fp.Notes)
	}
}

func TestMainArg(t *testing.T) {
	cases := []struct {
		kind string
		args []string
		want string
	}{
		{"node", []string{"main.mjs"}, "main.mjs"},
		{"node", []string{"--require", "x.cjs", "--enable-source-maps", "dist/main.js", "--flag"}, "dist/main.js"},
		{"node", []string{"-e", "1"}, ""},
		{"node", []string{"run", "main.ts"}, "main.ts"},
		{"python", []string{"-u", "-X", "dev", "main.py"}, "main.py"},
		{"python", []string{"-m", "plugin"}, ""},
	}
	for _, c := range cases {
		if got := mainArg(c.kind, c.args); got != c.want {
			t.Errorf("mainArg(%s, %q) = %q, want %q", c.kind, c.args, got, c.want)
		}
	}
}

func TestCompare(t *testing.T) {
	rec := &frame.Fingerprint{OS: "linux", Arch: "amd64", Interpreter: &frame.Interpreter{Name: "node", Version: "20.11.1"},
		Manifest: &frame.ManifestID{ID: "p", Version: "1.0.0", APIVersion: 1}, SDK: "0.3.1",
		Files: map[string]string{"a": "1", "b": "1", "c": "1", "d": "1", "gone": "1"}}
	same := *rec
	if d := Compare(rec, &same); !d.None() || d.Summary != "" {
		t.Errorf("Compare(same) = %+v", d)
	}
	if Compare(nil, rec) != nil {
		t.Error("Compare(nil, …) is not nil")
	}
	live := &frame.Fingerprint{OS: "darwin", Arch: "arm64", Interpreter: &frame.Interpreter{Name: "node", Version: "22.3.0"},
		Manifest: &frame.ManifestID{ID: "p", Version: "1.1.0", APIVersion: 2}, SDK: "0.4.0",
		Files: map[string]string{"a": "2", "b": "2", "c": "2", "d": "2", "new": "1"}}
	want := "a, b, c and 1 more file changed; node 20.11.1 → 22.3.0; manifest version 1.0.0 → 1.1.0; apiVersion 1 → 2; SDK 0.3.1 → 0.4.0; linux/amd64 → darwin/arm64; new added; gone removed"
	if d := Compare(rec, live); d.Summary != want {
		t.Errorf("Compare summary\n got %q\nwant %q", d.Summary, want)
	}
	live.Capped = 10
	if d := Compare(rec, live); len(d.Added) != 0 || len(d.Removed) != 0 || len(d.Notes) != 1 {
		t.Errorf("capped: added %v, removed %v, notes %v", d.Added, d.Removed, d.Notes)
	}
}

// TestTakeWithoutAManifestHashesOnlyTheMain: a main in a folder that is not
// a plugin's (/tmp, a bin folder) is hashed alone.
func TestTakeWithoutAManifestHashesOnlyTheMain(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"tool": "#!/bin/sh\n", "other": "x", "sub/more": "y"})
	fp, err := Take(context.Background(), Options{Command: []string{filepath.Join(dir, "tool")}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(fp.Files) != 1 || fp.Files["tool"] == "" || fp.Manifest != nil || len(fp.Notes) != 1 {
		t.Errorf("files %v, manifest %v, notes %q", fp.Files, fp.Manifest, fp.Notes)
	}
}

// TestCompareLeavesOutTheTestsFiles: a tape recorded before the plugin's
// goldens ran from go test (its fingerprint, taken by an older tapedeck,
// hashed go.mod and the test file) drifts by the plugin's files alone:
// the go.mod and go.sum lines tapetest needs, the test files and the
// tapes in testdata/ are named on neither side.
func TestCompareLeavesOutTheTestsFiles(t *testing.T) {
	for _, c := range []struct {
		name      string
		rec, live map[string]string
		want      string
	}{
		{"the test added", map[string]string{"main.go": "1", "go.mod": "1"},
			map[string]string{"main.go": "1", "go.mod": "2", "go.sum": "1", "golden_test.go": "1", "testdata/tapes/greet.jsonl": "1"}, ""},
		{"the plugin changed too", map[string]string{"main.go": "1", "go.mod": "1", "plugin_test.go": "1"},
			map[string]string{"main.go": "2", "go.mod": "2", "lib/more.go": "1", "testdata/x": "1"}, "main.go changed; lib/more.go added"},
		{"a test file in a subfolder", map[string]string{"lib/a.go": "1", "lib/a_test.go": "1"},
			map[string]string{"lib/a.go": "1", "lib/a_test.go": "2", "lib/go.sum": "1"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &frame.Fingerprint{OS: "linux", Arch: "amd64", Files: c.rec}
			live := &frame.Fingerprint{OS: "linux", Arch: "amd64", Files: c.live}
			if got := Compare(rec, live).Summary; got != c.want {
				t.Errorf("drift %q, want %q", got, c.want)
			}
		})
	}
}
