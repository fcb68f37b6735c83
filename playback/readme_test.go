package playback_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeGoTestSection runs docs/go-api.md's loop exactly as shown, in
// a fresh module holding the bundled Go plugin (hello-go's main.go and
// manifest), its host script and the guide's test file (GOSUMDB=off,
// GOFLAGS=-mod=mod: the modules come from the cache, what it lacks from
// the proxy):
// the two go mod lines against this checkout (as ../tapedeck); then the
// loop's first block records the missing tape from its host script and
// passes; with the plugin's title changed in main.go, go test fails with
// the report the guide shows (the drift line naming main.go alone, not
// the test's files), and the last block writes the pending change,
// accepts it with the real tapedeck review, and git diff shows the tape
// changed; after it go test passes on the changed plugin.
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
	section := sectionOf(t, guide, "## Run them from `go test`")
	goFile := fenced(t, section, "go")
	setup := fenced(t, section, "sh")
	loop := blocks(sectionOf(t, guide, "## The loop"))
	if len(loop) != 3 || loop[0].lang != "sh" || loop[1].lang != "text" || loop[2].lang != "sh" {
		t.Fatalf("docs/go-api.md's loop: want a sh block, the failure's output, a sh block; got %+v", loop)
	}
	first, report, second := loop[0].text, loop[1].text, loop[2].text

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
	for src, dst := range map[string]string{"main.go": "main.go", "agentty-plugin.json": "agentty-plugin.json", "host.jsonl": filepath.Join("testdata", "tapes", "greet.host.jsonl")} {
		b, err := os.ReadFile(filepath.Join(root, "testdata", "plugins", "hello-go", src))
		must(err)
		must(os.WriteFile(filepath.Join(mod, dst), b, 0o644))
	}
	// HOME is a fresh one (git's and tapedeck's settings), but Go's caches
	// stay where they are: the modules tapedeck needs are in the module
	// cache, so the module is built offline, and the build cache keeps it
	// quick.
	goenv, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	dirs := strings.Split(strings.TrimSpace(string(goenv)), "\n")
	if len(dirs) != 3 {
		t.Fatalf("go env GOPATH GOMODCACHE GOCACHE printed %q", goenv)
	}
	base := append(os.Environ(), "GOPATH="+dirs[0], "GOMODCACHE="+dirs[1], "GOCACHE="+dirs[2], "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	var env []string
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); k != "CI" && k != "TAPEDECK_UPDATE" && k != "FIXTURE_LABEL" && k != "GOSUMDB" && k != "GOFLAGS" {
			env = append(env, kv)
		}
	}
	// The modules come from the local cache, which verified them as it
	// filled, so the checksum database need not be reachable; what the
	// cache lacks comes from the proxy, as on a newcomer's machine:
	// go mod tidy wants modules tapedeck's own build never fetched (its
	// dependencies' test imports), and with GOPROXY=off it failed on a
	// fresh machine (github.com/dlclark/regexp2).
	env = append(env, "GOSUMDB=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
	run := func(line string) (string, error) {
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = mod
		cmd.Env = env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("%s: %.1fs", line, time.Since(start).Seconds())
		return string(out), err
	}
	lines := func(block string) []string { return strings.Split(strings.TrimSpace(block), "\n") }
	for _, line := range append(lines(setup), "git init -q && git add -A && git commit -qm plugin") {
		if out, err := run(line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	for _, line := range lines(first) {
		if out, err := run(line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(tapes, "greet.jsonl")); err != nil {
		t.Fatalf("the first go test recorded no testdata/tapes/greet.jsonl: %v", err)
	}

	main := filepath.Join(mod, "main.go")
	src, err := os.ReadFile(main)
	must(err)
	const title = `label      = "Hello"`
	if !strings.Contains(string(src), title) {
		t.Fatalf("hello-go's main.go no longer holds %s: the guide's change needs another line", title)
	}
	must(os.WriteFile(main, []byte(strings.Replace(string(src), title, `label      = "Howdy"`, 1)), 0o644))
	out, err := run("go test ./...")
	if err == nil {
		t.Fatalf("go test with the panel's title changed passed:\n%s", out)
	}
	shownInOrder(t, report, out)

	for i, line := range lines(second) {
		out, err := run(line)
		switch {
		case i == 0 && (err == nil || !strings.Contains(out, "tapetest: wrote testdata/tapes/greet.jsonl.new")):
			t.Fatalf("%s: want a failure that names the pending change; got %v\n%s", line, err, out)
		case i > 0 && err != nil:
			t.Fatalf("%s: %v\n%s", line, err, out)
		case strings.HasPrefix(line, "git diff") && !strings.Contains(out, "testdata/tapes/greet.jsonl"):
			t.Errorf("%s shows no change of the tape:\n%s", line, out)
		}
	}
	if out, err := run("go test -count=1 ./..."); err != nil {
		t.Fatalf("go test on the changed plugin after the update was accepted: %v\n%s", err, out)
	}
}

// timing is what differs between two runs of the same failure: the
// durations, and the line of tapetest.go that reports.
var timing = regexp.MustCompile(`\(\d+(\.\d+)?(s|ms|µs)\)|, \d+(\.\d+)?(s|ms|µs)\)|tapetest\.go:\d+:`)

// shownInOrder fails t unless every line of shown (an abridged output a
// guide prints) is a line of got, in the same order, once the timings are
// left out of both; a shown line that ends with "…" is a line's start.
func shownInOrder(t *testing.T, shown, got string) {
	t.Helper()
	norm := func(s string) string { return strings.TrimRight(timing.ReplaceAllString(s, "T"), " ") }
	rest := strings.Split(got, "\n")
	for _, want := range strings.Split(strings.TrimRight(shown, "\n"), "\n") {
		want = norm(want)
		prefix, cut := strings.CutSuffix(want, "…")
		found := false
		for len(rest) > 0 && !found {
			line := norm(rest[0])
			rest = rest[1:]
			found = line == want || cut && strings.HasPrefix(line, strings.TrimRight(prefix, " "))
		}
		if !found {
			t.Fatalf("the output lacks the guide's line %q (in its order):\n%s", want, got)
		}
	}
}

// block is a fenced block of a guide: its language ("" for output) and
// its text.
type block struct{ lang, text string }

// blocks are the fenced blocks of text, in order.
func blocks(text string) []block {
	var out []block
	for {
		_, rest, ok := strings.Cut(text, "```")
		if !ok {
			return out
		}
		lang, rest, _ := strings.Cut(rest, "\n")
		body, after, ok := strings.Cut(rest, "```")
		if !ok {
			return out
		}
		out = append(out, block{lang, body})
		text = after
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
