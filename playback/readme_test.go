package playback_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeGoTestSection runs the README's "Run them from go test"
// section exactly as shown: a module holding its Go file, the two go mod
// commands against this checkout (as ../tapedeck), two bundled tapes and
// their plugins; `go test` passes, and fails with tapedeck's report once
// the plugin's panel changes.
func TestReadmeGoTestSection(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own; not in -short")
	}
	section := sectionOf(t, docsText(t), "### 7. Run them from `go test`")
	goFile := fenced(t, section, "go")
	commands := fenced(t, section, "sh")

	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.Symlink(root, filepath.Join(work, "tapedeck")); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(work, "plugin")
	tapes := filepath.Join(mod, "testdata", "tapes")
	if err := os.MkdirAll(tapes, 0o755); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/plugin\n\ngo 1.25.0\n"), 0o644))
	must(os.WriteFile(filepath.Join(mod, "golden_test.go"), []byte(goFile), 0o644))
	must(os.Symlink(filepath.Join(root, "testdata", "plugins"), filepath.Join(mod, "testdata", "plugins")))
	for _, name := range []string{"hello-go.jsonl", "hello-python.jsonl"} {
		b, err := os.ReadFile(filepath.Join(root, "testdata", "tapes", name))
		must(err)
		must(os.WriteFile(filepath.Join(tapes, name), b, 0o644))
	}
	run := func(env []string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, line := range strings.Split(strings.TrimSpace(commands), "\n") {
		if out, err := run(nil, "sh", "-c", line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	if out, err := run(nil, "go", "test", "-count=1", "-v", "./..."); err != nil || !strings.Contains(out, "--- PASS: TestGoldenTapes") {
		t.Fatalf("go test of the README's file: %v\n%s", err, out)
	}
	out, err := run([]string{"FIXTURE_LABEL=Howdy"}, "go", "test", "-count=1", "./...")
	if err == nil || !strings.Contains(out, `params.tree.children[0].text: "Hello" → "Howdy"`) {
		t.Fatalf("go test with the panel changed: want a failure naming the change; got %v\n%s", err, out)
	}
}

// sectionOf is the text of the README section that starts with heading,
// up to the next heading of any level.
func sectionOf(t *testing.T, readme, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README has no %q", heading)
	}
	for _, h := range []string{"\n## ", "\n### "} {
		if i := strings.Index(rest, h); i >= 0 {
			rest = rest[:i]
		}
	}
	return rest
}

// docsText is README.md and every guide in docs/, one after the other.
func docsText(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range append([]string{"../README.md"}, files...) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(text)
		b.WriteString("\n")
	}
	return b.String()
}

// TestReadmeGoBlockIsTheGuides: the README's go test snippet is the
// first Go block of docs/go-api.md, which TestReadmeGoTestSection runs.
func TestReadmeGoBlockIsTheGuides(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../docs/go-api.md")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fenced(t, string(readme), "go"), fenced(t, string(guide), "go"); got != want {
		t.Errorf("README.md's go block is not docs/go-api.md's:\n%s\nwant:\n%s", got, want)
	}
}

// fenced is the first fenced block of lang in text.
func fenced(t *testing.T, text, lang string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "```"+lang+"\n")
	if !ok {
		t.Fatalf("no ```%s block", lang)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("unterminated ```%s block", lang)
	}
	return block
}

// TestReadmeGoDoc runs the two go doc commands the README's "Run them
// from go test" names, as shown: the first lists the API, the second
// has every comment too; and the example the README points to is there.
func TestReadmeGoDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go doc: not in -short")
	}
	readme := docsText(t)
	for _, c := range []struct {
		line string
		want []string
	}{
		{"go doc github.com/tapedeck/tapedeck/playback", []string{"package playback // import \"github.com/tapedeck/tapedeck/playback\"", "func Replay(", "func ReadTape(", "\ntype Options struct"}},
		{"go doc -all github.com/tapedeck/tapedeck/playback", []string{"\nFUNCTIONS\n", "\nTYPES\n", "\nfunc Replay("}},
	} {
		if !strings.Contains(readme, "`"+c.line+"`") {
			t.Fatalf("README.md does not show `%s`", c.line)
		}
		args := strings.Fields(c.line)
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.line, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s printed no %q", c.line, w)
			}
		}
	}
	if !strings.Contains(readme, "`playback/example_test.go` is a runnable example") {
		t.Fatal("README.md no longer points at playback/example_test.go")
	}
	if _, err := os.Stat("example_test.go"); err != nil {
		t.Errorf("the README's runnable example: %v", err)
	}
}
