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

// readmeBlock is the first ```sh block after the text heading in
// README.md or a guide (the first file that has it).
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	var rest string
	found := false
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, rest, found = strings.Cut(string(text), heading); found {
			break
		}
	}
	if !found {
		t.Fatalf("neither README.md nor a guide in docs/ has %q", heading)
	}
	_, block, _ := strings.Cut(rest, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestTextconvGitDiff sets up git as the README says (its lines run as
// shown), commits a tape, changes one label in one frame and runs the real
// git diff: a few readable lines, the label on a -/+ pair. Without the
// driver the same change is a changed line of the whole frame.
func TestTextconvGitDiff(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo, home := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_PAGER=cat", "LC_ALL=C",
		"PATH="+filepath.Dir(tapedeckBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	sh := func(line string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		return string(out)
	}
	sh("git init -q .")
	lines := readmeBlock(t, "### Tapes in git diff: tapedeck textconv")
	if len(lines) != 2 {
		t.Fatalf("README's textconv block has %d lines, want 2: %q", len(lines), lines)
	}
	help := tapedeckBinary(t, t.TempDir(), nil, nil, "textconv", "--help")
	for _, l := range lines {
		if !strings.Contains(string(help.stdout), "  "+l+"\n") {
			t.Errorf("textconv --help does not show the README's line %q:\n%s", l, help.stdout)
		}
		sh(l)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "tapes", "hello-go.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tape := filepath.Join(repo, "hello.jsonl")
	if err := os.WriteFile(tape, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sh("git add . && git commit -q -m tape")
	changed := bytes.Replace(data, []byte(`"text":"Hello"`), []byte(`"text":"Howdy"`), 1)
	if bytes.Equal(changed, data) {
		t.Fatal("the tape has no Hello label")
	}
	if err := os.WriteFile(tape, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	raw := sh("git diff --no-ext-diff --no-textconv hello.jsonl")
	out := sh("git diff hello.jsonl")
	var minus, plus []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			minus = append(minus, l)
		case strings.HasPrefix(l, "+"):
			plus = append(plus, l)
		}
	}
	n := strings.Count(out, "\n")
	t.Logf("git diff through textconv: %d lines, %d bytes (raw: %d lines, %d bytes)\n%s", n, len(out), strings.Count(raw, "\n"), len(raw), out)
	if n > 16 || len(out) > 800 {
		t.Errorf("git diff through textconv is %d lines, %d bytes: want a few readable lines", n, len(out))
	}
	if len(minus) != 1 || len(plus) != 1 ||
		!regexp.MustCompile(`^-\s+"text": "Hello",?$`).MatchString(minus[0]) || !regexp.MustCompile(`^\+\s+"text": "Howdy",?$`).MatchString(plus[0]) {
		t.Errorf("want the label on one -/+ pair, got - %q + %q", minus, plus)
	}
	if !strings.Contains(out, "ui/setPanel") {
		t.Errorf("the hunk does not name its frame (ui/setPanel):\n%s", out)
	}
	if !strings.Contains(raw, `"text":"Hello"`) || len(raw) < 2*len(out) {
		t.Errorf("without the driver the diff should be the whole minified line; it is:\n%s", raw)
	}
}

// TestTextconvOutput: stable (the same tape twice gives the same text),
// escaped, and a file that is not a tape is shown as it is.
func TestTextconvOutput(t *testing.T) {
	t.Parallel()
	tape := filepath.Join("testdata", "tapes", "hello-node.jsonl")
	a := tapedeckBinary(t, t.TempDir(), nil, nil, "textconv", tape)
	b := tapedeckBinary(t, t.TempDir(), nil, nil, "textconv", tape)
	if a.code != 0 || !bytes.Equal(a.stdout, b.stdout) || !bytes.HasPrefix(a.stdout, []byte("tape hello-node\n")) {
		t.Errorf("textconv: exit %d, stable %v:\n%.300s", a.code, bytes.Equal(a.stdout, b.stdout), a.stdout)
	}
	if bytes.Contains(a.stdout, []byte(`"seq"`)) || bytes.Contains(a.stdout, []byte(`"at"`)) {
		t.Error("textconv prints seq or at")
	}
	dir := t.TempDir()
	evil := filepath.Join(dir, "evil.jsonl")
	data, _ := os.ReadFile(tape)
	data = bytes.Replace(data, []byte(`"text":"Hello"`), []byte(`"text":"\u001b[2J\u202eHi"`), 1)
	os.WriteFile(evil, data, 0o644)
	r := tapedeckBinary(t, t.TempDir(), nil, nil, "textconv", evil)
	if r.code != 0 || bytes.Contains(r.stdout, []byte("\x1b")) || bytes.Contains(r.stdout, []byte("\u202e")) || !bytes.Contains(r.stdout, []byte(`\u202e`)) {
		t.Errorf("textconv of escapes: exit %d, raw ESC or U+202E in:\n%s", r.code, r.stdout)
	}
	notTape := filepath.Join(dir, "notes.jsonl")
	os.WriteFile(notTape, []byte("just notes\n"), 0o644)
	r = tapedeckBinary(t, t.TempDir(), nil, nil, "textconv", notTape)
	if r.code != 0 || string(r.stdout) != "just notes\n" || !strings.Contains(string(r.stderr), "shown as it is") {
		t.Errorf("textconv of a file that is not a tape: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := tapedeckBinary(t, t.TempDir(), nil, nil, "textconv"); r.code != 2 {
		t.Errorf("textconv without a tape: exit %d, want 2", r.code)
	}
}
