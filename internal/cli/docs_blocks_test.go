package cli

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The harness that keeps every usage the README and the guides show run
// by a test: each fenced block says its language, and each block of
// commands (sh, console) is marked, on the line above it, either
//
//	<!-- run by TestName -->          (or TestA, TestB: several tests)
//	<!-- not run: the reason -->
//
// A test named there must exist in the module and must be the one that
// runs the block: its source names the block's file, its section's
// heading or one of its command lines.

// docBlock is one fenced block of a Markdown file.
type docBlock struct {
	file    string   // as docFiles names it
	line    int      // of the opening fence, from 1
	lang    string   // the fence's language ("" when it says none)
	heading string   // the nearest heading line above ("## Install")
	above   []string // every heading line above, and the ten lines just above
	marker  string   // the HTML comment on the nearest non-blank line above, or ""
	text    string   // the block's lines, unindented
}

// commandLangs are the languages of blocks that show commands to run.
var commandLangs = map[string]bool{"sh": true, "console": true, "bash": true, "shell": true}

// docBlocks are the fenced blocks of the file at path, in order. An
// unclosed fence is an error.
func docBlocks(path string) ([]docBlock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var blocks []docBlock
	heading, prev := "", ""
	var headings []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trimmed := strings.TrimLeft(l, " ")
		if strings.HasPrefix(l, "#") {
			heading = strings.TrimSpace(l)
			headings = append(headings, heading)
		}
		if !strings.HasPrefix(trimmed, "```") {
			if strings.TrimSpace(l) != "" {
				prev = strings.TrimSpace(l)
			}
			continue
		}
		indent := l[:len(l)-len(trimmed)]
		b := docBlock{file: path, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), heading: heading}
		b.above = append(append(b.above, headings...), lines[max(i-10, 0):i]...)
		if strings.HasPrefix(prev, "<!--") {
			b.marker = prev
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "```" {
				closed = true
				break
			}
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if !closed {
			return nil, fmt.Errorf("%s:%d: the fenced block is never closed", path, b.line)
		}
		b.text = strings.Join(body, "\n")
		blocks = append(blocks, b)
		prev = "```"
	}
	return blocks, nil
}

