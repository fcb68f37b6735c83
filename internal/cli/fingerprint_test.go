package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// copyDir copies the regular files of src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fakeNode is a folder holding a "node" that says it is version v
// and otherwise runs the real node: a machine with another node.
func fakeNode(t *testing.T, v string) string {
	t.Helper()
	real, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo v" + v + "; exit 0; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "node"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFingerprintAndDrift: a recording stores the fingerprint (the node
// found on PATH and its version, the manifest, every file of the plugin
// folder but node_modules and .git, the vendored SDK's version); export,
// show and ls --json carry it. A replay that differs after main.mjs
// changed, node was upgraded and two files were added says so before the
// diff, and --json carries it; a clean replay with drift says nothing
// unless -v.
func TestFingerprintAndDrift(t *testing.T) {
	t.Parallel()
	plugin := filepath.Join(t.TempDir(), "clock-node")
	copyDir(t, filepath.Join("testdata", "plugins", "clock-node"), plugin)
	for _, f := range []string{"node_modules/left-pad/index.js", ".git/HEAD"} {
		os.MkdirAll(filepath.Join(plugin, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(plugin, f), []byte("x\n"), 0o644)
	}
	oldNode := fakeNode(t, "20.11.1")
	path := "PATH=" + oldNode + string(os.PathListSeparator) + os.Getenv("PATH")
	env := []string{path, "CLOCK_DIR=" + t.TempDir()}
	tp := recordClock(t, plugin, []string{"node", "main.mjs"}, []string{"--pin-clock"}, env)

	src := readTapeOrFatal(t, tp)
	fp := src.Meta.Fingerprint
	if fp == nil {
		t.Fatal("the tape has no fingerprint")
	}
	var files []string
	for f := range fp.Files {
		files = append(files, f)
	}
	if got, want := strings.Join(slices.Sorted(slices.Values(files)), " "), "agentty-plugin.json main.mjs sdk/index.mjs sdk/package.json"; got != want {
		t.Errorf("fingerprinted files %q, want %q", got, want)
	}
	if in := fp.Interpreter; in == nil || in.Name != "node" || in.Version != "20.11.1" || in.Path != filepath.Join(oldNode, "node") {
		t.Errorf("interpreter %+v, want node 20.11.1 at %s", in, filepath.Join(oldNode, "node"))
	}
	if m := fp.Manifest; m == nil || *m != (frame.ManifestID{ID: "clock-node", Version: "1.0.0", APIVersion: 1}) || fp.SDK != "0.3.1" || fp.Root != "." {
		t.Errorf("manifest %+v, SDK %q, root %q", fp.Manifest, fp.SDK, fp.Root)
	}

	store := t.TempDir()
	tapedeck(t, store, nil, nil, "import", tp)
	if r := tapedeck(t, store, nil, nil, "show", "last"); !strings.Contains(string(r.stdout), "\nfingerprint  "+fp.OS+"/"+fp.Arch+" · node 20.11.1 ("+filepath.Join(oldNode, "node")+") · clock-node 1.0.0 api 1 · SDK 0.3.1 · 4 files hashed in .\n") {
		t.Errorf("show does not print the fingerprint:\n%s", r.stdout)
	}
	if list := lsJSON(t, store); len(list) != 1 || list[0].Fingerprint == nil || len(list[0].Fingerprint.Files) != 4 {
		t.Errorf("ls --json lacks the fingerprint: %+v", list)
	}

	// Another node, main.mjs changed, two files added.
	newNode := fakeNode(t, "22.3.0")
	env[0] = "PATH=" + newNode + string(os.PathListSeparator) + os.Getenv("PATH")
	main := filepath.Join(plugin, "main.mjs")
	b, _ := os.ReadFile(main)
	os.WriteFile(main, []byte(strings.Replace(string(b), `"draft saved "`, `"draft kept "`, 1)), 0o644)
	os.WriteFile(filepath.Join(plugin, "notes.txt"), []byte("n\n"), 0o644)
	os.WriteFile(filepath.Join(plugin, "sdk", "extra.mjs"), []byte("export {}\n"), 0o644)
	r := tapedeck(t, t.TempDir(), nil, env, "replay", tp)
	want := "drift since the recording: main.mjs changed; node 20.11.1 → 22.3.0; 2 files added\nchanged   request ui/setPanel"
	if r.code != 1 || !strings.Contains(string(r.stdout), want) {
		t.Errorf("replay after drift: exit %d, want the drift before the diff (%q):\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	r = tapedeck(t, t.TempDir(), nil, env, "replay", tp, "--json")
	var j struct {
		Drift struct {
			Summary string   `json:"summary"`
			Added   []string `json:"filesAdded"`
		} `json:"drift"`
	}
	if err := json.Unmarshal(r.stdout, &j); err != nil || j.Drift.Summary != "main.mjs changed; node 20.11.1 → 22.3.0; 2 files added" || strings.Join(j.Drift.Added, " ") != "notes.txt sdk/extra.mjs" {
		t.Errorf("replay --json drift: %+v (%v)\n%s", j.Drift, err, r.stdout)
	}

	// Clean again, but drifted: silent unless -v.
	os.WriteFile(main, b, 0o644)
	r = tapedeck(t, t.TempDir(), nil, env, "replay", tp)
	if r.code != 0 || strings.Contains(string(r.stdout), "drift") {
		t.Errorf("clean replay with drift: exit %d, says:\n%s", r.code, r.stdout)
	}
	r = tapedeck(t, t.TempDir(), nil, env, "replay", "-v", tp)
	if r.code != 0 || !strings.Contains(string(r.stdout), "drift since the recording: node 20.11.1 → 22.3.0; 2 files added\n") {
		t.Errorf("clean replay -v with drift: exit %d, says:\n%s", r.code, r.stdout)
	}
}

// TestRecordNoFingerprint: --no-fingerprint stores none.
func TestRecordNoFingerprint(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	argv, fenv := fixture("echo")
	r := tapedeck(t, store, []byte("{}\n"), fenv, append([]string{"record", "--no-fingerprint"}, argv...)...)
	if r.code != 0 {
		t.Fatalf("record: %d %s", r.code, r.stderr)
	}
	if list := lsJSON(t, store); len(list) != 1 || list[0].Fingerprint != nil {
		t.Errorf("--no-fingerprint stored one: %+v", list[0].Fingerprint)
	}
}
