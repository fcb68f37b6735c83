package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/race"
)

// TestGoInstall installs tapedeck as the README says Go users do, and
// checks that --version reports the module version from the build info.
// TestGoInstall runs the README's install block as shown (go install .,
// from the module root, into a GOBIN of its own), and the installed
// tapedeck says the version its build info holds.
func TestGoInstall(t *testing.T) {
	t.Parallel()
	if testing.Short() || race.Enabled {
		t.Skip("builds and links tapedeck again: not with -short or under the race detector")
	}
	if block := readmeBlock(t, "\n## Install\n"); len(block) != 1 || block[0] != "CGO_ENABLED=0 go install ." {
		t.Fatalf("README's install block is %q; this test runs CGO_ENABLED=0 go install .", block)
	}
	gobin := t.TempDir()
	install := exec.Command("go", "install", ".")
	install.Env = append(os.Environ(), "CGO_ENABLED=0", "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go install . (from the module root): %v\n%s", err, out)
	}
	bin := filepath.Join(gobin, "tapedeck")
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", bin, err)
	}
	if !regexp.MustCompile(`(?m)^\s+build\s+CGO_ENABLED=0$`).Match(info) {
		t.Errorf("go version -m %s does not say CGO_ENABLED=0: the installed binary is not the static one\n%s", bin, info)
	}
	m := regexp.MustCompile(`(?m)^\s+mod\s+github.com/tapedeck/tapedeck\s+(\S+)`).FindSubmatch(info)
	if m == nil {
		t.Fatalf("go version -m %s names no main module:\n%s", bin, info)
	}
	want := "tapedeck version " + string(m[1]) + "\n"
	if string(m[1]) == "(devel)" {
		want = "tapedeck version dev\n"
	}
	if string(out) != want {
		t.Errorf("tapedeck --version = %q, want %q (the build info's module version)", out, want)
	}
}

// TestDemoPrintsNoEscapesIntoAPipe runs ./demo.sh as the README shows,
// with its output into a pipe: it exits 0, its own headings and tapedeck's
// output carry no terminal escape there, whatever TERM says, and every
// step the README's abridged output shows ("$ …" lines) is one it ran.
func TestDemoPrintsNoEscapesIntoAPipe(t *testing.T) {
	t.Parallel()
	if testing.Short() || race.Enabled {
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
	if !bytes.HasPrefix(out, []byte("building tapedeck and the example plugin testdata/plugins/hello-go")) {
		t.Errorf("./demo.sh does not open by saying what it builds:\n%.200s", out)
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

// completionInstalled runs the install lines (want of them, from where)
// in bash with a fresh HOME, as shown, and checks that they left each
// shell's script where the shell looks for it; with zsh on the machine,
// that compinit finds the zsh one once ~/.zshrc's fpath line (as the
// comments say) puts the folder on fpath. It returns the environment the
// lines ran in.
func completionInstalled(t *testing.T, from string, lines []string, want int) []string {
	t.Helper()
	if len(lines) != want {
		t.Errorf("%s shows %d install lines, want %d: %q", from, len(lines), want, lines)
	}
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, pathWithTapedeck())
	runInBash(t, lines, env)
	for path, first := range map[string]string{
		".local/share/bash-completion/completions/tapedeck": "# bash completion for tapedeck",
		".zfunc/_tapedeck":                       "#compdef tapedeck\n",
		".config/fish/completions/tapedeck.fish": "# fish completion for tapedeck",
	} {
		b, err := os.ReadFile(filepath.Join(home, path))
		if err != nil || !strings.HasPrefix(string(b), first) {
			t.Errorf("~/%s: %v, starts %q", path, err, b[:min(len(b), 40)])
		}
	}
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Logf("zsh is not installed: compinit's finding the script not checked")
		return env
	}
	cmd := exec.Command("zsh", "-f", "-c", "fpath=(~/.zfunc $fpath); autoload -Uz compinit && compinit -u -d ~/.zcompdump && print -r -- ${_comps[tapedeck]}")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "_tapedeck" {
		t.Errorf("zsh's compinit with ~/.zfunc on fpath: %v, %q, want _tapedeck", err, out)
	}
	return env
}

// TestReadmeCompletionInstall runs the README's completion block line by
// line as shown, in bash with a fresh HOME, and the one-line form.
func TestReadmeCompletionInstall(t *testing.T) {
	t.Parallel()
	_, rest, ok := strings.Cut(readmeAfter(t, "## Install"), "Shell completion (")
	if !ok {
		t.Fatal("README.md has no shell completion section")
	}
	var lines []string
	for _, line := range strings.Split(firstFenced(rest, "sh"), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	env := completionInstalled(t, "README's completion block", lines, 6)
	// And the one-line form, in bash: the function is then defined.
	cmd := exec.Command("bash", "-c", "source <(tapedeck completion bash) && complete -p tapedeck")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "-F _tapedeck tapedeck") {
		t.Errorf("source <(tapedeck completion bash): %v\n%s", err, out)
	}
}

// TestCompletionHelpInstall runs the install lines tapedeck completion
// --help shows, as shown, in bash with a fresh HOME.
func TestCompletionHelpInstall(t *testing.T) {
	t.Parallel()
	help, err := exec.Command(tapedeckBin, "completion", "--help").Output()
	if err != nil {
		t.Fatalf("tapedeck completion --help: %v", err)
	}
	var lines []string
	for _, line := range strings.Split(string(help), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "mkdir -p ") {
			lines = append(lines, line)
		}
	}
	completionInstalled(t, "completion --help", lines, 3)
}