// commandLines are the commands a block of commands shows: in a console
// block the "$ " lines, in an sh block every line that is not a comment
// (trailing comments cut).
func (b docBlock) commandLines() []string {
	var out []string
	for _, l := range strings.Split(b.text, "\n") {
		l = strings.TrimSpace(l)
		if b.lang == "console" {
			if !strings.HasPrefix(l, "$ ") {
				continue
			}
			l = strings.TrimPrefix(l, "$ ")
		}
		if c, _, ok := strings.Cut(l, "  #"); ok {
			l = c
		}
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

var (
	runByMarker  = regexp.MustCompile(`^<!-- run by (Test\w+(?:, Test\w+)*) -->$`)
	notRunMarker = regexp.MustCompile(`^<!-- not run:(.*)-->$`)
	testFunc     = regexp.MustCompile(`(?m)^func (Test\w+)\(`)
)

// moduleTests are the module's test functions, each with its file's name
// and its source: its doc comment, and from its func line to the next
// top-level func.
func moduleTests(t *testing.T) map[string]string {
	t.Helper()
	tests := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(src)
		for _, m := range testFunc.FindAllStringSubmatchIndex(text, -1) {
			end := len(text)
			if next := strings.Index(text[m[1]:], "\nfunc "); next >= 0 {
				end = m[1] + next
			}
			start := m[0]
			for start > 0 {
				prev := strings.LastIndex(text[:start-1], "\n") + 1
				if !strings.HasPrefix(text[prev:start], "//") {
					break
				}
				start = prev
			}
			tests[text[m[2]:m[3]]] = path + "\n" + text[start:end]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tests
}

// TestDocsEveryBlockRunOrMarked: every fenced block of the README and the
// guides says its language, and every block of commands is run by a test
// it names (a test that exists and reads it) or says why it is not run.
func TestDocsEveryBlockRunOrMarked(t *testing.T) {
	t.Parallel()
	var blocks []docBlock
	for _, f := range docFiles(t) {
		bs, err := docBlocks(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	problems, commandBlocks, runBy := blockProblems(blocks, moduleTests(t))
	for _, p := range problems {
		t.Error(p)
	}
	if commandBlocks < 40 || runBy < 30 {
		t.Errorf("found %d blocks of commands, %d of them run by a test: the docs or this harness lost some", commandBlocks, runBy)
	}
}

// blockProblems are what is wrong with blocks' languages and markers, one
// line each, given the module's tests (name → source); and how many blocks
// show commands, and how many of those a test runs.
func blockProblems(blocks []docBlock, tests map[string]string) (problems []string, commandBlocks, runBy int) {
	for _, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		if b.lang == "" {
			problems = append(problems, where+": a fenced block says no language: give it one (sh or console for commands, text for output, json, go …)")
			continue
		}
		if !commandLangs[b.lang] {
			continue
		}
		commandBlocks++
		if m := notRunMarker.FindStringSubmatch(b.marker); m != nil {
			if len(strings.Fields(m[1])) < 3 {
				problems = append(problems, fmt.Sprintf("%s: %q is no reason: say in a few words why no test runs the block", where, b.marker))
			}
			continue
		}
		m := runByMarker.FindStringSubmatch(b.marker)
		if m == nil {
			problems = append(problems, fmt.Sprintf("%s: a block of commands (%q) says neither which test runs it nor why none does: put <!-- run by TestName --> or <!-- not run: REASON --> on the line above it", where, firstLine(b.text)))
			continue
		}
		runBy++
		for _, name := range strings.Split(m[1], ", ") {
			src, ok := tests[name]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: the block is run by %s, says its marker, but no test of that name is in the module", where, name))
				continue
			}
			if !readsBlock(src, b) {
				problems = append(problems, fmt.Sprintf("%s: %s, which its marker names, mentions neither %s, a heading above the block nor any of its commands: is it the test that runs the block?", where, name, filepath.Base(b.file)))
			}
		}
	}
	return problems, commandBlocks, runBy
}

// TestDocsHarnessFindsEachFault: the harness names each way a block can
// break the rule, and passes a block that keeps it.
func TestDocsHarnessFindsEachFault(t *testing.T) {
	t.Parallel()
	doc := filepath.Join(t.TempDir(), "guide.md")
	text := "# Guide\n\n## Listing\n\n" +
		"<!-- run by TestListing -->\n```console\n$ tapedeck ls --json\n[]\n```\n\n" + // fine
		"```\noutput\n```\n\n" + // no language
		"```sh\ntapedeck gc\n```\n\n" + // no marker
		"<!-- not run: -->\n```sh\ntapedeck gc\n```\n\n" + // no reason
		"<!-- not run: the store is shared -->\n```sh\ntapedeck gc\n```\n\n" + // fine
		"<!-- run by TestGone -->\n```sh\ntapedeck gc\n```\n\n" + // no such test
		"<!-- run by TestOther -->\n  ```sh\n  tapedeck verify\n  ```\n" // a test that reads something else
	if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks, err := docBlocks(doc)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"TestListing": "x_test.go\nfunc TestListing(t *testing.T) { run(t, \"tapedeck ls --json\") }",
		"TestOther":   "x_test.go\nfunc TestOther(t *testing.T) { run(t, \"tapedeck rm --older-than 1d\") }",
	}
	problems, commandBlocks, runBy := blockProblems(blocks, tests)
	want := []string{
		":11: a fenced block says no language",
		":15: a block of commands (\"tapedeck gc\") says neither",
		":20: \"<!-- not run: -->\" is no reason",
		":30: the block is run by TestGone, says its marker, but no test of that name",
		":35: TestOther, which its marker names, mentions neither guide.md",
	}
	if len(problems) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d", strings.Join(problems, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d = %q, want it to say %q", i, problems[i], w)
		}
	}
	if commandBlocks != 6 || runBy != 3 {
		t.Errorf("%d blocks of commands, %d run by a test; want 6 and 3", commandBlocks, runBy)
	}
	if got := blocks[len(blocks)-1].text; got != "tapedeck verify" {
		t.Errorf("an indented block reads %q, want it unindented", got)
	}
	if _, err := docBlocks(docFile(t, "```sh\ntapedeck ls\n")); err == nil || !strings.Contains(err.Error(), ":1: the fenced block is never closed") {
		t.Errorf("an unclosed block: %v", err)
	}
}

