package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestHelpExamplesRunAsShown runs every example of every command's help,
// exactly as --help prints it, in bash, in a copy of hello-node (a
// plugin's folder with its host script) with a store of its own: each
// exits 0. play's examples run until the page's address is printed, and
// are then ended with Ctrl-C (SIGINT), as a person ends them.
func TestHelpExamplesRunAsShown(t *testing.T) {
	t.Parallel()
	if raceEnabled {
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
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s (tapedeck %s --help): %v\n%s", line, name, err, out)
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
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=`).MatchString(sc.Text()) && !ok {
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
	if err := cmd.Wait(); err != nil {
		t.Errorf("%s ended by Ctrl-C: %v\n%s", line, err, stderr.String())
	}
}
