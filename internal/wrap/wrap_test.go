package wrap

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/internal/shellword"
)

const (
	testTapedeck = "/opt/tapedeck/bin/tapedeck"
	testStore    = "/var/lib/tapedeck store"
)

type spliceCase struct{ name, in, want string }

// spliceCases are manifests and what wrap must make of them: only the two
// values change (or, with no runtime, one member is inserted after '{').
func spliceCases() []spliceCase {
	return []spliceCase{
		{
			name: "pretty, as the fixtures",
			in: "{\n  \"id\": \"p\",\n  \"name\": \"P\",\n  \"version\": \"1.0.0\",\n  \"main\": \"main.py\",\n  \"runtime\": \"python\",\n" +
				"  \"permissions\": [\"prompt.inject\"],\n  \"contributes\": {\n    \"panel\": {\"title\": \"Hello\"}\n  }\n}\n",
			want: "{\n  \"id\": \"p\",\n  \"name\": \"P\",\n  \"version\": \"1.0.0\",\n  \"main\": \".tapedeck/launch\",\n  \"runtime\": \"executable\",\n" +
				"  \"permissions\": [\"prompt.inject\"],\n  \"contributes\": {\n    \"panel\": {\"title\": \"Hello\"}\n  }\n}\n",
		},
		{
			name: "compact, runtime before main",
			in:   `{"id":"p","runtime":"node","name":"P","main":"index.js"}`,
			want: `{"id":"p","runtime":"executable","name":"P","main":".tapedeck/launch"}`,
		},
		{
			name: "unusual whitespace",
			in:   "  { \"id\" :\"p\" ,\n\t\"main\"   :   \"m.js\"\t, \"runtime\":\"node\" }  \n\n",
			want: "  { \"id\" :\"p\" ,\n\t\"main\"   :   \".tapedeck/launch\"\t, \"runtime\":\"executable\" }  \n\n",
		},
		{
			name: "CRLF without runtime",
			in:   "{\r\n  \"id\": \"p\",\r\n  \"main\": \"m.js\"\r\n}\r\n",
			want: "{\r\n  \"runtime\": \"executable\",\r\n  \"id\": \"p\",\r\n  \"main\": \".tapedeck/launch\"\r\n}\r\n",
		},
		{
			name: "tabs without runtime, no final newline",
			in:   "{\n\t\"id\": \"p\",\n\t\"main\": \"m.js\"\n}",
			want: "{\n\t\"runtime\": \"executable\",\n\t\"id\": \"p\",\n\t\"main\": \".tapedeck/launch\"\n}",
		},
		{
			name: "compact without runtime",
			in:   `{"id":"p","main":"m.js"}`,
			want: `{"runtime":"executable","id":"p","main":".tapedeck/launch"}`,
		},
		{
			name: "spaced colons without runtime",
			in:   `{ "id" : "p", "main" : "m.js" }`,
			want: `{ "runtime" : "executable", "id" : "p", "main" : ".tapedeck/launch" }`,
		},
		{
			name: "unicode, escapes, nested look-alikes",
			in: `{"name":"Grüße 🎉 \u00e9 \"x\"","id":"p","contributes":{"main":"not me","runtime":"nor me"},` +
				`"m\u0061in":"m\u0061in.py","runtime":"python","description":"main: \"runtime\""}`,
			want: `{"name":"Grüße 🎉 \u00e9 \"x\"","id":"p","contributes":{"main":"not me","runtime":"nor me"},` +
				`"m\u0061in":".tapedeck/launch","runtime":"executable","description":"main: \"runtime\""}`,
		},
		{
			name: "executable already, main first",
			in:   `{"main":"bin/run.sh","permissions":[],"runtime":"executable","id":"p"}`,
			want: `{"main":".tapedeck/launch","permissions":[],"runtime":"executable","id":"p"}`,
		},
	}
}

