package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/shellword"
	"github.com/tapedeck/tapedeck/internal/wrap"
)

// copyPlugin copies testdata/plugins/name into a temporary folder of the
// same name (the host wants the folder named after the plugin id).
func copyPlugin(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", "plugins", name)
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}

// hostEnv is this process's environment without PATH, TAPEDECK_STORE and
// AGENTTY_*: the host sets those itself.
func hostEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "TAPEDECK_STORE" || strings.HasPrefix(k, "AGENTTY_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// hostSession starts the wrapped plugin in dir as the Agentty host does:
// argv is the launcher alone, the working folder is the plugin folder, the
// AGENTTY_* variables are set and PATH is path. It drives one session
// (initialize, panel/open, the answer to the plugin's ui/setPanel,
// shutdown) and returns what it wrote and what it read on stdout.
func hostSession(t *testing.T, dir, id, path string) (sent, got []byte) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, filepath.FromSlash(wrap.LauncherFile)))
	cmd.Dir = dir
	cmd.Env = append(hostEnv(),
		"PATH="+path,
		"AGENTTY_PLUGIN_ID="+id,
		"AGENTTY_PLUGIN_DIR="+dir,
		"AGENTTY_PLUGIN_DATA="+data,
		"AGENTTY_VERSION=0.9.0-test",
		"AGENTTY_LANGUAGE=en",
		"AGENTTY_BIN=/Applications/Agentty.app/Contents/MacOS/agentty",
	)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("the host cannot start the launcher: %v", err)
	}
	// A wedged plugin must fail the test, not hang it: the watchdog kills
	// it, and the blocked read below then fails.
	watchdog := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer watchdog.Stop()

	var in, out bytes.Buffer
	br := bufio.NewReader(stdout)
	send := func(line string) {
		in.WriteString(line + "\n")
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write to the plugin: %v (stderr: %s)", err, stderr.String())
		}
	}
	read := func() string {
		line, err := br.ReadString('\n')
		out.WriteString(line)
		if err != nil {
			t.Fatalf("read the plugin's stdout: %v (stderr: %s)", err, stderr.String())
		}
		return strings.TrimSuffix(line, "\n")
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"0.9.0-test"},` +
		`"plugin":{"id":"` + id + `","name":"Hello","version":"1.0.0","dir":"` + dir + `","dataDir":"` + data + `"},"language":"en","context":{}}}`)
	send(`{"jsonrpc":"2.0","method":"panel/open","params":{"context":{}}}`)
	if got, want := read(), `{"jsonrpc":"2.0","id":1,"result":{"sdkVersion":"fixture-1","apiVersion":1}}`; got != want {
		t.Fatalf("first line %q, want the initialize answer %q", got, want)
	}
	if got := read(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":`) {
		t.Fatalf("second line %q, want the plugin's ui/setPanel request", got)
	}
	send(`{"jsonrpc":"2.0","id":1,"result":null}`)
	send(`{"jsonrpc":"2.0","method":"shutdown","params":{}}`)
	stdin.Close()
	rest, err := io.ReadAll(br)
	out.Write(rest)
	if err != nil {
		t.Fatalf("read the plugin's stdout: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the wrapped plugin ended with %v (stderr: %s)", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "initialized "+id) {
		t.Errorf("the plugin's stderr did not come through: %q", stderr.String())
	}
	return in.Bytes(), out.Bytes()
}