// docFile is a Markdown file of its own holding text.
func docFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readsBlock reports whether a test's source names the block: its file,
// a heading above it, one of its commands (whole, its first 30 bytes or
// its first three words), a string of 20 bytes or more that the ten lines
// above the block hold (the sentence a test finds the block by), or it
// finds its blocks by their markers.
func readsBlock(src string, b docBlock) bool {
	if strings.Contains(src, "runByMarker") || strings.Contains(src, filepath.Base(b.file)) {
		return true
	}
	for _, h := range b.above {
		if strings.HasPrefix(h, "#") && strings.Contains(src, h) {
			return true
		}
	}
	for _, c := range b.commandLines() {
		if strings.Contains(src, c) || (len(c) > 30 && strings.Contains(src, c[:30])) {
			return true
		}
		if w := strings.Fields(c); len(w) >= 3 && len(strings.Join(w[:3], " ")) >= 15 && strings.Contains(src, strings.Join(w[:3], " ")) {
			return true
		}
	}
	above := strings.Join(b.above, "\n")
	for _, lit := range goString.FindAllString(src, -1) {
		if lit = strings.Trim(lit, "\"`"); len(lit) >= 20 && strings.Contains(above, lit) {
			return true
		}
	}
	return false
}

// goString matches a Go string literal without escapes.
var goString = regexp.MustCompile("\"[^\"\\\\\n]*\"|`[^`]*`")

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestDocsBlocksAsShown runs each block marked <!-- run by
// TestDocsBlocksAsShown --> as shown, in bash, in a folder of its own that
// sees the module's testdata/ and internal/ (read only) and its go.mod,
// with tapedeck on PATH and a store holding one session (the bundled
// hello-go tape, imported: `last`): in a console block each "$ " command
// prints the lines shown after it, in order (times and seqs aside, "…"
// for lines left out); in an sh block each line exits 0.
func TestDocsBlocksAsShown(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	for _, f := range docFiles(t) {
		all, err := docBlocks(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range all {
			if m := runByMarker.FindStringSubmatch(b.marker); m != nil && strings.Contains(", "+m[1]+",", ", TestDocsBlocksAsShown,") {
				blocks = append(blocks, b)
			}
		}
	}
	if len(blocks) < 5 {
		t.Fatalf("%d blocks are marked as run by this test: the docs or the harness lost some", len(blocks))
	}
	for _, b := range blocks {
		t.Run(fmt.Sprintf("%s:%d", filepath.Base(b.file), b.line), func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			for _, d := range []string{"testdata", "internal", "go.mod", "go.sum"} {
				if err := os.Symlink(filepath.Join(wd, d), filepath.Join(ws, d)); err != nil {
					t.Fatal(err)
				}
			}
			store := t.TempDir()
			if r := tapedeck(t, store, nil, nil, "import", filepath.Join("testdata", "tapes", "hello-go.jsonl")); r.code != 0 {
				t.Fatalf("import: %s", r.stderr)
			}
			env := append(withoutEnv(os.Environ(), "TAPEDECK_STORE"), "TAPEDECK_STORE="+store, pathWithTapedeck())
			run := func(command string) (string, error) {
				cmd := exec.Command("bash", "-c", command)
				cmd.Dir, cmd.Env = ws, env
				out, err := cmd.CombinedOutput()
				t.Logf("$ %s\n%s", command, out)
				return string(out), err
			}
			if b.lang != "console" {
				for _, c := range b.commandLines() {
					if out, err := run(c); err != nil {
						t.Errorf("%s (%s:%d): %v\n%s", c, b.file, b.line, err, out)
					}
				}
				return
			}
			for _, s := range blockSteps(b.text) {
				out, _ := run(s.command)
				if line, ok := shownIn(s.shown, out); !ok {
					t.Errorf("%s printed no %q where %s:%d shows it:\n%s", s.command, line, b.file, b.line, out)
				}
			}
		})
	}
}

