package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoInstall installs tapedeck as the README says Go users do, and
// checks that --version reports the module version from the build info.
// go install github.com/tapedeck/tapedeck@latest needs the module proxy to
// know the module; where it does not (a fork, a machine without the
// network), that half skips, saying so, and go install from this checkout
// (the same main package) is what is tested.
func TestGoInstall(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds and links tapedeck again: not with -short or under the race detector")
	}
	version := func(bin string) (got, want string) {
		t.Helper()
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", bin, err)
		}
		info, err := exec.Command("go", "version", "-m", bin).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", bin, err)
		}
		m := regexp.MustCompile(`(?m)^\s+mod\s+github.com/tapedeck/tapedeck\s+(\S+)`).FindSubmatch(info)
		if m == nil {
			t.Fatalf("go version -m %s names no main module:\n%s", bin, info)
		}
		want = "tapedeck version " + string(m[1]) + "\n"
		if string(m[1]) == "(devel)" {
			want = "tapedeck version dev\n"
		}
		return string(out), want
	}

	gobin := t.TempDir()
	install := exec.Command("go", "install", ".")
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install . (from the module root): %v\n%s", err, out)
	}
	if got, want := version(filepath.Join(gobin, "tapedeck")); got != want {
		t.Errorf("tapedeck --version = %q, want %q (the build info's module version)", got, want)
	}

	latest := exec.Command("go", "install", "github.com/tapedeck/tapedeck@latest")
	latest.Dir = t.TempDir() // outside this module, as a user runs it
	gobin = t.TempDir()
	latest.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=")
	if out, err := latest.CombinedOutput(); err != nil {
		lines := strings.Split(strings.TrimSpace(string(bytes.TrimSpace(out))), "\n")
		t.Skipf("go install github.com/tapedeck/tapedeck@latest: the module proxy cannot resolve the module path here (%s); go install from the checkout passed", lines[len(lines)-1])
	}
	got, want := version(filepath.Join(gobin, "tapedeck"))
	if got != want || !strings.HasPrefix(got, "tapedeck version v") {
		t.Errorf("tapedeck --version = %q, want %q", got, want)
	}
}

// TestDemoPrintsNoEscapesIntoAPipe runs ./demo.sh as the README shows,
// with its output into a pipe: it exits 0, its own headings and tapedeck's
// output carry no terminal escape there, whatever TERM says, and every
// step the README's abridged output shows ("$ …" lines) is one it ran.
func TestDemoPrintsNoEscapesIntoAPipe(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds tapedeck and runs the whole demo: not with -short or under the race detector")
	}
	cmd := exec.Command("./demo.sh")
	cmd.Env = append(withoutEnv(os.Environ(), "NO_COLOR"), "TERM=xterm-256color")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("./demo.sh: %v\n%s", err, out)
	}
	if i := bytes.IndexByte(out, 0x1b); i >= 0 {
		t.Errorf("./demo.sh into a pipe prints an escape at byte %d: %q", i, out[max(i-40, 0):min(i+40, len(out))])
	}
	for _, want := range []string{": same (compared ", ": 2 differences (compared ", "\n    params.tree.children[0].text: \"Hello\" → \"Howdy\"\n", " passed, 0 failed\n"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("./demo.sh output lacks %q:\n%s", want, out)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, tryIt, _ := strings.Cut(string(readme), "## Try it")
	tryIt, _, _ = strings.Cut(tryIt, "\n## ")
	steps := 0
	for _, line := range strings.Split(tryIt, "\n") {
		if strings.HasPrefix(line, "$ tapedeck ") || strings.HasPrefix(line, "$ FIXTURE_LABEL=") {
			steps++
			if !bytes.Contains(out, []byte("\n"+line+"\n")) {
				t.Errorf("README's Try it shows %q, which ./demo.sh did not print", line)
			}
		}
	}
	if steps < 5 {
		t.Errorf("README's Try it shows %d steps of the demo; want its record, show, replay, changed replay and test", steps)
	}
}

// TestReadmeCompletionInstall runs the README's shell-completion lines as
// they are shown, with HOME in a temporary folder: each writes its script
// where it says (the zsh line under zsh, where zsh is installed).
func TestReadmeCompletionInstall(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "Shell completion (")
	if !ok {
		t.Fatal("README.md has no shell completion section")
	}
	_, block, _ := strings.Cut(rest, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "PATH="+filepath.Dir(tapedeckBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	ran := 0
	for _, line := range strings.Split(block, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		shell := "bash"
		if strings.Contains(line, "fpath") {
			shell = "zsh"
			if _, err := exec.LookPath("zsh"); err != nil {
				t.Logf("zsh is not installed: %q not run", line)
				continue
			}
			// A fresh zsh's fpath[1] is a system folder: run it with ours first.
			line = "fpath=(" + home + " $fpath); " + line
		}
		cmd := exec.Command(shell, "-c", line)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s -c %q: %v\n%s", shell, line, err, out)
		}
		ran++
	}
	if ran < 4 {
		t.Errorf("ran %d lines of the README's completion block, want at least 4:\n%s", ran, block)
	}
	for path, first := range map[string]string{
		".local/share/bash-completion/completions/tapedeck": "# bash completion for tapedeck",
		".config/fish/completions/tapedeck.fish":            "# fish completion for tapedeck",
	} {
		b, err := os.ReadFile(filepath.Join(home, path))
		if err != nil || !strings.HasPrefix(string(b), first) {
			t.Errorf("~/%s: %v, starts %q", path, err, b[:min(len(b), 40)])
		}
	}
	// And the one-line form, in bash: the function is then defined.
	cmd := exec.Command("bash", "-c", "source <(tapedeck completion bash) && complete -p tapedeck")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "-F _tapedeck tapedeck") {
		t.Errorf("source <(tapedeck completion bash): %v\n%s", err, out)
	}
}