// checkRecorded asserts that the store holds the one session hostSession
// drove, under the plugin id, with command, cwd and traffic intact.
func checkRecorded(t *testing.T, store, dir, id string, command []string, sent, got []byte) {
	t.Helper()
	list := lsJSON(t, store)
	if len(list) != 1 {
		t.Fatalf("%d sessions in the store, want 1", len(list))
	}
	s := list[0]
	if s.Name != id || s.Plugin.ID != id || s.Status != frame.StatusComplete || s.Exit.Code == nil || *s.Exit.Code != 0 {
		t.Errorf("session name %q, plugin %q, status %s, exit %+v; want %s, %s, complete, 0", s.Name, s.Plugin.ID, s.Status, s.Exit, id, id)
	}
	if !slices.Equal(s.Command, command) {
		t.Errorf("recorded command %q, want %q", s.Command, command)
	}
	if realPath(t, s.Cwd) != realPath(t, dir) {
		t.Errorf("recorded cwd %s, want the plugin folder %s", s.Cwd, dir)
	}
	if s.Env["AGENTTY_PLUGIN_ID"] != id {
		t.Errorf("recorded AGENTTY_PLUGIN_ID %q, want %q", s.Env["AGENTTY_PLUGIN_ID"], id)
	}
	_, frames := exported(t, store, id)
	if in := stream(frames, frame.In); !bytes.Equal(in, sent) {
		t.Errorf("stdin frames\n%s\nwant what the host sent\n%s", in, sent)
	}
	if out := stream(frames, frame.Out); !bytes.Equal(out, got) {
		t.Errorf("stdout frames\n%s\nwant what the host read\n%s", out, got)
	}
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// unwrapRestores runs unwrap and checks the manifest is orig again and the
// launcher is gone.
func unwrapRestores(t *testing.T, store, dir string, orig []byte) {
	t.Helper()
	r := tapedeck(t, store, nil, nil, "unwrap", dir)
	if r.code != 0 {
		t.Fatalf("unwrap: exit %d: %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, wrap.ManifestFile)); !bytes.Equal(got, orig) {
		t.Errorf("manifest after unwrap\n%q\nwant the original\n%q", got, orig)
	}
	if _, err := os.Lstat(filepath.Join(dir, wrap.StateDir)); err == nil {
		t.Errorf("%s is still there after unwrap", wrap.StateDir)
	}
}

func TestWrapAsTheHostPython(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH: the python fixture plugin cannot run")
	}
	// The host's PATH holds python3 (its login PATH does) but not node: a
	// folder with only a link to the real interpreter (not a version
	// manager's shim, which would need a shell on PATH).
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	bin := t.TempDir()
	if err := os.Symlink(strings.TrimSpace(string(exe)), filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}

	dir := copyPlugin(t, "hello-python")
	store := t.TempDir()
	orig, _ := os.ReadFile(filepath.Join(dir, wrap.ManifestFile))
	r := tapedeck(t, store, nil, nil, "wrap", dir)
	if r.code != 0 || len(r.stderr) != 0 {
		t.Fatalf("wrap: exit %d: %s", r.code, r.stderr)
	}
	script, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(wrap.LauncherFile)))
	if err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "main.py")
	wantExec := "exec " + shellword.Quote(tapedeckBin) + " --store " + shellword.Quote(store) + " record --name 'hello-python' -- 'python3' " + shellword.Quote(main) + "\n"
	if !strings.HasSuffix(string(script), wantExec) {
		t.Errorf("launcher\n%s\nwant it to end with\n%s", script, wantExec)
	}

	sent, got := hostSession(t, dir, "hello-python", bin)
	checkRecorded(t, store, dir, "hello-python", []string{"python3", main}, sent, got)

	r = tapedeck(t, store, nil, []string{"PATH=" + bin + ":" + os.Getenv("PATH")}, "doctor", dir)
	if r.code != 0 {
		t.Errorf("doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if want := "the host will run: " + filepath.Join(dir, ".tapedeck", "launch"); !strings.Contains(string(r.stdout), want) {
		t.Errorf("doctor says\n%s\nwant %q", r.stdout, want)
	}
	unwrapRestores(t, store, dir, orig)
}

