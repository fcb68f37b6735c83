package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The helpers of the tests that run what the README and the guides in docs/
// show.

// docFiles are the files whose usages the tests run as shown: README.md
// and every guide in docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, guides...)
}

// docsText is README.md and every guide, one after the other: what a test
// searches for a usage shown wherever it is shown.
func docsText(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(text)
		b.WriteString("\n")
	}
	return b.String()
}

// readmeAfter is the file of README.md and the guides that has heading (a
// whole line, "## …" or any other), from just after it to its end. A
// heading found in two files fails the test: it must say which one it
// means.
func readmeAfter(t *testing.T, heading string) string {
	t.Helper()
	var rest, in string
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, after, ok := strings.Cut(string(text), "\n"+heading+"\n"); ok {
			if in != "" {
				t.Fatalf("%s and %s both have %q", in, f, heading)
			}
			rest, in = after, f
		}
	}
	if in == "" {
		t.Fatalf("neither README.md nor a guide in docs/ has %q", heading)
	}
	return rest
}

// firstFenced is the text of the first block fenced as lang ("sh",
// "console", "jsonl") in text.
func firstFenced(text, lang string) string {
	_, block, _ := strings.Cut(text, "```"+lang+"\n")
	block, _, _ = strings.Cut(block, "```")
	return block
}

// pathWithTapedeck is a PATH variable with the tapedeck under test first.
func pathWithTapedeck() string {
	return "PATH=" + filepath.Dir(tapedeckBin) + string(os.PathListSeparator) + os.Getenv("PATH")
}

// runInBash runs each line in bash with env, as shown, and fails the test
// for each that fails.
func runInBash(t *testing.T, lines []string, env []string) {
	t.Helper()
	for _, line := range lines {
		cmd := exec.Command("bash", "-c", line)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("bash -c %q: %v\n%s", line, err, out)
		}
	}
}

// nodeThroughBin sets up a machine where node is on PATH only through bin
// (a link to the real node), the login shell is a stand-in that keeps the
// PATH it is given (a real one reads /etc/profile, which on many systems
// resets PATH, and then wrap would find node in a fixed folder instead),
// and HOME is empty, so neither Volta nor nvm has a node to offer. It
// skips the test where node is not installed.
func nodeThroughBin(t *testing.T) (bin, home, shell, node string) {
	t.Helper()
	nodePath, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the node fixture plugin cannot run")
	}
	if nodePath, err = filepath.Abs(nodePath); err != nil {
		t.Fatal(err)
	}
	bin, home = t.TempDir(), t.TempDir()
	node = filepath.Join(bin, "node")
	if err := os.Symlink(nodePath, node); err != nil {
		t.Fatal(err)
	}
	shell = filepath.Join(t.TempDir(), "login-sh")
	if err := os.WriteFile(shell, []byte("#!/bin/sh\n[ \"$1\" = -lc ] || exit 9\nexec /bin/sh -c \"$2\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, home, shell, node
}

// consoleSteps are the commands of the first console block after heading
// in README.md ("$ " lines and their continuations), each with the lines
// shown after it.
func consoleSteps(t *testing.T, heading string) []consoleStep {
	t.Helper()
	return blockSteps(firstFenced(readmeAfter(t, heading), "console"))
}

// blockSteps are the commands of a console block ("$ " lines and their
// continuations), each with the lines shown after it.
func blockSteps(block string) []consoleStep {
	var steps []consoleStep
	continued := false
	for _, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, consoleStep{command: strings.TrimPrefix(line, "$ ")})
		case continued:
			steps[len(steps)-1].command += "\n" + line
		case len(steps) > 0:
			steps[len(steps)-1].shown = append(steps[len(steps)-1].shown, line)
		}
		continued = strings.HasSuffix(line, "\\") || strings.HasSuffix(line, "|")
	}
	return steps
}

type consoleStep struct {
	command string
	shown   []string
}

// varies matches what differs from run to run in what tapedeck prints: a
// time (377ms, 2.44s) and a frame's seq, which depends on how the
// plugin's stderr and stdout lines interleaved when it was recorded.
var varies = regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(ms|s)\b|\bseq [0-9]+\b`)

// shownIn reports the first shown line (blank lines and "…" aside) that is
// not among out's lines, after the lines before it, each whole; times and
// seqs may differ, and a prompt's answer ("…: a", typed on a terminal) is
// not printed.
func shownIn(shown []string, out string) (missing string, ok bool) {
	lines := strings.Split(out, "\n")
	at := 0
	for _, s := range shown {
		if t := strings.TrimSpace(s); t == "" || t == "…" {
			continue
		}
		prompt := strings.HasSuffix(s, " quit: a")
		if prompt {
			s = strings.TrimSuffix(s, " a")
		}
		var pattern strings.Builder
		last := 0
		for _, m := range varies.FindAllStringIndex(s, -1) {
			pattern.WriteString(regexp.QuoteMeta(s[last:m[0]]))
			if strings.HasPrefix(s[m[0]:], "seq ") {
				pattern.WriteString(`seq [0-9]+`)
			} else {
				pattern.WriteString(`[0-9.]+(ms|s)`)
			}
			last = m[1]
		}
		pattern.WriteString(regexp.QuoteMeta(s[last:]))
		re := regexp.MustCompile("^" + pattern.String())
		if !prompt {
			re = regexp.MustCompile(re.String() + "$")
		}
		for at < len(lines) && !re.MatchString(lines[at]) {
			at++
		}
		if at == len(lines) {
			return s, false
		}
		at++
	}
	return "", true
}