func TestSplice(t *testing.T) {
	for _, c := range spliceCases() {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(c.in))
			if err != nil {
				t.Fatalf("ParseManifest: %v", err)
			}
			got, err := m.Splice(RuntimeExecutable, LauncherFile)
			if err != nil {
				t.Fatalf("Splice: %v", err)
			}
			if string(got) != c.want {
				t.Errorf("Splice(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestParseManifest(t *testing.T) {
	m, err := ParseManifest([]byte(spliceCases()[7].in))
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "p" || m.Main != "main.py" || m.Runtime != "python" || !m.HasRuntime || m.Name != `Grüße 🎉 é "x"` {
		t.Errorf("ParseManifest = %+v", m)
	}
	m, err = ParseManifest([]byte(`{"id":"p","Main":"x.js","main":"m.js"}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Main != "m.js" || m.HasRuntime || m.EffectiveRuntime() != RuntimeNode {
		t.Errorf("member names must match exactly, and no runtime means node: %+v", m)
	}
}

// nodeFinder is a Finder whose only node is an executable in a temp folder.
func nodeFinder(t *testing.T) (*Finder, string) {
	t.Helper()
	bin := t.TempDir()
	node := filepath.Join(bin, "node")
	writeExec(t, node, "#!/bin/sh\n")
	return &Finder{Dirs: []string{bin}}, node
}

func writeExec(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// plugin makes a plugin folder named id holding manifest and, when main is
// not "", that main file.
func plugin(t *testing.T, id, manifest, main string, mode fs.FileMode) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if main != "" {
		p := filepath.Join(dir, filepath.FromSlash(main))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestWrapUnwrapRoundTrip(t *testing.T) {
	for _, c := range spliceCases() {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			dir := plugin(t, "p", c.in, m.Main, 0o755)
			manifest := filepath.Join(dir, ManifestFile)
			os.Chmod(manifest, 0o640)
			finder, node := nodeFinder(t)
			p, err := Prepare(context.Background(), dir, Options{Tapedeck: testTapedeck, Store: testStore, Finder: finder})
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if err := p.Apply(); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			got, _ := os.ReadFile(manifest)
			if string(got) != c.want {
				t.Errorf("wrapped manifest\n got %q\nwant %q", got, c.want)
			}
			if fi, _ := os.Stat(manifest); fi.Mode().Perm() != 0o640 {
				t.Errorf("wrapped manifest mode %v, want 0640", fi.Mode().Perm())
			}
			if orig, _ := os.ReadFile(filepath.Join(dir, OrigFile)); string(orig) != c.in {
				t.Errorf("kept original %q, want %q", orig, c.in)
			}
			launcher := filepath.Join(dir, LauncherFile)
			fi, err := os.Stat(launcher)
			if err != nil || fi.Mode().Perm() != 0o755 {
				t.Fatalf("launcher: %v, mode %v; want 0755", err, fi.Mode())
			}
			script, _ := os.ReadFile(launcher)
			l, err := ParseLauncher(script)
			if err != nil {
				t.Fatalf("ParseLauncher: %v\n%s", err, script)
			}
			mainPath := filepath.Join(dir, filepath.FromSlash(m.Main))
			want := map[string][]string{
				RuntimeNode:       {node, mainPath},
				RuntimePython:     {"python3", mainPath},
				RuntimeExecutable: {mainPath},
			}[m.EffectiveRuntime()]
			wantLaunch := &Launch{Tapedeck: testTapedeck, Store: testStore, Name: "p", Command: want}
			if m.EffectiveRuntime() == RuntimeNode {
				wantLaunch.PathFirst = filepath.Dir(node) // the host puts node's folder first on PATH
			}
			if !reflect.DeepEqual(l, wantLaunch) {
				t.Errorf("launcher runs %+v, want %+v", l, wantLaunch)
			}

			u, err := Unwrap(dir, false)
			if err != nil {
				t.Fatalf("Unwrap: %v", err)
			}
			if !u.Restored || u.Overwrote || u.StateKept {
				t.Errorf("Unwrap = %+v", u)
			}
			if got, _ := os.ReadFile(manifest); string(got) != c.in {
				t.Errorf("unwrapped manifest\n got %q\nwant %q", got, c.in)
			}
			if fi, _ := os.Stat(manifest); fi.Mode().Perm() != 0o640 {
				t.Errorf("unwrapped manifest mode %v, want 0640", fi.Mode().Perm())
			}
			if _, err := os.Lstat(filepath.Join(dir, StateDir)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s still there after unwrap: %v", StateDir, err)
			}
		})
	}
}

func TestPrepareRefuses(t *testing.T) {
	const ok = `{"id":"p","main":"m.js","runtime":"python"}`
	cases := []struct {
		name     string
		manifest string // "" = no manifest
		main     string // file to create
		mode     fs.FileMode
		setup    func(t *testing.T, dir string)
		finder   *Finder
		want     error
		text     string
	}{
		{name: "no manifest", want: ErrNoManifest, text: "plugin folder"},
		{name: "not JSON", manifest: `{"id":`, want: ErrManifest, text: "not valid JSON"},
		{name: "byte order mark", manifest: "\xef\xbb\xbf" + ok, main: "m.js", want: ErrManifest},
		{name: "an array", manifest: `[]`, want: ErrManifest, text: "not a JSON object"},
		{name: "wasm", manifest: `{"id":"p","main":"p.wasm","runtime":"wasm"}`, main: "p.wasm", want: ErrWasm, text: "runs inside the host"},
		{name: "unknown runtime", manifest: `{"id":"p","main":"m.ts","runtime":"deno"}`, main: "m.ts", want: ErrRuntime, text: `"deno"`},
		{name: "runtime in capitals", manifest: `{"id":"p","main":"m.js","runtime":"Node"}`, main: "m.js", want: ErrRuntime},
		{name: "runtime not a string", manifest: `{"id":"p","main":"m.js","runtime":1}`, main: "m.js", want: ErrManifest, text: "not a string"},
		{name: "no main", manifest: `{"id":"p","runtime":"python"}`, want: ErrNoMain},
		{name: "empty main", manifest: `{"id":"p","main":"","runtime":"python"}`, want: ErrNoMain},
		{name: "main missing", manifest: ok, want: ErrNoMain, text: "m.js does not exist"},
		{name: "main is a folder", manifest: ok, setup: func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "m.js"), 0o755) }, want: ErrNoMain, text: "not a file"},
		{name: "main outside", manifest: `{"id":"p","main":"../m.js","runtime":"python"}`, want: ErrManifest, text: "inside the plugin folder"},
		{name: "main absolute", manifest: `{"id":"p","main":"/bin/sh","runtime":"executable"}`, want: ErrManifest},
		{name: "main twice", manifest: `{"id":"p","main":"m.js","main":"m.js","runtime":"python"}`, main: "m.js", want: ErrManifest, text: "twice"},
		{name: "no id", manifest: `{"main":"m.js","runtime":"python"}`, main: "m.js", want: ErrManifest, text: `"id"`},
		{name: "executable without exec bit", manifest: `{"id":"p","main":"run","runtime":"executable"}`, main: "run", mode: 0o644, want: ErrNoMain, text: "chmod +x"},
		{name: "wrapped", manifest: ok, main: "m.js", setup: func(t *testing.T, dir string) {
			os.Mkdir(filepath.Join(dir, StateDir), 0o755)
			os.WriteFile(filepath.Join(dir, OrigFile), []byte(ok), 0o644)
		}, want: ErrWrapped, text: "tapedeck unwrap"},
		{name: "wrapped, original lost", manifest: `{"id":"p","main":".tapedeck/launch","runtime":"executable"}`, main: ".tapedeck/launch", want: ErrWrapped, text: "by hand"},
		{name: "node not found", manifest: `{"id":"p","main":"m.js"}`, main: "m.js", finder: &Finder{Dirs: []string{"/nonexistent/bin"}, Home: "/nonexistent/home"},
			want: ErrNodeNotFound, text: "/nonexistent/bin, ~/.volta/bin, ~/.nvm/versions/node/*/bin: install node"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mode := c.mode
			if mode == 0 {
				mode = 0o755
			}
			dir := plugin(t, "p", c.manifest, c.main, mode)
			if c.manifest == "" {
				os.Remove(filepath.Join(dir, ManifestFile))
			}
			if c.setup != nil {
				c.setup(t, dir)
			}
			before := listing(t, dir)
			finder := c.finder
			if finder == nil {
				finder, _ = nodeFinder(t)
			}
			_, err := Prepare(context.Background(), dir, Options{Tapedeck: testTapedeck, Store: testStore, Finder: finder})
			if !errors.Is(err, c.want) {
				t.Fatalf("Prepare = %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.text) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name %s and say %q", err, dir, c.text)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is more than one line", err)
			}
			if after := listing(t, dir); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused wrap changed the folder: %v → %v", before, after)
			}
		})
	}
}

// listing is every file under dir with its contents.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			m[p] = string(b)
		}
		return nil
	})
	return m
}

func TestUnwrapEditedManifest(t *testing.T) {
	orig := "{\n  \"id\": \"p\",\n  \"version\": \"1.0.0\",\n  \"main\": \"m.py\",\n  \"runtime\": \"python\"\n}\n"
	dir := plugin(t, "p", orig, "m.py", 0o644)
	p, err := Prepare(context.Background(), dir, Options{Tapedeck: testTapedeck, Store: testStore})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, ManifestFile)
	edited := bytes.Replace(p.Wrapped, []byte("1.0.0"), []byte("1.0.1"), 1)
	os.WriteFile(manifest, edited, 0o644)
	if _, err := Unwrap(dir, false); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Unwrap of an edited manifest = %v, want ErrChanged naming --force", err)
	}
	if got, _ := os.ReadFile(manifest); !bytes.Equal(got, edited) {
		t.Fatal("a refused unwrap changed the manifest")
	}
	u, err := Unwrap(dir, true)
	if err != nil || !u.Overwrote {
		t.Fatalf("Unwrap --force = %+v, %v", u, err)
	}
	if got, _ := os.ReadFile(manifest); string(got) != orig {
		t.Errorf("after --force: %q, want the original", got)
	}
	if _, err := Unwrap(dir, false); !errors.Is(err, ErrNotWrapped) {
		t.Errorf("second Unwrap = %v, want ErrNotWrapped", err)
	}
}

func TestUnwrapKeepsOthersFiles(t *testing.T) {
	orig := `{"id":"p","main":"m.py","runtime":"python"}`
	dir := plugin(t, "p", orig, "m.py", 0o644)
	p, _ := Prepare(context.Background(), dir, Options{Tapedeck: testTapedeck, Store: testStore})
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, StateDir, "notes")
	os.WriteFile(other, []byte("mine"), 0o644)
	os.Remove(filepath.Join(dir, ManifestFile)) // gone: unwrap puts it back
	u, err := Unwrap(dir, false)
	if err != nil || !u.StateKept || !u.Restored {
		t.Fatalf("Unwrap = %+v, %v", u, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("unwrap removed a file it did not write: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ManifestFile)); string(got) != orig {
		t.Errorf("manifest %q, want %q", got, orig)
	}
}

func TestApplyTwice(t *testing.T) {
	dir := plugin(t, "p", `{"id":"p","main":"m.py","runtime":"python"}`, "m.py", 0o644)
	opts := Options{Tapedeck: testTapedeck, Store: testStore}
	p1, err1 := Prepare(context.Background(), dir, opts)
	p2, err2 := Prepare(context.Background(), dir, opts)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if err := p1.Apply(); err != nil {
		t.Fatal(err)
	}
	before := listing(t, dir)
	if err := p2.Apply(); !errors.Is(err, ErrWrapped) {
		t.Fatalf("second Apply = %v, want ErrWrapped", err)
	}
	if after := listing(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("the losing Apply changed the folder")
	}
}

func TestApplyRollsBack(t *testing.T) {
	orig := `{"id":"p","main":"m.py","runtime":"python"}`
	dir := plugin(t, "p", orig, "m.py", 0o644)
	p, err := Prepare(context.Background(), dir, Options{Tapedeck: testTapedeck, Store: testStore})
	if err != nil {
		t.Fatal(err)
	}
	// A folder where the launcher goes: the launcher cannot be written.
	os.MkdirAll(filepath.Join(dir, LauncherFile, "x"), 0o755)
	if err := p.Apply(); err == nil {
		t.Fatal("Apply succeeded with a folder in the launcher's place")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ManifestFile)); string(got) != orig {
		t.Errorf("manifest %q after a failed Apply", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, OrigFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("kept original left behind by a failed Apply: %v", err)
	}
}

func TestNodeLookupOrder(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	nvm := filepath.Join(home, ".nvm", "versions", "node")
	for _, v := range []string{"v9.11.2", "v18.1.0", "v20.3.1", "v20.10.0", "v20.10.0-rc.1"} {
		writeExec(t, filepath.Join(nvm, v, "bin", "node"), "")
	}
	os.MkdirAll(filepath.Join(nvm, "v21.0.0", "bin"), 0o755) // no node in it
	os.MkdirAll(filepath.Join(nvm, "system"), 0o755)         // not a version
	os.MkdirAll(filepath.Join(nvm, "v22.0.0", "bin"), 0o755)
	os.WriteFile(filepath.Join(nvm, "v22.0.0", "bin", "node"), nil, 0o644) // not executable
	os.MkdirAll(a, 0o755)
	os.MkdirAll(b, 0o755)
	loginShell := filepath.Join(root, "login-sh")
	writeExec(t, loginShell, "#!/bin/sh\n[ \"$1\" = -lc ] || exit 9\nPATH="+shellword.Quote(c)+"\nexport PATH\neval \"$2\"\n")

	f := &Finder{Home: home, Dirs: []string{a, b}, Shell: loginShell}
	steps := []struct {
		add       string // a node to add before this step
		wantPath  string
		wantWhere string
	}{
		{"", filepath.Join(nvm, "v20.10.0", "bin", "node"), "~/.nvm (v20.10.0)"},
		{filepath.Join(home, ".volta", "bin", "node"), filepath.Join(home, ".volta", "bin", "node"), "~/.volta/bin"},
		{filepath.Join(b, "node"), filepath.Join(b, "node"), b},
		{filepath.Join(a, "node"), filepath.Join(a, "node"), a},
		{filepath.Join(c, "node"), filepath.Join(c, "node"), "the login-shell PATH"},
	}
	for _, s := range steps {
		if s.add != "" {
			writeExec(t, s.add, "")
		}
		got, err := f.Node(context.Background())
		if err != nil {
			t.Fatalf("after adding %q: Node: %v", s.add, err)
		}
		if got.Path != s.wantPath || got.Where != s.wantWhere {
			t.Errorf("after adding %q: Node = %+v, want %s (%s)", s.add, got, s.wantPath, s.wantWhere)
		}
	}

	_, err := (&Finder{Home: filepath.Join(root, "empty"), Dirs: []string{a + "-none"}, Shell: "/bin/false"}).Node(context.Background())
	if !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("Node with nothing to find = %v, want ErrNodeNotFound", err)
	}
	for _, place := range []string{"login-shell PATH (/bin/false -lc 'command -v node')", a + "-none", "~/.volta/bin", "~/.nvm/versions/node/*/bin"} {
		if !strings.Contains(err.Error(), place) {
			t.Errorf("error %q does not say it looked in %s", err, place)
		}
	}
}

func TestNewestNVMComparesNumbers(t *testing.T) {
	cases := []struct {
		versions []string
		want     string
	}{
		{[]string{"v9.11.2", "v18.1.0", "v20.3.1"}, "v20.3.1"},
		{[]string{"v20.3.1", "v20.10.0"}, "v20.10.0"},
		{[]string{"v20.10.0-rc.1", "v20.9.0"}, "v20.10.0-rc.1"},
		{[]string{"v20.10.0-rc.1", "v20.10.0"}, "v20.10.0"},
		{[]string{"20.0.0", "v1.2"}, ""},
	}
	for _, c := range cases {
		dir := t.TempDir()
		for _, v := range c.versions {
			writeExec(t, filepath.Join(dir, v, "bin", "node"), "")
		}
		_, got, _ := newestNVM(dir)
		if got != c.want {
			t.Errorf("newestNVM(%v) = %q, want %q", c.versions, got, c.want)
		}
	}
}

func TestLoginPath(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join(dir, "node")
	writeExec(t, node, "")
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, nil, 0o644)
	home := filepath.Join(dir, "home")
	writeExec(t, filepath.Join(home, "bin", "node"), "")
	cases := []struct {
		name, body string
		want       string // "" = an error
	}{
		{"prints the path", "echo " + node, node},
		{"chatty profile", "echo 'Welcome!'; echo; echo " + node, node},
		{"HOME is the finder's", `echo "$HOME/bin/node"`, filepath.Join(home, "bin", "node")},
		{"not found", "exit 1", ""},
		{"not a path", "echo node", ""},
		{"not executable", "echo " + plain, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sh := filepath.Join(t.TempDir(), "sh")
			writeExec(t, sh, "#!/bin/sh\n"+c.body+"\n")
			got, err := (&Finder{Shell: sh, Home: home}).LoginPath(context.Background(), "node")
			if got != c.want || (err == nil) != (c.want != "") {
				t.Errorf("LoginPath = %q, %v; want %q", got, err, c.want)
			}
		})
	}
	t.Run("hangs", func(t *testing.T) {
		sh := filepath.Join(t.TempDir(), "sh")
		writeExec(t, sh, "#!/bin/sh\nexec sleep 30\n")
		start := time.Now()
		_, err := (&Finder{Shell: sh, Timeout: 100 * time.Millisecond}).LoginPath(context.Background(), "node")
		if err == nil || !strings.Contains(err.Error(), "no answer") {
			t.Errorf("LoginPath of a hanging shell = %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("a hanging login shell held LoginPath for %v", d)
		}
	})
}

// weird are strings that break naive quoting.
func weird() []string {
	return []string{
		"plain", "with space", "it's", "''", `"double"`, "$HOME", "`id`", "back\\slash",
		"new\nline", "tab\there", "-dash", "ünïcødé 🎉", "*?[~#;&|<>(){}", "",
	}
}

func TestLauncherRoundTrip(t *testing.T) {
	for _, w := range weird() {
		for _, pathFirst := range []string{"", "/n/" + w + "/bin"} {
			l := &Launch{Tapedeck: "/a/" + w + "/tapedeck", Store: "/s/" + w, Name: w, Command: []string{w, "/p/" + w + "/main.js"}, PathFirst: pathFirst}
			got, err := ParseLauncher(l.Script())
			if err != nil {
				t.Errorf("ParseLauncher(Script(%q)): %v\n%s", w, err, l.Script())
				continue
			}
			if !reflect.DeepEqual(got, l) {
				t.Errorf("ParseLauncher(Script(%q)) = %+v, want %+v", w, got, l)
			}
		}
	}
}

// TestLauncherUnderSh runs a launcher the way the host does (no shell of
// ours, no PATH, no arguments) around a fake tapedeck that prints the
// arguments it got: the real sh must hand over every word intact.
func TestLauncherUnderSh(t *testing.T) {
	root := filepath.Join(t.TempDir(), "it's a dir $HOME `x`")
	fake := filepath.Join(root, "bin", "tape deck")
	writeExec(t, fake, "#!/bin/sh\nprintf '%s\\0' \"$PATH\"\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done\n")
	nodeDir := filepath.Join(root, "node's bin")
	for _, c := range []struct{ pathFirst, hostPath, want string }{
		{"", "/host/bin", "/host/bin"},
		{nodeDir, "/host/bin", nodeDir + ":/host/bin"},
		{nodeDir, "", nodeDir}, // no empty entry, which would mean the current folder
	} {
		l := &Launch{Tapedeck: fake, Store: filepath.Join(root, "st'ore"), Name: "p", Command: append([]string{"/usr/bin/node"}, weird()...), PathFirst: c.pathFirst}
		launcher := filepath.Join(root, "plugin", ".tapedeck", "launch")
		writeExec(t, launcher, string(l.Script()))
		cmd := exec.Command(launcher)
		cmd.Env = []string{"PATH=" + c.hostPath}
		cmd.Dir = filepath.Join(root, "plugin")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run launcher: %v", err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if want := append([]string{c.want}, l.Argv()[1:]...); !slices.Equal(got, want) {
			t.Errorf("PATH first %q, host PATH %q: tapedeck got %q\nwant %q", c.pathFirst, c.hostPath, got, want)
		}
	}
}

func TestParseLauncherRefuses(t *testing.T) {
	good := string((&Launch{Tapedeck: "/t", Store: "/s", Name: "p", Command: []string{"/n", "/m"}}).Script())
	cases := map[string]string{
		"no shebang":         strings.TrimPrefix(good, "#!/bin/sh\n"),
		"bash":               strings.Replace(good, "#!/bin/sh", "#!/bin/bash", 1),
		"no exec":            "#!/bin/sh\n/t --store /s record --name p -- /n /m\n",
		"a variable":         strings.Replace(good, "'/t'", `"$TAPEDECK"`, 1),
		"not record":         strings.Replace(good, " record ", " replay ", 1),
		"no command":         "#!/bin/sh\nexec '/t' --store '/s' record --name 'p' --\n",
		"unterminated quote": "#!/bin/sh\nexec '/t --store\n",
		"PATH without tail":  strings.Replace(good, "exec ", "PATH='/n'\nexec ", 1),
		"PATH of a variable": strings.Replace(good, "exec ", "PATH=$HOME${PATH:+:$PATH}\nexport PATH\nexec ", 1),
	}
	for name, script := range cases {
		if l, err := ParseLauncher([]byte(script)); !errors.Is(err, ErrLauncher) {
			t.Errorf("%s: ParseLauncher = %+v, %v; want ErrLauncher", name, l, err)
		}
	}
}

// doctorFolder is a wrapped python plugin with a fake tapedeck, a store to
// be created, and a Finder whose login shell knows a fake python3.
func doctorFolder(t *testing.T) (dir string, f *Finder, td, python string) {
	t.Helper()
	root := t.TempDir()
	td = filepath.Join(root, "bin", "tapedeck")
	writeExec(t, td, "#!/bin/sh\necho tapedeck version test\n")
	python = filepath.Join(root, "py", "python3")
	writeExec(t, python, "")
	sh := filepath.Join(root, "login-sh")
	writeExec(t, sh, "#!/bin/sh\necho "+shellword.Quote(python)+"\n")
	f = &Finder{Shell: sh}
	dir = plugin(t, "hello", `{"id":"hello","main":"main.py","runtime":"python"}`, "main.py", 0o644)
	p, err := Prepare(context.Background(), dir, Options{Tapedeck: td, Store: filepath.Join(root, "store"), Finder: f})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	return dir, f, td, python
}

func TestDoctor(t *testing.T) {
	dir, f, _, python := doctorFolder(t)
	r, err := Doctor(context.Background(), dir, f)
	if err != nil {
		t.Fatal(err)
	}
	if ps := r.Problems(); len(ps) != 0 {
		t.Errorf("problems in a good folder: %q", ps)
	}
	if want := []string{filepath.Join(dir, LauncherFile)}; !slices.Equal(r.HostArgv, want) || r.Cwd != dir {
		t.Errorf("host runs %q in %s, want %q in %s", r.HostArgv, r.Cwd, want, dir)
	}
	var details []string
	for _, c := range r.Checks {
		details = append(details, c.What+" "+c.Detail)
	}
	all := strings.Join(details, "\n")
	for _, want := range []string{"python3 = " + python + " (the login-shell PATH)", "(an executable file; not run)", "created by the first session"} {
		if !strings.Contains(all, want) {
			t.Errorf("checks lack %q:\n%s", want, all)
		}
	}

	breaks := []struct {
		name  string
		brk   func(t *testing.T, dir string, f *Finder, td string)
		what  string
		words string
	}{
		{"launcher not executable", func(t *testing.T, dir string, f *Finder, td string) {
			os.Chmod(filepath.Join(dir, LauncherFile), 0o644)
		}, "launcher", "chmod 755"},
		{"launcher edited", func(t *testing.T, dir string, f *Finder, td string) {
			os.WriteFile(filepath.Join(dir, LauncherFile), []byte("#!/bin/sh\nexec node main.py\n"), 0o755)
		}, "launcher", "not a launcher"},
		{"tapedeck gone", func(t *testing.T, dir string, f *Finder, td string) { os.Remove(td) }, "tapedeck", "no such file"},
		{"store is a file", func(t *testing.T, dir string, f *Finder, td string) {
			os.WriteFile(filepath.Join(filepath.Dir(filepath.Dir(td)), "store"), nil, 0o644)
		}, "store", "not a folder"},
		{"python3 missing", func(t *testing.T, dir string, f *Finder, td string) {
			f.Shell = "/bin/false"
			t.Setenv("PATH", t.TempDir())
		}, "interpreter", "not found on the login-shell PATH or PATH"},
		{"main gone", func(t *testing.T, dir string, f *Finder, td string) { os.Remove(filepath.Join(dir, "main.py")) }, "main", "no such file"},
		{"manifest edited", func(t *testing.T, dir string, f *Finder, td string) {
			os.WriteFile(filepath.Join(dir, ManifestFile), []byte(`{"id":"hello","main":"main.py","runtime":"python"}`), 0o644)
		}, "manifest", "unrecorded"},
		{"original gone", func(t *testing.T, dir string, f *Finder, td string) { os.Remove(filepath.Join(dir, OrigFile)) }, "original", "by hand"},
	}
	for _, b := range breaks {
		t.Run(b.name, func(t *testing.T) {
			dir, f, td, _ := doctorFolder(t)
			b.brk(t, dir, f, td)
			r, err := Doctor(context.Background(), dir, f)
			if err != nil {
				t.Fatal(err)
			}
			ps := r.Problems()
			if len(ps) != 1 || !strings.HasPrefix(ps[0], b.what+" ") || !strings.Contains(ps[0], b.words) {
				t.Errorf("problems %q, want one %s problem saying %q", ps, b.what, b.words)
			}
		})
	}

	plain := plugin(t, "plain", `{"id":"plain","main":"m.py","runtime":"python"}`, "m.py", 0o644)
	if _, err := Doctor(context.Background(), plain, f); !errors.Is(err, ErrNotWrapped) || !strings.Contains(err.Error(), "tapedeck wrap") {
		t.Errorf("Doctor of an unwrapped plugin = %v, want ErrNotWrapped", err)
	}
	if _, err := Doctor(context.Background(), t.TempDir(), f); !errors.Is(err, ErrNoManifest) {
		t.Errorf("Doctor of an empty folder = %v, want ErrNoManifest", err)
	}
}

// TestWrapNeverFollowsSymlinks is the audit's attack: a cloned plugin folder
// with a link where wrap or unwrap writes, aimed at a file of the user's
// (their ~/.profile). Each is refused with the reason, and the target keeps
// its bytes and mode.
func TestWrapNeverFollowsSymlinks(t *testing.T) {
	const manifest = `{"id":"p","main":"m.py","runtime":"python"}`
	opts := Options{Tapedeck: testTapedeck, Store: testStore}
	type victim struct{ path, data string }
	newVictim := func(t *testing.T, data string) victim {
		v := victim{filepath.Join(t.TempDir(), ".profile"), data}
		if err := os.WriteFile(v.path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return v
	}
	intact := func(t *testing.T, v victim) {
		t.Helper()
		got, err := os.ReadFile(v.path)
		fi, _ := os.Stat(v.path)
		if err != nil || string(got) != v.data || fi.Mode().Perm() != 0o600 {
			t.Errorf("the link's target was changed: %q mode %v (%v), want %q mode 0600", got, fi.Mode().Perm(), err, v.data)
		}
	}
	wrapCases := []struct {
		name  string
		plant func(t *testing.T, dir string, v victim)
	}{
		{"launcher is a link", func(t *testing.T, dir string, v victim) {
			os.Mkdir(filepath.Join(dir, StateDir), 0o755)
			os.Symlink(v.path, filepath.Join(dir, LauncherFile))
		}},
		{"dangling launcher link", func(t *testing.T, dir string, v victim) {
			os.Mkdir(filepath.Join(dir, StateDir), 0o755)
			os.Symlink(v.path+".new", filepath.Join(dir, LauncherFile))
		}},
		{"state folder is a link", func(t *testing.T, dir string, v victim) {
			os.Symlink(filepath.Dir(v.path), filepath.Join(dir, StateDir))
		}},
		{"kept original is a link", func(t *testing.T, dir string, v victim) {
			os.Mkdir(filepath.Join(dir, StateDir), 0o755)
			os.Symlink(v.path, filepath.Join(dir, OrigFile))
		}},
		{"manifest is a link", func(t *testing.T, dir string, v victim) {
			os.Remove(filepath.Join(dir, ManifestFile))
			os.Symlink(v.path, filepath.Join(dir, ManifestFile))
		}},
	}
	for _, c := range wrapCases {
		t.Run("wrap/"+c.name, func(t *testing.T) {
			dir := plugin(t, "p", manifest, "m.py", 0o644)
			v := newVictim(t, manifest) // a valid manifest, so only the link can stop wrap
			c.plant(t, dir, v)
			p, err := Prepare(context.Background(), dir, opts)
			if err == nil {
				err = p.Apply()
			}
			if err == nil {
				t.Fatal("wrap went through a symlink")
			}
			if !errors.Is(err, ErrSymlink) && !errors.Is(err, ErrWrapped) {
				t.Errorf("error %v: want it to say a symlink is in the way", err)
			}
			intact(t, v)
			if _, err := os.Stat(v.path + ".new"); err == nil {
				t.Error("wrap created the dangling link's target")
			}
		})
	}
	unwrapCases := []struct {
		name  string
		plant func(t *testing.T, dir string, v victim)
	}{
		{"kept original is a link", func(t *testing.T, dir string, v victim) {
			os.Remove(filepath.Join(dir, OrigFile))
			os.Symlink(v.path, filepath.Join(dir, OrigFile))
		}},
		{"manifest is a link", func(t *testing.T, dir string, v victim) {
			os.Remove(filepath.Join(dir, ManifestFile))
			os.Symlink(v.path, filepath.Join(dir, ManifestFile))
		}},
		{"state folder is a link", func(t *testing.T, dir string, v victim) {
			// A folder elsewhere that looks wrapped: unwrap must not
			// remove its files through the link.
			other := filepath.Dir(v.path)
			os.Rename(filepath.Join(dir, OrigFile), filepath.Join(other, filepath.Base(OrigFile)))
			os.Rename(filepath.Join(dir, LauncherFile), filepath.Join(other, "launch"))
			os.Remove(filepath.Join(dir, StateDir))
			os.Symlink(other, filepath.Join(dir, StateDir))
		}},
	}
	for _, c := range unwrapCases {
		t.Run("unwrap/"+c.name, func(t *testing.T) {
			dir := plugin(t, "p", manifest, "m.py", 0o644)
			p, err := Prepare(context.Background(), dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Apply(); err != nil {
				t.Fatal(err)
			}
			v := newVictim(t, "export PATH=$HOME/bin:$PATH\n")
			c.plant(t, dir, v)
			before := listing(t, filepath.Dir(v.path))
			if _, err := Unwrap(dir, true); !errors.Is(err, ErrSymlink) {
				t.Errorf("Unwrap = %v, want ErrSymlink", err)
			}
			intact(t, v)
			if after := listing(t, filepath.Dir(v.path)); !reflect.DeepEqual(before, after) {
				t.Errorf("unwrap changed the folder behind the link: %v → %v", before, after)
			}
		})
	}
	t.Run("unwrap/launcher is a link", func(t *testing.T) {
		dir := plugin(t, "p", manifest, "m.py", 0o644)
		p, _ := Prepare(context.Background(), dir, opts)
		if err := p.Apply(); err != nil {
			t.Fatal(err)
		}
		v := newVictim(t, "secret\n")
		os.Remove(filepath.Join(dir, LauncherFile))
		os.Symlink(v.path, filepath.Join(dir, LauncherFile))
		if _, err := Unwrap(dir, false); err != nil {
			t.Fatalf("Unwrap = %v", err)
		}
		intact(t, v) // the link went, not its target
		if got, _ := os.ReadFile(filepath.Join(dir, ManifestFile)); string(got) != manifest {
			t.Errorf("manifest %q, want %q", got, manifest)
		}
	})
}

// TestChmodAdviceRunsAsPrinted: the advice for a main without its exec
// bit, run in sh as printed, makes the wrap go through, even when the
// main's name holds a space and a quote.
func TestChmodAdviceRunsAsPrinted(t *testing.T) {
	dir := plugin(t, "p", `{"id":"p","main":"it's run","runtime":"executable"}`, "it's run", 0o644)
	opts := Options{Tapedeck: testTapedeck, Store: testStore, Finder: &Finder{}}
	_, err := Prepare(context.Background(), dir, opts)
	if !errors.Is(err, ErrNoMain) {
		t.Fatalf("Prepare = %v, want %v", err, ErrNoMain)
	}
	_, advice, ok := strings.Cut(err.Error(), "directly: ")
	if !ok || !strings.HasPrefix(advice, "chmod +x ") {
		t.Fatalf("error %q gives no chmod +x advice", err)
	}
	if out, err := exec.Command("sh", "-c", advice).CombinedOutput(); err != nil {
		t.Fatalf("sh -c %q: %v\n%s", advice, err, out)
	}
	if _, err := Prepare(context.Background(), dir, opts); err != nil {
		t.Fatalf("Prepare after %s: %v", advice, err)
	}
}