func TestWrapAsTheHostNode(t *testing.T) {
	t.Parallel()
	// At wrap time node is on PATH only through bin (see nodeThroughBin).
	bin, home, shell, node := nodeThroughBin(t)

	dir := copyPlugin(t, "hello-node")
	store := t.TempDir()
	orig, _ := os.ReadFile(filepath.Join(dir, wrap.ManifestFile))
	r := tapedeck(t, store, nil, []string{"HOME=" + home, "SHELL=" + shell, "PATH=" + bin + ":" + os.Getenv("PATH")}, "wrap", dir)
	if r.code != 0 || len(r.stderr) != 0 {
		t.Fatalf("wrap: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(string(r.stdout), "login-shell PATH") {
		t.Errorf("wrap does not say where it found node:\n%s", r.stdout)
	}
	main := filepath.Join(dir, "main.mjs")
	script, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(wrap.LauncherFile)))
	if want := "-- " + shellword.Quote(node) + " " + shellword.Quote(main) + "\n"; !strings.HasSuffix(string(script), want) {
		t.Errorf("launcher\n%s\nwant it to run the node wrap found: %s", script, want)
	}
	if want := "\nPATH=" + shellword.Quote(bin) + "${PATH:+:$PATH}\nexport PATH\n"; !strings.Contains(string(script), want) {
		t.Errorf("launcher\n%s\nwant node's folder first on PATH, as the host does: %s", script, want)
	}

	// The host's PATH has neither bin nor the folder of the real node.
	hostPath := t.TempDir()
	sent, got := hostSession(t, dir, "hello-node", hostPath)
	checkRecorded(t, store, dir, "hello-node", []string{node, main}, sent, got)

	r = tapedeck(t, store, nil, []string{"HOME=" + home, "SHELL=" + shell}, "doctor", dir)
	if r.code != 0 || !strings.Contains(string(r.stdout), node) {
		t.Errorf("doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	unwrapRestores(t, store, dir, orig)
}

func TestWrapRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, manifest string
		say            string
	}{
		{"wasm", `{"id":"p","main":"p.wasm","runtime":"wasm"}`, "wasm plugin: it runs inside the host"},
		{"unknown runtime", `{"id":"p","main":"main.ts","runtime":"deno"}`, `unknown runtime "deno"`},
		{"no main", `{"id":"p","runtime":"python"}`, "no main"},
		{"main missing", `{"id":"p","main":"gone.py","runtime":"python"}`, "gone.py does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			os.Mkdir(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "p.wasm"), nil, 0o644)
			os.WriteFile(filepath.Join(dir, "main.ts"), nil, 0o644)
			os.WriteFile(filepath.Join(dir, wrap.ManifestFile), []byte(c.manifest), 0o644)
			r := tapedeck(t, t.TempDir(), nil, nil, "wrap", dir)
			lines := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
			if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], c.say) || !strings.Contains(lines[0], dir) {
				t.Errorf("wrap: exit %d, stderr %q; want exit 1 and one line naming %s and saying %q", r.code, r.stderr, dir, c.say)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, wrap.ManifestFile)); string(got) != c.manifest {
				t.Errorf("a refused wrap changed the manifest to %q", got)
			}
			if _, err := os.Lstat(filepath.Join(dir, wrap.StateDir)); err == nil {
				t.Errorf("a refused wrap left %s", wrap.StateDir)
			}
		})
	}
}

