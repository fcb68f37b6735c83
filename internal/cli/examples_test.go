package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/internal/race"
)

// helpExamples are the lines `tapedeck NAME --help` prints under
// "Examples:", as printed.
func helpExamples(t *testing.T, name string) []string {
	t.Helper()
	out, err := exec.Command(tapedeckBin, name, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("tapedeck %s --help: %v\n%s", name, err, out)
	}
	_, section, ok := strings.Cut(string(out), "\n   Examples:\n")
	if !ok {
		t.Fatalf("tapedeck %s --help shows no examples:\n%s", name, out)
	}
	var lines []string
	for _, l := range strings.Split(section, "\n") {
		cmd, ok := strings.CutPrefix(l, "     $ ")
		if !ok {
			break
		}
		lines = append(lines, cmd)
	}
	return lines
}

// changedPlugin marks an example that follows a change to the plugin: the
// test changes the plugin's panel title (hello-node's FIXTURE_LABEL) for
// it, as the user would have edited the code.
const changedPlugin = "# once the plugin changed"

// TestHelpExamplesRunAsShown runs every example of every command's help,
// exactly as --help prints it, in bash, in a copy of hello-node (a
// plugin's folder with its host script) with a store of its own: each
// exits 0. One marked changedPlugin runs with the plugin's panel title
// changed, and replay --update there leaves the pending change that
// review's examples then list and reject. play's examples run until the
// page's address is printed, and are then ended with Ctrl-C (SIGINT), as
// a person ends them.
func TestHelpExamplesRunAsShown(t *testing.T) {
	t.Parallel()
	if race.Enabled {
		t.Skip("the examples repeat what each command's tests cover; under the race detector they only cost time")
	}
	for _, tool := range []string{"node", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	dir := filepath.Join(t.TempDir(), "hello-node")
	copyDir(t, filepath.Join("testdata", "plugins", "hello-node"), dir)
	var vars []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "CI" && k != "TAPEDECK_STORE" && k != "BROWSER" && k != "FIXTURE_LABEL" {
			vars = append(vars, kv)
		}
	}
	vars = append(vars, "TAPEDECK_STORE="+t.TempDir(), "HOME="+t.TempDir(), "BROWSER=true", pathWithTapedeck())
	covered := map[string]bool{}
	for _, name := range examplesOrder() {
		covered[name] = true
		for _, line := range helpExamples(t, name) {
			if !strings.HasPrefix(line, "tapedeck "+name) && !strings.Contains(line, " tapedeck "+name) {
				t.Errorf("tapedeck %s --help shows %q, an example of another command", name, line)
			}
			if name == "play" {
				runUntilServed(t, dir, vars, line)
				continue
			}
			cmd := exec.Command("bash", "-c", line)
			cmd.Dir, cmd.Env = dir, vars
			if strings.Contains(line, changedPlugin) {
				cmd.Env = append(slices.Clip(vars), "FIXTURE_LABEL=Howdy")
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s (tapedeck %s --help): %v\n%s", line, name, err, out)
			}
			if name == "replay" && strings.Contains(line, "--update") {
				if _, err := os.Stat(filepath.Join(dir, "tapes", "greet.jsonl.new")); err != nil {
					t.Errorf("%s with the plugin changed wrote no pending change: %v", line, err)
				}
			}
		}
	}
	for _, c := range newApp(&env{}).Commands {
		if !covered[c.Name] {
			t.Errorf("tapedeck %s has no examples in the order the test runs them (examplesOrder)", c.Name)
		}
	}
}

// runUntilServed runs line (a tapedeck play) in bash in its own process
// group until it prints the page's address, then ends it with SIGINT and
// wants it to exit 0 within its grace periods.
func runUntilServed(t *testing.T, dir string, env []string, line string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan bool, 1)
	read := make(chan struct{}) // closed when the reader below is done
	go func() {
		defer close(read)
		address := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=`)
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if !ok && address.MatchString(sc.Text()) {
				ok = true
				served <- true
			}
		}
		if !ok {
			served <- false
		}
	}()
	select {
	case ok := <-served:
		if !ok {
			t.Errorf("%s ended without serving the page:\n%s", line, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Errorf("%s printed no address within 60 s:\n%s", line, stderr.String())
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	select { // all of stdout read before Wait closes the pipe
	case <-read:
	case <-time.After(30 * time.Second):
		t.Errorf("%s still runs 30 s after Ctrl-C: killed", line)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-read
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("%s ended by Ctrl-C: %v\n%s", line, err, stderr.String())
	}
}

// TestHelpNamesNoFixture: no help text (tapedeck --help and each
// command's) names one of the bundled fixture plugins, a variable one of
// them reads, or a third-party plugin they imitate: help speaks of the
// user's plugin.
func TestHelpNamesNoFixture(t *testing.T) {
	t.Parallel()
	plugins := filepath.Join("testdata", "plugins") // TestMain works from the root
	entries, err := os.ReadDir(plugins)
	if err != nil {
		t.Fatal(err)
	}
	banned := []string{"cosmica", "x feed", "xfeed", "ui gallery"} // the third-party plugins that fixtures imitate
	variable := regexp.MustCompile(`(?:process\.env\.|os\.environ(?:\.get\(|\[)"|os\.Getenv\("|\$\{?)([A-Z][A-Z0-9_]+)`)
	err = filepath.WalkDir(plugins, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !slices.Contains([]string{".mjs", ".js", ".py", ".go", ".sh"}, filepath.Ext(p)) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range variable.FindAllStringSubmatch(string(b), -1) {
			if v := m[1]; !strings.HasPrefix(v, "AGENTTY_") && !slices.Contains([]string{"HOME", "PATH", "TMPDIR"}, v) {
				banned = append(banned, strings.ToLower(v))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			banned = append(banned, e.Name())
		}
	}
	if !slices.Contains(banned, "fixture_label") || !slices.Contains(banned, "cosmica_home") {
		t.Fatalf("the fixtures' variables were not found (the list: %q)", banned)
	}
	names := []string{""}
	for _, c := range newApp(&env{}).Commands {
		names = append(names, c.Name)
	}
	for _, name := range names {
		args := append(strings.Fields(name), "--help")
		out, err := exec.Command(tapedeckBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("tapedeck %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		help := strings.ToLower(string(out))
		for _, b := range banned {
			if i := strings.Index(help, b); i >= 0 {
				t.Errorf("tapedeck %s names the fixture or third-party %q: …%s…", strings.Join(args, " "), b, out[max(0, i-60):min(len(out), i+len(b)+60)])
			}
		}
	}
}
