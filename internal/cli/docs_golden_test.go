package cli

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/race"
)

// TestReadmeGoldenWalk runs the README's golden loop on a copy of
// hello-node in a git repository of its own, as the README says, every
// command exactly as shown, in bash: each prints the lines shown
// (durations aside), and the review is answered with "a"; then
// docs/golden-tests.md's coverage of the tapes the loop left. The host
// script docs/golden-tests.md shows is the copy's.
func TestReadmeGoldenWalk(t *testing.T) {
	guideWalk(t, filepath.Join("testdata", "plugins", "hello-node"), "docs/golden-tests.md",
		"### 1. Write the host's side: a host script",
		[]string{"## The golden loop", "### 6. See what the tapes leave untested"}, 11)
}

// TestMCPGuideWalk runs docs/mcp.md's golden loop the same way, on a
// copy of the node MCP fixture, whose host script is the one it shows.
func TestMCPGuideWalk(t *testing.T) {
	guideWalk(t, filepath.Join("testdata", "mcp", "node"), "docs/mcp.md",
		"## A golden test of a server", []string{"## A golden test of a server"}, 8)
}

// guideWalk checks that the host script the guide shows first after
// scriptHeading is the one of the fixture in dir, then runs the commands
// after each of headings on a copy of dir (walkAsShown): want of them.
func guideWalk(t *testing.T, dir, guide, scriptHeading string, headings []string, want int) {
	t.Parallel()
	if race.Enabled {
		t.Skip("the walk repeats what the workflow tests cover; under the race detector it only costs time")
	}
	script := firstFenced(readmeAfter(t, scriptHeading), "jsonl")
	if have, _ := os.ReadFile(filepath.Join(dir, "host.jsonl")); script != string(have) {
		t.Fatalf("%s's host script is not %s:\n%s", guide, filepath.Join(dir, "host.jsonl"), script)
	}
	if ran := walkAsShown(t, dir, headings, "node"); ran != want {
		t.Errorf("ran %d commands of %s after %q, want %d", ran, guide, headings, want)
	}
}

// walkAsShown runs the commands of the first console block after each
// heading (in README.md or a guide), one block after the other, in bash, in a copy of src in a git repository
// of its own, with tapedeck on PATH and a store of its own, answering "a"
// to a prompt: each must exit as shown (1 where it shows a failure) and
// print the lines shown, in order, times and seqs aside. It returns how
// many commands ran; it skips where a tool the walk needs is missing.
func walkAsShown(t *testing.T, src string, headings []string, tools ...string) int {
	t.Helper()
	for _, tool := range append([]string{"git", "perl", "bash"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	dir := filepath.Join(t.TempDir(), filepath.Base(src))
	copyDir(t, src, dir)
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "CI" && !strings.HasPrefix(k, "GIT_") && k != "TAPEDECK_STORE" {
			env = append(env, kv) // review refuses when CI is set
		}
	}
	env = append(env, "TAPEDECK_STORE="+t.TempDir(), "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		pathWithTapedeck())
	run := func(command, stdin string) (string, int) {
		t.Helper()
		cmd := exec.Command("bash", "-c", command)
		cmd.Dir, cmd.Env = dir, env
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		return string(out), code
	}
	// "a git repository of its own"
	if out, code := run("git init -q && git add -A && git commit -qm plugin", ""); code != 0 {
		t.Fatalf("git: %s", out)
	}
	ran := 0
	var steps []consoleStep
	for _, h := range headings {
		steps = append(steps, consoleSteps(t, h)...)
	}
	for _, s := range steps {
		want := 0
		if strings.Contains(strings.Join(s.shown, "\n"), " failed") && !strings.Contains(strings.Join(s.shown, "\n"), " 0 failed") {
			want = 1
		}
		out, code := run(s.command, "a\n")
		t.Logf("$ %s\n%s(exit %d)", s.command, out, code)
		if code != want {
			t.Errorf("%s: exit %d, want %d", s.command, code, want)
		}
		if line, ok := shownIn(s.shown, out); !ok {
			t.Errorf("%s printed no %q where %q shows it:\n%s", s.command, line, headings, out)
		}
		ran++
	}
	return ran
}

// TestReadmeRunThemInCI runs step 5's command exactly as shown, in bash,
// in a module holding a copy of the bundled tapes and plugins: it exits 0
// and writes report.xml, a JUnit suite with a test case per tape and no
// failure (a tape whose interpreter is missing here is skipped).
func TestReadmeRunThemInCI(t *testing.T) {
	t.Parallel()
	block := firstFenced(readmeAfter(t, "### 5. Run them in CI"), "sh")
	if block != "tapedeck test --junit report.xml testdata/tapes\n" {
		t.Fatalf("README's CI block is %q; this test knows tapedeck test --junit report.xml testdata/tapes", block)
	}
	ws := t.TempDir()
	copyDir(t, filepath.Join("testdata", "tapes"), filepath.Join(ws, "testdata", "tapes"))
	copyDir(t, filepath.Join("testdata", "plugins"), filepath.Join(ws, "testdata", "plugins"))
	// A Go module, as a plugin's repository is: hello-go's tape runs go run .
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tapes, _ := filepath.Glob(filepath.Join(ws, "testdata", "tapes", "*.jsonl"))

	cmd := exec.Command("bash", "-c", block)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "TAPEDECK_STORE="+t.TempDir(), pathWithTapedeck())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", block, err, out)
	}
	report, err := os.ReadFile(filepath.Join(ws, "report.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name string `xml:"name,attr"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(report, &suite); err != nil {
		t.Fatalf("report.xml: %v\n%s", err, report)
	}
	if suite.Tests != len(tapes) || len(suite.Cases) != len(tapes) || suite.Failures != 0 {
		t.Errorf("report.xml: %d tests, %d cases, %d failures; want %d tapes, none failed\n%s", suite.Tests, len(suite.Cases), suite.Failures, len(tapes), report)
	}
}

// TestLanguageServerGuide runs docs/language-servers.md's block as shown,
// from the module root with a TMPDIR and a store of its own: each command
// exits 0 and prints the lines shown, in order, times and seqs aside.
func TestLanguageServerGuide(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TMPDIR="+t.TempDir(), "TAPEDECK_STORE="+t.TempDir(), pathWithTapedeck())
	steps := consoleSteps(t, "## Recording an editor's server")
	for _, s := range steps {
		cmd := exec.Command("bash", "-c", s.command)
		cmd.Dir, cmd.Env = wd, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.command, err, out)
		}
		if line, ok := shownIn(s.shown, string(out)); !ok {
			t.Errorf("%s printed no %q where the guide shows it:\n%s", s.command, line, out)
		}
	}
	if len(steps) != 5 {
		t.Errorf("ran %d commands, want 5", len(steps))
	}
}
