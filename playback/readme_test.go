package playback_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeGoTestSection runs docs/go-api.md's loop exactly as shown, in
// a fresh module holding the bundled Go plugin (hello-go's main.go) and
// the guide's test file: the two go mod lines against this checkout (as
// ../tapedeck); then the loop's first block records the missing tape from
// its host script and passes; with the plugin's label changed, go test
// fails with tapedeck's report, and the second block writes the pending
// change, accepts it with the real tapedeck review, and git diff shows
// the tape changed; after it go test passes on the changed plugin.
func TestReadmeGoTestSection(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own; not in -short")
	}
	for _, tool := range []string{"git", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	guide := docsText(t)
	section := sectionOf(t, guide, "### 7. Run them from `go test`")
	goFile := fenced(t, section, "go")
	setup := fenced(t, section, "sh")
	loop := sectionOf(t, guide, "### The loop")
	_, second, _ := strings.Cut(loop, "```sh\n")
	first := fenced(t, loop, "sh")
	second = fenced(t, second, "sh")

	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(root, filepath.Join(work, "tapedeck")))
	bin := filepath.Join(work, "bin")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "tapedeck"), root).CombinedOutput(); err != nil {
		t.Fatalf("build tapedeck: %v\n%s", err, out)
	}
	mod := filepath.Join(work, "plugin")
	tapes := filepath.Join(mod, "testdata", "tapes")
	must(os.MkdirAll(tapes, 0o755))
	must(os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/plugin\n\ngo 1.25.0\n"), 0o644))
	must(os.WriteFile(filepath.Join(mod, "golden_test.go"), []byte(goFile), 0o644))
	for src, dst := range map[string]string{"main.go": "main.go", "host.jsonl": filepath.Join("testdata", "tapes", "greet.host.jsonl")} {
		b, err := os.ReadFile(filepath.Join(root, "testdata", "plugins", "hello-go", src))
		must(err)
		must(os.WriteFile(filepath.Join(mod, dst), b, 0o644))
	}
	base := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	var env []string
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); k != "CI" && k != "TAPEDECK_UPDATE" && k != "FIXTURE_LABEL" {
			env = append(env, kv)
		}
	}
	run := func(extra []string, line string) (string, error) {
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = mod
		cmd.Env = append(append([]string{}, env...), extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	lines := func(block string) []string { return strings.Split(strings.TrimSpace(block), "\n") }
	for _, line := range append(lines(setup), "git init -q && git add -A && git commit -qm plugin") {
		if out, err := run(nil, line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	for _, line := range lines(first) {
		if out, err := run(nil, line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(tapes, "greet.jsonl")); err != nil {
		t.Fatalf("the first go test recorded no testdata/tapes/greet.jsonl: %v", err)
	}
	changed := []string{"FIXTURE_LABEL=Howdy"}
	out, err := run(changed, "go test -count=1 ./...")
	if err == nil || !strings.Contains(out, `params.tree.children[0].text: "Hello" → "Howdy"`) {
		t.Fatalf("go test with the panel changed: want a failure naming the change; got %v\n%s", err, out)
	}
	for i, line := range lines(second) {
		out, err := run(changed, line)
		switch {
		case i == 0 && (err == nil || !strings.Contains(out, "tapetest: wrote testdata/tapes/greet.jsonl.new")):
			t.Fatalf("%s: want a failure that names the pending change; got %v\n%s", line, err, out)
		case i > 0 && err != nil:
			t.Fatalf("%s: %v\n%s", line, err, out)
		case strings.HasPrefix(line, "git diff") && !strings.Contains(out, "testdata/tapes/greet.jsonl"):
			t.Errorf("%s shows no change of the tape:\n%s", line, out)
		}
	}
	if out, err := run(changed, "go test -count=1 ./..."); err != nil {
		t.Fatalf("go test on the changed plugin after the update was accepted: %v\n%s", err, out)
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
// first Go block of docs/go-api.md, byte for byte, which
// TestReadmeGoTestSection runs.
func TestReadmeGoBlockIsTheGuides(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../docs/go-api.md")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("docs/go-api.md is not there (yet): nothing to keep the README's go block equal to")
	}
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
