package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// layer says what one package of the module may import directly: which of
// the module's packages and which third-party modules, and why. Every
// package of the module has one; a new package without one fails the test,
// so that its place in the graph is decided when it is made.
type layer struct {
	imports []string // the module's packages (relative) and third-party module paths
	why     string
}

// layers is the module's package graph. Dependencies point one way: from
// the front-ends (main, cli) through the use cases (capture, playback and
// the rooms built on a replay: noise, pending, shrink) and their output
// (present) down to the libraries, which know nothing of what is above
// them; the relay's hot path (relay, spool, frame) is the standard
// library alone.
var layers = map[string]layer{
	"": {[]string{"internal/cli"},
		"main only runs the command line"},
	"internal/cli": {[]string{"internal/note", "internal/profile", "internal/wire", "internal/check", "internal/coverage", "frame", "internal/atomicfile", "internal/escape", "internal/screen", "internal/smallfile", "internal/jsonpath",
		"playback", "internal/filter", "internal/noise", "internal/pending", "internal/playground", "internal/capture", "internal/redact", "internal/present", "internal/shrink", "internal/store", "tape", "internal/wrap", "github.com/urfave/cli/v2", "golang.org/x/term"},
		"the command layer parses flags, calls a use case and renders; the relay, recorder, spool, replay and diff are the use cases' (capture, playback and the rooms built on it: noise, pending, shrink), never a command's; it names profiles and framings only to check their flags"},
	"internal/capture": {[]string{"frame", "internal/check", "internal/clock", "internal/escape", "internal/fingerprint", "internal/host", "internal/profile", "internal/recorder", "internal/redact", "internal/relay", "internal/smallfile", "internal/store", "internal/wire"},
		"the recording use case: the relay, the recorder, the store and a host script, put together"},
	"playback": {[]string{"frame", "internal/clock", "internal/datafolder", "internal/environ", "internal/diff", "internal/filter", "internal/fingerprint", "internal/host", "internal/inorder", "internal/jsonpath", "internal/note", "internal/profile", "internal/redact", "internal/smallfile", "internal/store", "internal/wire", "message", "tape"},
		"the playback use case and the Go API for a plugin's own go test: recordings from tapes or the store, the replay engine, the comparison under filters, suites of tapes; what builds on a replay (noise, pending updates, shrink) is in rooms of its own that import playback, never the other way"},
	"internal/filter": {[]string{"frame", "internal/atomicfile", "internal/diff", "internal/jsonpath", "internal/jsonscan", "internal/recent", "internal/smallfile", "message"},
		"filters (placeholders for noise inside strings) and tapedeck.json: what a comparison rewrites before it compares; it replays nothing"},
	"internal/noise": {[]string{"frame", "internal/diff", "internal/filter", "internal/inorder", "internal/jsonpath", "playback"},
		"replay --runs: it replays through playback and proposes filters and ignore rules; playback never imports it"},
	"internal/pending": {[]string{"frame", "internal/atomicfile", "internal/golden", "internal/store", "playback", "tape"},
		"the changes to goldens that wait for review: a replay's live run written beside its tape (golden keeps unchanged lines) or stored; playback never imports it"},
	"internal/note": {nil,
		"the notes of a replay as values: made by the engine and the use case, worded once, grouped by present; the standard library alone"},
	"internal/environ": {nil,
		"a process environment as KEY=value strings: one variable read or set; the standard library alone"},
	"internal/datafolder": {nil,
		"the data a session started from: folders copied (bounded, never through a link), carried beside a tape, watched for use; the standard library alone"},
	"internal/inorder": {nil,
		"running work side by side, its results handed on in order: the standard library alone"},
	"internal/replaytest": {[]string{"frame", "playback", "tape"},
		"the fixture plugins and tapes of the tests of the rooms that replay; imported by tests only"},
	"tapetest": {[]string{"internal/capture", "internal/golden", "internal/pending", "internal/present", "internal/store", "playback"},
		"the go test front-end on the playback use case (and, for a missing tape, on capture: a host script recorded as tapedeck record --host does, written as play's Keep it writes a golden, updates written as test --update does): a plugin's goldens from its own go test"},
	"internal/present": {[]string{"internal/check", "internal/clock", "internal/coverage", "internal/diff", "internal/filter", "internal/fingerprint", "frame", "internal/atomicfile", "internal/escape", "internal/jsonscan", "internal/noise", "internal/note", "internal/profile", "internal/recent", "internal/screen", "internal/shellword", "message", "playback", "internal/htmlreport", "internal/shrink", "tape"},
		"output for people and machines: it reads the use cases' results and never runs anything"},
	"internal/playground": {[]string{"internal/check", "internal/datafolder", "internal/environ", "internal/golden", "internal/note", "internal/wrap", "frame", "internal/atomicfile", "internal/smallfile", "message", "playback", "internal/capture", "internal/redact", "internal/present", "internal/host", "internal/htmlreport", "internal/store", "internal/window", "internal/wire", "internal/escape", "internal/child", "tape"},
		"the browser front-end on the recording use case: the page is the host; check decides what the host refuses, report draws, net/http serves the page; datafolder copies what each run starts from; golden writes what Keep it keeps as git wants it; wrap only reads the original manifest it keeps"},
	"internal/relay": {[]string{"internal/child", "internal/wire"}, "the relay is on every byte's path: the standard library alone, the child start whose parent-death signal holds, and the framer"},
	"internal/spool": {nil, "the spool's format is read by the recorder's hot path and by the store: the standard library alone"},
	"frame":          {nil, "the frame model and its binary encoding: the standard library alone"},
	"internal/recorder": {[]string{"frame", "internal/relay", "internal/spool", "internal/wire"},
		"the recorder is a sink of the relay writing a spool; it never opens the store"},
	"internal/store": {[]string{"frame", "internal/profile", "internal/wire", "internal/shellword", "internal/spool", "internal/trust", "go.etcd.io/bbolt"},
		"the store owns bbolt and ingests spools (cut by the framer; the handshake read by the session's host profile); it never runs or compares anything"},
	"internal/host": {[]string{"frame", "internal/canon", "internal/child", "internal/jsonscan", "internal/note", "internal/window", "internal/wire", "message"},
		"the replay engine drives a plugin; it knows nothing of where recordings are kept"},
	"internal/diff": {[]string{"frame", "internal/canon", "internal/jsonscan", "internal/recent", "message", "github.com/sergi/go-diff"},
		"the comparison of two timelines; the only user of go-diff"},
	"message":              {[]string{"internal/jsonscan"}, "JSON-RPC parsing, on replay's hot path: the standard library and the scanner alone"},
	"tape":                 {[]string{"frame", "internal/jsonscan", "internal/wire"}, "the tape file format (a header-framed session's blocks as the framer spells them)"},
	"internal/wrap":        {[]string{"internal/jsonscan", "internal/shellword", "internal/smallfile", "internal/trust"}, "the manifest's launcher; it must not pull in the rest"},
	"internal/redact":      {[]string{"frame", "internal/jsonscan", "internal/jsonpath", "internal/recent", "internal/wire"}, "redaction of frames by rule (a header block says the redacted length)"},
	"internal/jsonpath":    {[]string{"internal/jsonscan"}, "the METHOD:PATH rules and looking a value up by its path: the standard library and the one JSON scanner"},
	"internal/check":       {[]string{"frame", "internal/profile", "internal/recent", "internal/smallfile", "internal/wire", "message", "github.com/santhosh-tekuri/jsonschema/v6"}, "what the host would reject, by the session's profile (its framing read as the framer reads it); the only user of the JSON Schema validator"},
	"internal/clock":       {[]string{"frame", "internal/environ"}, "the pinned clock's preloads"},
	"internal/coverage":    {[]string{"frame", "internal/profile", "internal/recent", "message"}, "what tapes cover of a manifest, or of what a profile says its peer offers"},
	"internal/fingerprint": {[]string{"frame", "internal/smallfile"}, "the environment fingerprint and its drift"},
	"internal/golden":      {[]string{"internal/atomicfile", "internal/diff", "internal/redact", "frame", "internal/wire", "message", "tape"}, "a golden tape written for git (relative, redacted) and its update that keeps unchanged lines byte for byte"},
	"internal/htmlreport":  {[]string{"internal/diff", "frame", "internal/recent", "message"}, "the HTML report (recent: the requests a timeline waits to pair, bounded)"},
	"internal/shrink": {[]string{"frame", "internal/atomicfile", "internal/diff", "internal/jsonpath", "internal/profile", "message", "playback", "tape"},
		"delta debugging, the shrink predicates, and the driver that replays candidates through playback (which never imports it)"},
	"internal/wire": {nil, "framing is on the relay's path: the standard library alone"},
	"internal/profile": {[]string{"frame", "internal/wire", "message"},
		"what tapedeck knows about each kind of host; every generic room is told by it, and it depends on nothing but the frame model"},
	"internal/jsonscan":      {nil, "the one JSON scanner: the standard library alone"},
	"internal/canon":         {[]string{"internal/jsonscan"}, "the one canonical JSON: what replay matches params by and diff compares frames by"},
	"internal/escape":        {nil, "escaping for the terminal: the standard library alone"},
	"internal/recent":        {nil, "what a stream reader keeps (a map that forgets its oldest keys, names and keys cut to a bound): the standard library alone"},
	"internal/shellword":     {nil, "quoting a word for sh: the standard library alone"},
	"internal/smallfile":     {nil, "reading a small named file: regular files only, capped; the standard library alone"},
	"internal/screen":        {[]string{"github.com/mattn/go-runewidth", "golang.org/x/term"}, "terminal width and colour"},
	"internal/atomicfile":    {nil, "writing a file whole or not at all"},
	"internal/trust":         {nil, "what this user may trust on disk: the standard library alone"},
	"internal/child":         {nil, "starting a child whose parent-death signal holds, and ending its process group: the standard library alone"},
	"internal/window":        {[]string{"frame", "internal/wire"}, "how much of a plugin's pipe a live timeline keeps (replay's and play's): the frame model and the framer alone"},
	"internal/bigtape":       {nil, "the big tape memory is measured on: the standard library alone"},
	"internal/browsertest":   {[]string{"github.com/chromedp/chromedp"}, "the headless browser of the HTML tests"},
	"internal/waittest":      {[]string{"internal/race"}, "how many tests, and replays within a proof, run at once where they wait on processes (fewer under the race detector): the standard library and race alone"},
	"internal/race":          {nil, "whether the build has the race detector, for the tests: nothing"},
	"bench/echo":             {nil, "a benchmark's plugin"},
	"bench/firstbyte":        {nil, "a benchmark's plugin"},
	"bench/lockstep":         {nil, "the minimal replayer replay is measured against"},
	"bench/refrelay":         {nil, "the reference relay the relay is measured against"},
	"bench/internal/measure": {nil, "the benchmarks' measuring"},
	"bench/relay":            {[]string{"bench/internal/measure"}, "the relay benchmark"},
	"bench/replaybench":      {[]string{"bench/internal/measure"}, "the replay benchmark"},
	"bench/memory":           {[]string{"bench/internal/measure", "internal/bigtape"}, "the peak memory benchmark, on the memory tests' big tape"},
}