// TestDocsShortEnough: the README and each guide read at once: at most
// 250 lines each.
func TestDocsShortEnough(t *testing.T) {
	t.Parallel()
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(text), "\n"); n > 250 {
			t.Errorf("%s has %d lines: cut it to 250 or split it into guides of one task each", f, n)
		}
	}
}

// TestArchitectureMapsEveryPackage: docs/architecture.md's package map
// names every package under internal/ ("name/" or "name (").
func TestArchitectureMapsEveryPackage(t *testing.T) {
	t.Parallel()
	arch, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, pkgMap, ok := strings.Cut(string(arch), "\n## The package map\n")
	if !ok {
		t.Fatal("docs/architecture.md has no package map")
	}
	entries, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == "testdata" {
			continue
		}
		if !regexp.MustCompile(`(^|[\s,(])` + name + `(/|\s\()`).MatchString(pkgMap) {
			t.Errorf("docs/architecture.md's package map does not name internal/%s: say what it owns there", name)
		}
	}
}

// TestDocsLinksResolve: every relative link of the README and the guides
// leads to a file of the module, and a link to a heading (file.md#slug) to
// a heading the file has, slugged as GitHub does.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			if path == "" {
				path = f
			} else {
				path = filepath.Join(filepath.Dir(f), path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which is not there", f, target)
				continue
			}
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if !slices.Contains(headingSlugs(t, path), anchor) {
				t.Errorf("%s links to %s, but %s has no heading of that slug", f, target, path)
			}
		}
	}
}

// headingSlugs are the anchors GitHub gives the headings of a Markdown
// file: lower case, punctuation dropped, spaces as hyphens (fenced blocks
// aside).
func headingSlugs(t *testing.T, path string) []string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var slugs []string
	fenced := false
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#"))) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slugs = append(slugs, b.String())
	}
	return slugs
}

// TestDocsInlineUsagesParse: every command the prose of the README and the
// guides shows in a code span (`tapedeck replay --runs N`, `record --env
// NAME`) names a command tapedeck has, and each of its flags is one that
// command's --help lists (or a global one). The blocks are run as shown; a span in a
// sentence is too short to run, but not too short to go stale.
func TestDocsInlineUsagesParse(t *testing.T) {
	t.Parallel()
	top := tapedeck(t, t.TempDir(), nil, nil, "--help")
	commands := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^     ([a-z]+)  `).FindAllStringSubmatch(string(top.stdout), -1) {
		commands[m[1]] = true
	}
	if len(commands) < 20 {
		t.Fatalf("tapedeck --help lists %d commands?\n%s", len(commands), top.stdout)
	}
	helps := map[string]string{}
	span := regexp.MustCompile("`([^`\n]+)`")
	checked := 0
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range span.FindAllStringSubmatch(withoutFences(string(text)), -1) {
			words := strings.Fields(m[1])
			if len(words) > 0 && words[0] == "tapedeck" {
				words = words[1:]
			}
			for len(words) > 1 && words[0] == "--store" {
				words = words[2:]
			}
			if len(words) < 2 || !commands[words[0]] {
				continue
			}
			cmd := words[0]
			if _, ok := helps[cmd]; !ok {
				helps[cmd] = string(tapedeck(t, t.TempDir(), nil, nil, cmd, "--help").stdout)
			}
			for _, w := range words[1:] {
				if w == "--" {
					break
				}
				if !strings.HasPrefix(w, "-") || w == "-" {
					continue
				}
				flag, _, _ := strings.Cut(strings.TrimSuffix(w, "…"), "=")
				listed := regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(flag) + `([\s,=]|$)`)
				if !listed.MatchString(helps[cmd]) && !listed.MatchString(string(top.stdout)) { // a global flag goes after the command too
					t.Errorf("%s shows `%s`, but tapedeck %s --help lists no %s", f, m[1], cmd, flag)
				}
				checked++
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d flags in the prose: the docs or this test lost them", checked)
	}
}

// withoutFences is Markdown text without its fenced blocks.
func withoutFences(text string) string {
	var b strings.Builder
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