func TestWrapDryRunTwiceAndUsage(t *testing.T) {
	t.Parallel()
	dir := copyPlugin(t, "hello-python")
	store := t.TempDir()
	orig, _ := os.ReadFile(filepath.Join(dir, wrap.ManifestFile))

	r := tapedeck(t, store, nil, nil, "wrap", "--dry-run", dir)
	if r.code != 0 {
		t.Fatalf("wrap --dry-run: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"#!/bin/sh", "exec " + shellword.Quote(tapedeckBin), `runtime "python" → "executable"`, "nothing changed"} {
		if !strings.Contains(string(r.stdout), want) {
			t.Errorf("dry run output lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, wrap.StateDir)); err == nil {
		t.Error("a dry run wrote the launcher")
	}

	r = tapedeck(t, store, nil, nil, "wrap", dir, "extra")
	if r.code != 2 {
		t.Errorf("wrap with two folders: exit %d, want 2 (%s)", r.code, r.stderr)
	}

	// No DIR: the current folder.
	cmd := exec.Command(tapedeckBin, "--store", store, "wrap")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wrap in the plugin folder: %v\n%s", err, out)
	}
	r = tapedeck(t, store, nil, nil, "wrap", dir)
	if r.code != 1 || !strings.Contains(string(r.stderr), "already wrapped") || !strings.Contains(string(r.stderr), "tapedeck unwrap") {
		t.Errorf("second wrap: exit %d, stderr %q; want 1 and already wrapped", r.code, r.stderr)
	}
	unwrapRestores(t, store, dir, orig)
	r = tapedeck(t, store, nil, nil, "unwrap", dir)
	if r.code != 1 || !strings.Contains(string(r.stderr), "not wrapped") {
		t.Errorf("unwrap of an unwrapped plugin: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestUnwrapEditedManifestNeedsForce(t *testing.T) {
	t.Parallel()
	dir := copyPlugin(t, "hello-python")
	store := t.TempDir()
	orig, _ := os.ReadFile(filepath.Join(dir, wrap.ManifestFile))
	if r := tapedeck(t, store, nil, nil, "wrap", dir); r.code != 0 {
		t.Fatalf("wrap: exit %d: %s", r.code, r.stderr)
	}
	manifest := filepath.Join(dir, wrap.ManifestFile)
	wrapped, _ := os.ReadFile(manifest)
	os.WriteFile(manifest, bytes.Replace(wrapped, []byte(`"1.0.0"`), []byte(`"1.0.1"`), 1), 0o644)
	r := tapedeck(t, store, nil, nil, "unwrap", dir)
	advice := adviceCommand.FindString(string(r.stderr))
	if r.code != 1 || !strings.HasPrefix(advice, "tapedeck unwrap --force '") {
		t.Fatalf("unwrap of an edited manifest: exit %d, stderr %q; want 1 naming tapedeck unwrap --force DIR", r.code, r.stderr)
	}
	// The advice, run as printed.
	sh := exec.Command("sh", "-c", advice)
	sh.Dir = t.TempDir()
	sh.Env = append(os.Environ(), "TAPEDECK_STORE="+store, "PATH="+filepath.Dir(tapedeckBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("sh -c %q: %v\n%s", advice, err, out)
	}
	if got, _ := os.ReadFile(manifest); !bytes.Equal(got, orig) {
		t.Errorf("manifest after unwrap --force is not the original")
	}
}

func TestDoctorFindsProblems(t *testing.T) {
	t.Parallel()
	dir := copyPlugin(t, "hello-python")
	store := t.TempDir()
	if r := tapedeck(t, store, nil, nil, "wrap", dir); r.code != 0 {
		t.Fatalf("wrap: exit %d: %s", r.code, r.stderr)
	}
	launcher := filepath.Join(dir, filepath.FromSlash(wrap.LauncherFile))
	os.Chmod(launcher, 0o644)
	os.Remove(filepath.Join(dir, "main.py"))
	r := tapedeck(t, store, nil, nil, "doctor", dir)
	if r.code != 1 {
		t.Fatalf("doctor: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "launcher "+launcher) || !strings.Contains(lines[0], "chmod 755") ||
		!strings.Contains(lines[1], "main ") || !strings.Contains(lines[2], "2 problem(s)") {
		t.Errorf("doctor stderr:\n%s\nwant a launcher line, a main line and a summary", r.stderr)
	}

	plain := copyPlugin(t, "hello-node")
	r = tapedeck(t, store, nil, nil, "doctor", plain)
	if r.code != 1 || !strings.Contains(string(r.stderr), "not wrapped: run tapedeck wrap") {
		t.Errorf("doctor of an unwrapped plugin: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestWrapRefusesSymlinkedLauncher is the audit's attack end to end: a
// plugin folder that ships .tapedeck/launch as a link to the user's
// ~/.profile. wrap says why in one line, exits 1, and the profile keeps its
// bytes and mode; unwrap of a folder whose kept original is such a link
// refuses too.
func TestWrapRefusesSymlinkedLauncher(t *testing.T) {
	t.Parallel()
	dir := copyPlugin(t, "hello-python")
	profile := filepath.Join(t.TempDir(), ".profile")
	const data = "export PATH=$HOME/bin:$PATH\n"
	os.WriteFile(profile, []byte(data), 0o644)
	os.Mkdir(filepath.Join(dir, wrap.StateDir), 0o755)
	os.Symlink(profile, filepath.Join(dir, wrap.LauncherFile))
	orig, _ := os.ReadFile(filepath.Join(dir, wrap.ManifestFile))

	r := tapedeck(t, t.TempDir(), nil, nil, "wrap", dir)
	lines := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
	if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "symbolic link") || !strings.Contains(lines[0], profile) {
		t.Errorf("wrap: exit %d, stderr %q; want exit 1 and one line naming the link and its target", r.code, r.stderr)
	}
	got, _ := os.ReadFile(profile)
	fi, _ := os.Stat(profile)
	if string(got) != data || fi.Mode().Perm() != 0o644 {
		t.Errorf("~/.profile is now %q mode %v", got, fi.Mode().Perm())
	}
	if now, _ := os.ReadFile(filepath.Join(dir, wrap.ManifestFile)); !bytes.Equal(now, orig) {
		t.Errorf("a refused wrap changed the manifest to %q", now)
	}

	os.Remove(filepath.Join(dir, wrap.LauncherFile))
	os.Symlink(profile, filepath.Join(dir, wrap.OrigFile))
	r = tapedeck(t, t.TempDir(), nil, nil, "unwrap", "--force", dir)
	if r.code != 1 || !strings.Contains(string(r.stderr), "symbolic link") {
		t.Errorf("unwrap: exit %d, stderr %q; want exit 1 saying a symbolic link is in the way", r.code, r.stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, wrap.ManifestFile)); !bytes.Equal(now, orig) {
		t.Errorf("unwrap wrote the link's target into the manifest: %q", now)
	}
}

// adviceCommand matches the commands a line of advice names, in order:
// tapedeck unwrap [--force] DIR, tapedeck wrap DIR and chmod 755 PATH,
// each with its one quoted word.
var adviceCommand = regexp.MustCompile(`(?:tapedeck unwrap --force|tapedeck unwrap|tapedeck wrap|chmod 755) '(?:[^']|'\\'')*'`)

// TestDoctorAdviceRunsAsPrinted breaks a wrapped plugin four ways and, each
// time, runs what doctor says to do exactly as printed, in sh, from another
// folder (the folder's path has a space and a quote): doctor then passes.
func TestDoctorAdviceRunsAsPrinted(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skipf("python3 is not installed: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "Jo's plugins", "hello-python")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "plugins", "hello-python"))); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	elsewhere := t.TempDir()
	env := append(os.Environ(), "TAPEDECK_STORE="+store, "PATH="+filepath.Dir(tapedeckBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if r := tapedeck(t, store, nil, nil, "wrap", dir); r.code != 0 {
		t.Fatalf("wrap: exit %d: %s", r.code, r.stderr)
	}
	manifest := filepath.Join(dir, wrap.ManifestFile)
	launcher := filepath.Join(dir, filepath.FromSlash(wrap.LauncherFile))
	orig, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(wrap.OrigFile)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		breakIt func()
		want    []string // the commands' names, in order
	}{
		{"launcher unreadable as a launcher", func() { os.WriteFile(launcher, []byte("#!/bin/sh\nexec true\n"), 0o755) },
			[]string{"tapedeck unwrap", "tapedeck wrap"}},
		{"launcher not executable", func() { os.Chmod(launcher, 0o644) }, []string{"chmod 755"}},
		{"manifest put back by hand", func() { os.WriteFile(manifest, orig, 0o644) }, []string{"tapedeck unwrap", "tapedeck wrap"}},
		{"manifest changed by hand", func() {
			os.WriteFile(manifest, bytes.Replace(orig, []byte(`"version"`), []byte(`"description": "mine", "version"`), 1), 0o644)
		}, []string{"tapedeck unwrap --force", "tapedeck wrap"}},
	} {
		c.breakIt()
		r := tapedeck(t, store, nil, nil, "doctor", dir)
		if r.code != 1 {
			t.Fatalf("%s: doctor exit %d, want 1\n%s%s", c.name, r.code, r.stdout, r.stderr)
		}
		cmds := adviceCommand.FindAllString(string(r.stderr), -1)
		if len(cmds) != len(c.want) {
			t.Fatalf("%s: doctor advises %q, want %v:\n%s", c.name, cmds, c.want, r.stderr)
		}
		for i, cmdline := range cmds {
			if !strings.HasPrefix(cmdline, c.want[i]+" '") {
				t.Fatalf("%s: advice %d is %q, want %s", c.name, i, cmdline, c.want[i])
			}
			sh := exec.Command("sh", "-c", cmdline)
			sh.Dir, sh.Env = elsewhere, env
			if out, err := sh.CombinedOutput(); err != nil {
				t.Fatalf("%s: sh -c %q: %v\n%s", c.name, cmdline, err, out)
			}
		}
		if r := tapedeck(t, store, nil, nil, "doctor", dir); r.code != 0 {
			t.Fatalf("%s: after %q doctor exits %d:\n%s%s", c.name, cmds, r.code, r.stdout, r.stderr)
		}
	}
}