// TestDependenciesPointOneWay checks every package's direct imports
// against layers (the standard library is always allowed).
func TestDependenciesPointOneWay(t *testing.T) {
	const mod = "github.com/tapedeck/tapedeck"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(f[0], mod), "/")
		seen[pkg] = true
		l, ok := layers[pkg]
		if !ok {
			t.Errorf("package %q has no place in the dependency rules (deps_test.go): add one, with the reason", f[0])
			continue
		}
		for _, imp := range f[1:] {
			first, _, _ := strings.Cut(imp, "/")
			if !strings.Contains(first, ".") {
				continue // the standard library
			}
			if !allowed(l.imports, mod, imp) {
				t.Errorf("%s imports %s, which it may not: %s", orRoot(pkg), imp, l.why)
			}
		}
	}
	var stale []string
	for pkg := range layers {
		if !seen[pkg] {
			stale = append(stale, pkg)
		}
	}
	sort.Strings(stale)
	for _, pkg := range stale {
		t.Errorf("deps_test.go has a rule for %q, which is not a package of the module", pkg)
	}
}

// TestBinaryIsStatic: the one binary is also the capture shim every
// plugin runs under, so what it links is paid at every plugin's start. It
// links net/http (the playground's page), and a program with package net
// built with cgo links libc dynamically (runtime/cgo, ld.so at every
// start: +1.3–2.4 MiB of the shim's peak RSS, and a binary that needs this
// machine's libc). So wherever the project builds the binary (the README's
// install line, the scripts; the tests' own builds too) it builds it with
// CGO_ENABLED=0, and the binary so built is static: no interpreter, no
// shared library, no runtime/cgo. The network stack stays the
// playground's: no other package of the binary imports net or net/http.
func TestBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: not with -short")
	}
	bin := filepath.Join(t.TempDir(), "tapedeck")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build .: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("read the binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary built with CGO_ENABLED=0 has a %v program header: it is not static", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary built with CGO_ENABLED=0 needs shared libraries %v (%v): it is not static", libs, err)
	}
	if info, err := os.Stat(bin); err == nil {
		t.Logf("the binary: %.1f MB", float64(info.Size())/1e6)
	}

	// Every build of the binary the project shows or runs says CGO_ENABLED=0.
	files, err := exec.Command("git", "ls-files", "*.sh", "README.md", "bench/README.md").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	buildsBinary := regexp.MustCompile(`\bgo (build|install)\b.*\s\.(\s|$)`)
	builds := 0
	for _, name := range strings.Fields(string(files)) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if !buildsBinary.MatchString(line) || strings.Contains(line, "cd ") {
				continue
			}
			builds++
			if !strings.Contains(line, "CGO_ENABLED=0") {
				t.Errorf("%s:%d builds the binary without CGO_ENABLED=0 (it would link libc dynamically): %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
	if builds == 0 {
		t.Error("found no line that builds the binary in the README or the scripts; the check looks for none")
	}

	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	const mod = "github.com/tapedeck/tapedeck"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, imports, _ := strings.Cut(line, ":")
		if !strings.HasPrefix(name, mod) || name == mod+"/internal/playground" {
			continue
		}
		for _, banned := range []string{"net", "net/http"} {
			if slices.Contains(strings.Fields(imports), banned) {
				t.Errorf("%s imports %s: the network stack is the playground's page's alone", name, banned)
			}
		}
	}
}

func allowed(list []string, mod, imp string) bool {
	for _, a := range list {
		if strings.Contains(strings.SplitN(a, "/", 2)[0], ".") {
			if imp == a || strings.HasPrefix(imp, a+"/") {
				return true
			}
		} else if imp == mod+"/"+a {
			return true
		}
	}
	return false
}

func orRoot(pkg string) string {
	if pkg == "" {
		return "main"
	}
	return pkg
}
