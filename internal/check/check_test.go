package check

import (
	"runtime"

	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tapedeck/tapedeck/internal/profile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
	"github.com/tapedeck/tapedeck/tape"
)

// tapeDir holds one tape per rule, each naming in its header (the session's
// "expect" member, which the tape format ignores) exactly the findings it
// must give, and clean tapes that must give none.
const tapeDir = "testdata/rules"

// want is one expected finding; Path is compared when it is set.
type want struct {
	Level Level  `json:"level"`
	Rule  string `json:"rule"`
	Seq   uint64 `json:"seq"`
	Path  string `json:"path,omitempty"`
}

func (w want) String() string {
	s := fmt.Sprintf("%s %s #%d", w.Level, w.Rule, w.Seq)
	if w.Path != "" {
		s += " " + w.Path
	}
	return s
}

// allPermissions is the manifest a case gets unless it says otherwise.
var allPermissions = []string{"prompt.inject", "terminal.write", "session.read", "workspace.read", "net.request"}

// run feeds frames to a new Checker, then finishes it.
func run(opts Options, frames []frame.Frame) []Finding {
	c := New(opts)
	var out []Finding
	for i := range frames {
		out = append(out, c.Feed(&frames[i])...)
	}
	return append(out, c.Finish()...)
}

// compare reports the difference between the findings and the expected
// ones: every expected finding must be there, and nothing else.
func compare(t *testing.T, got []Finding, wants []want) {
	t.Helper()
	matched := make([]bool, len(got))
	for _, w := range wants {
		found := false
		for i, g := range got {
			if !matched[i] && g.Level == w.Level && g.Rule == w.Rule && g.Seq == w.Seq && (w.Path == "" || g.Path == w.Path) {
				matched[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing finding: %v", w)
		}
	}
	extra := 0
	for i, g := range got {
		if !matched[i] {
			if extra++; extra <= 10 {
				t.Errorf("unexpected finding: %s %s #%d %s: %s", g.Level, g.Rule, g.Seq, g.Path, g.Message)
			}
		}
	}
	if extra > 10 {
		t.Errorf("… and %d more unexpected findings", extra-10)
	}
}

// readTape reads a tape file with its expectations.
func readTape(t *testing.T, path string) (opts Options, frames []frame.Frame, wants []want) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := bytes.Cut(b, []byte("\n"))
	var h struct {
		Session struct {
			Manifest json.RawMessage `json:"manifest"`
			Expect   []want          `json:"expect"`
		} `json:"session"`
	}
	if err := json.Unmarshal(header, &h); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	switch m := h.Session.Manifest; {
	case m == nil:
		opts.Manifest = &Manifest{Permissions: allPermissions}
	case string(m) == "null":
		opts.NoManifest = "the tape says there is none"
	default:
		if opts.Manifest, err = ParseManifest(m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	tr, err := tape.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	opts.APIVersion = tr.Session().APIVersion
	for {
		f, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		cp := *f
		cp.Raw = bytes.Clone(f.Raw)
		if f.Cut != nil {
			cut := *f.Cut
			cp.Cut = &cut
		}
		if code := f.Code(); code != nil {
			n := *code
			cp.SetEnd(f.Signal(), &n)
		}
		frames = append(frames, cp)
	}
	return opts, frames, h.Session.Expect
}

// TestRules runs every rule tape and every generated case, and checks
// that between them every rule is tripped at least once.
func TestRules(t *testing.T) {
	if race.Enabled {
		// 15 s under the detector, 3 s without: the race step is here for Lint.
		t.Skip("check reads a session on one goroutine; Lint's own goroutine is TestLint's and TestLintFallsBehind's under the race detector")
	}
	tripped := map[string]bool{}
	note := func(ws []want) {
		for _, w := range ws {
			tripped[w.Rule] = true
		}
	}
	t.Run("tapes", func(t *testing.T) {
		paths, err := filepath.Glob(filepath.Join(tapeDir, "*.jsonl"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no tapes in %s (%v)", tapeDir, err)
		}
		for _, path := range paths {
			name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
			opts, frames, wants := readTape(t, path)
			if strings.HasPrefix(name, "clean") {
				if len(wants) != 0 {
					t.Errorf("%s: a clean tape expects findings", name)
				}
			} else if !hasRule(wants, name) {
				t.Errorf("%s: the tape does not expect a finding of rule %s", name, name)
			}
			note(wants)
			t.Run(name, func(t *testing.T) { compare(t, run(opts, frames), wants) })
		}
	})
	t.Run("generated", func(t *testing.T) {
		for _, gc := range generated() {
			note(gc.want)
			t.Run(gc.name, func(t *testing.T) {
				opts := Options{Manifest: &Manifest{Permissions: allPermissions}, APIVersion: gc.api}
				compare(t, run(opts, gc.frames), gc.want)
			})
		}
	})
	tripped[RuleLintStopped] = true // TestLintFallsBehind
	for _, r := range Rules() {
		if !tripped[r.ID] {
			t.Errorf("rule %s is tripped by no tape and no case", r.ID)
		}
	}
}

func hasRule(ws []want, rule string) bool {
	for _, w := range ws {
		if w.Rule == rule {
			return true
		}
	}
	return false
}

// tb builds a tape in code, for the cases too big to read as files.
type tb struct {
	frames []frame.Frame
}

// add appends a frame at ms milliseconds and returns its seq.
func (b *tb) add(ms float64, dir frame.Dir, raw string) uint64 {
	seq := uint64(len(b.frames) + 1)
	b.frames = append(b.frames, frame.Frame{Seq: seq, At: int64(ms * float64(time.Millisecond)), Dir: dir, Raw: []byte(raw)})
	return seq
}

// start is initialize, its answer and panel/open.
func (b *tb) start(api int) {
	b.add(0, frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":%d,"plugin":{"id":"t"},"language":"en","context":{}}}`, api))
	b.add(1, frame.In, `{"jsonrpc":"2.0","method":"panel/open","params":{"context":{}}}`)
	b.add(2, frame.Out, `{"jsonrpc":"2.0","id":1,"result":{}}`)
}

func (b *tb) panel(ms float64, tree string) uint64 {
	return b.add(ms, frame.Out, `{"jsonrpc":"2.0","method":"ui/setPanel","params":{"tree":`+tree+`}}`)
}

type genCase struct {
	name   string
	api    int
	frames []frame.Frame
	want   []want
}

// tree of n elements: a column holding n-1 dividers.
func flatTree(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"column","children":[`)
	for i := 1; i < n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"divider"}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// listTree is a list of items, each with one action: 1 + 2*items elements.
func listTree(items int) string {
	var b strings.Builder
	b.WriteString(`{"type":"list","id":"l","items":[`)
	for i := 0; i < items; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"i%d","title":"t","actions":[{"id":"rm"}]}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func generated() []genCase {
	var cases []genCase
	add := func(name string, api int, build func(b *tb) []want) {
		b := &tb{}
		b.start(api)
		ws := build(b)
		cases = append(cases, genCase{name: name, api: api, frames: b.frames, want: ws})
	}

	add("ui-too-many-elements/2000 is fine", 1, func(b *tb) []want {
		b.panel(10, flatTree(2000))
		b.panel(20, listTree(999)) // 1 + 999 items + 999 actions + … = 1999
		return nil
	})
	add("ui-too-many-elements/2001", 1, func(b *tb) []want {
		s := b.panel(10, flatTree(2001))
		return []want{{Error, RuleUITooMany, s, "params.tree.children[1999]"}}
	})
	add("ui-too-many-elements/list items and actions count", 1, func(b *tb) []want {
		s := b.panel(10, listTree(1000)) // 1 + 1000 items + 1000 actions
		return []want{{Error, RuleUITooMany, s, "params.tree.items[999].actions[0]"}}
	})
	add("ui-string-cut", 1, func(b *tb) []want {
		ok := strings.Repeat("é", maxString)
		b.panel(10, `{"type":"text","text":"`+ok+`"}`)
		s := b.panel(20, `{"type":"column","children":[{"type":"text","text":"`+ok+`x"}]}`)
		return []want{{Warning, RuleUIStringCut, s, "params.tree.children[0].text"}}
	})
	add("ui-too-deep/12 levels is fine", 1, func(b *tb) []want {
		b.panel(10, strings.Repeat(`{"type":"column","children":[`, 12)+`{"type":"divider"}`+strings.Repeat(`]}`, 12))
		return nil
	})
	add("copy-length", 2, func(b *tb) []want {
		ok := strings.Repeat("x", 100000)
		b.add(10, frame.Out, `{"jsonrpc":"2.0","method":"host/copy","params":{"text":"`+ok+`"}}`)
		s := b.add(20, frame.Out, `{"jsonrpc":"2.0","method":"host/copy","params":{"text":"`+ok+`y"}}`)
		return []want{{Warning, RuleCopyLength, s, "params.text"}}
	})
	add("stderr-line-cut", 1, func(b *tb) []want {
		b.add(10, frame.Err, strings.Repeat("ü", maxLogLine))
		s := b.add(20, frame.Err, strings.Repeat("ü", maxLogLine+1))
		return []want{{Info, RuleStderrLineCut, s, ""}}
	})
	add("line-too-long/exactly 16 MiB is read", 1, func(b *tb) []want {
		text := strings.Repeat("x", maxLine-len(`{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"","kind":"info"}}`))
		b.add(10, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"`+text+`","kind":"info"}}`)
		return nil
	})
	add("line-too-long/one byte more", 1, func(b *tb) []want {
		text := strings.Repeat("x", maxLine+1-len(`{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"","kind":"info"}}`))
		s := b.add(10, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"`+text+`","kind":"info"}}`)
		b.add(11, frame.Out, `not read`)
		return []want{{Error, RuleLineTooLong, s, ""}}
	})

	// Rates: the window opens with the first message and the first
	// message after it ends opens the next.
	add("rate-messages/240 in a window, stderr included, is fine", 1, func(b *tb) []want {
		// The initialize answer at 2 ms opened the window: 239 more.
		for i := 0; i < 239; i++ {
			dir := frame.Out
			if i%2 == 0 {
				dir = frame.Err
			}
			b.add(2+float64(i)*4, dir, `{"jsonrpc":"2.0","method":"ui/showPanel","params":{}}`)
		}
		// At 1002 ms a new window opens.
		for i := 0; i < 240; i++ {
			b.add(1002+float64(i), frame.Err, `a log line`)
		}
		return nil
	})
	add("rate-messages/241", 1, func(b *tb) []want {
		var ws []want
		for i := 0; i < 240; i++ {
			dir := frame.Err
			if i%3 == 0 {
				dir = frame.Out
			}
			s := b.add(500+float64(i), dir, `{"jsonrpc":"2.0","method":"ui/showPanel","params":{}}`)
			if i == 239 { // the 241st: the initialize answer at 2 ms opened the window
				ws = append(ws, want{Error, RuleRateMessages, s, ""})
			}
		}
		return ws
	})
	add("rate-lines/480 stdout lines are fine", 1, func(b *tb) []want {
		for i := 0; i < 479; i++ {
			b.add(2+float64(i)/1000, frame.Out, ``)
		}
		return nil
	})
	add("rate-lines/481", 1, func(b *tb) []want {
		var s uint64
		for i := 0; i < 480; i++ {
			s = b.add(2+float64(i)/1000, frame.Out, `  `) // blank lines are not messages, but lines
		}
		return []want{{Error, RuleRateLines, s, ""}}
	})
	add("answer-unknown-id/not after a cut host frame", 1, func(b *tb) []want {
		s := b.add(10, frame.In, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":"`)
		b.frames[s-1].Cut = &frame.Cut{Len: 80 << 20}
		b.add(20, frame.Out, `{"jsonrpc":"2.0","id":9,"result":{}}`)
		return nil
	})
	add("notify-dropped/700 ms is fine", 1, func(b *tb) []want {
		b.add(10, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"a","kind":"info"}}`)
		b.add(710, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"b","kind":"info"}}`)
		return nil
	})
	add("shutdown/exit at 1.5 s is fine", 1, func(b *tb) []want {
		b.add(10, frame.In, `{"jsonrpc":"2.0","method":"shutdown","params":{}}`)
		code := 0
		b.frames = append(b.frames, frame.Frame{Seq: uint64(len(b.frames) + 1), At: int64(1510 * time.Millisecond), Event: frame.EventExit}.WithEnd("", &code))
		return nil
	})
	add("shutdown-kill/after a SIGTERM", 1, func(b *tb) []want {
		b.add(10, frame.In, `{"jsonrpc":"2.0","method":"shutdown","params":{}}`)
		b.frames = append(b.frames, frame.Frame{Seq: uint64(len(b.frames) + 1), At: int64(11 * time.Millisecond), Event: frame.EventEOF, Dir: frame.In})
		b.frames = append(b.frames, frame.Frame{Seq: uint64(len(b.frames) + 1), At: int64(1510 * time.Millisecond), Event: frame.EventSignal}.WithEnd("SIGTERM", nil))
		s := uint64(len(b.frames) + 1)
		b.frames = append(b.frames, frame.Frame{Seq: s, At: int64(3011 * time.Millisecond), Event: frame.EventExit}.WithEnd("SIGKILL", nil))
		return []want{{Error, RuleShutdownKill, s, ""}}
	})
	return cases
}

// TestFindingText checks the words of a few findings: what is wrong, the
// path, and what the host does.
func TestFindingText(t *testing.T) {
	b := &tb{}
	b.start(1)
	b.panel(10, `{"type":"column","children":[{"type":"button","id":"go","variant":"big","label":"Go"},{"type":"card"}]}`)
	b.add(20, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"a","kind":"info"}}`)
	b.add(30, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"b","kind":"info"}}`)
	got := run(Options{Manifest: &Manifest{}}, b.frames)
	texts := map[string]Finding{}
	for _, f := range got {
		texts[f.Rule] = f
	}
	for _, tc := range []struct{ rule, method, path, text string }{
		{RuleUIBadEnum, "ui/setPanel", "params.tree.children[0].variant", `variant "big" is not one of "primary", "secondary", "ghost", "danger": the host rejects the whole ui/setPanel (-32602) and the old panel stays; sent as a notification, it fails silently`},
		{RuleUIUnknownType, "ui/setPanel", "params.tree.children[1]", `element type "card" needs apiVersion 4 (the plugin's is 1): the host rejects`},
		{RuleNotifyDropped, "ui/notify", "", `ui/notify 10ms after the one shown at #5: the host drops a ui/notify within 700 ms of the last one shown (and still answers null)`},
	} {
		f, ok := texts[tc.rule]
		if !ok {
			t.Errorf("no %s finding in %+v", tc.rule, got)
			continue
		}
		if f.Method != tc.method || f.Path != tc.path || !strings.HasPrefix(f.Message, tc.text) {
			t.Errorf("%s finding = %q %q %q\nwant %q %q %q…", tc.rule, f.Method, f.Path, f.Message, tc.method, tc.path, tc.text)
		}
	}
}

// TestAPIVersion: the initialize frame's apiVersion wins over the options.
func TestAPIVersion(t *testing.T) {
	b := &tb{}
	b.start(4)
	b.panel(10, `{"type":"card","children":[{"type":"text","text":"hi"}]}`)
	b.add(20, frame.Out, `{"jsonrpc":"2.0","method":"ui/setPanel","params":{"tree":{"type":"graph"}}}`)
	got := run(Options{Manifest: &Manifest{APIVersion: 1}}, b.frames)
	compare(t, got, []want{{Error, RuleUIUnknownType, 5, "params.tree"}})
}

// TestSchemas checks the schema files themselves: every x-rule names a
// rule, every method has a since, and the method files are the documented
// plugin→host methods and the host's browser/* (TestMethods has their
// permissions and versions).
func TestSchemas(t *testing.T) {
	s, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, r := range Rules() {
		if known[r.ID] {
			t.Errorf("rule %s is listed twice", r.ID)
		}
		known[r.ID] = true
	}
	err = fs.WalkDir(schemaFS, "schemas", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := schemaFS.ReadFile(path)
		doc, err := parseDoc(b)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if r, ok := x["x-rule"].(string); ok && !known[r] {
					t.Errorf("%s: x-rule %q is not a rule", path, r)
				}
				if rs, ok := x["x-rules"].(map[string]any); ok {
					for _, r := range rs {
						if !known[r.(string)] {
							t.Errorf("%s: x-rules names %q, not a rule", path, r)
						}
					}
				}
				for _, e := range x {
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(doc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, m := range s.methods {
		names = append(names, name)
		if m.since < 1 {
			t.Errorf("%s: no x-since", m.file)
		}
	}
	sort.Strings(names)
	const documented = "browser/close browser/eval browser/hide browser/info browser/navigate browser/open browser/profiles browser/removeProfile browser/show browser/signIn browser/sites browser/wait context/get host/copy host/info host/openUrl host/revealPath host/timer net/fetch prompt/inject session/get storage/get storage/keys storage/set terminal/send ui/notify ui/setBadge ui/setPanel ui/showPanel workspace/list"
	if got := strings.Join(names, " "); got != documented {
		t.Errorf("methods with a schema:\n%s\nwant\n%s", got, documented)
	}
	var levels []int
	for _, l := range s.levels {
		levels = append(levels, l.since)
	}
	if fmt.Sprint(levels) != "[1 4 5]" {
		t.Errorf("UI tree levels = %v, want [1 4 5]", levels)
	}
}

// TestPath spells instance locations.
func TestPath(t *testing.T) {
	v := map[string]any{"tree": map[string]any{"children": []any{map[string]any{"a-b": "x", "0": "y"}}}}
	for _, tc := range []struct {
		loc  []string
		want string
	}{
		{nil, "params"},
		{[]string{"tree", "children", "0"}, "params.tree.children[0]"},
		{[]string{"tree", "children", "0", "a-b"}, `params.tree.children[0]["a-b"]`},
		{[]string{"tree", "children", "0", "0"}, `params.tree.children[0]["0"]`},
	} {
		if got := jsonPath("params", v, tc.loc); got != tc.want {
			t.Errorf("jsonPath(%q) = %s, want %s", tc.loc, got, tc.want)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for the Lint's goroutine and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSuffix(l.b.String(), "\n"), "\n")
}

// TestLint: a live lint writes the same findings as the batch checker, one
// JSON line each with the session id, and the end-of-session ones on Close.
func TestLint(t *testing.T) {
	opts, frames, wants := readTape(t, filepath.Join(tapeDir, "request-unanswered.jsonl"))
	var buf lockedBuffer
	l := NewLint(&buf, "01abc", opts)
	for i := range frames {
		l.Frame(&frames[i])
		if len(frames[i].Raw) > 0 {
			frames[i].Raw[0] = 'X' // Lint must have copied it
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	l.Frame(&frames[0]) // after Close: ignored
	var got []Finding
	for _, line := range buf.lines() {
		var f struct {
			Session string `json:"session"`
			Finding
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("lint line %q: %v", line, err)
		}
		if f.Session != "01abc" {
			t.Errorf("lint line %q: session %q", line, f.Session)
		}
		got = append(got, f.Finding)
	}
	compare(t, got, wants)

	var nilLint *Lint
	nilLint.Frame(&frames[0])
	if err := nilLint.Close(); err != nil {
		t.Errorf("nil Lint Close: %v", err)
	}
}

// TestOpenLint appends to a file.
func TestOpenLint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lint.jsonl")
	if err := os.WriteFile(path, []byte("{\"earlier\":true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, frames, wants := readTape(t, filepath.Join(tapeDir, "notify-dropped.jsonl"))
	l, err := OpenLint(path, "s1", opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		l.Frame(&frames[i])
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
	}
	if n != 1+len(wants) {
		t.Errorf("lint file has %d lines, want %d", n, 1+len(wants))
	}
}

// blockingWriter blocks every Write until release is closed; entered
// gets a value as each Write begins.
type blockingWriter struct{ entered, release chan struct{} }

func (w blockingWriter) Write(p []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.release
	return len(p), nil
}

// TestLintFallsBehind: while the checker is stuck, Frame keeps returning;
// past the backlog bound the Lint gives up with one finding. The checker
// is stuck writing the first frame's finding before the rest come (else,
// on a loaded machine, it took 63 frames in one batch before its first
// write and the 17 after it stayed under the bound).
func TestLintFallsBehind(t *testing.T) {
	w := blockingWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
	var buf lockedBuffer
	l := NewLint(io.MultiWriter(w, &buf), "s", Options{})
	big := bytes.Repeat([]byte("x"), 1<<20)
	l.Frame(&frame.Frame{Seq: 1, At: 1, Dir: frame.Out, Raw: big})
	<-w.entered
	for i := 2; i <= 80; i++ { // 79 MiB more of stdout, more than the bound
		l.Frame(&frame.Frame{Seq: uint64(i), At: int64(i), Dir: frame.Out, Raw: big})
	}
	close(w.release)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines := buf.lines()
	if last := lines[len(lines)-1]; !strings.Contains(last, `"rule":"lint-stopped"`) {
		t.Errorf("last lint line = %s, want the lint-stopped finding", last)
	}
}

// TestUnansweredRequestsCostBoundedMemory: requests that are never
// answered, with 4 KB ids, are followed by a hash of the id, without
// params larger than maxKeptParams, and at most maxTracked of them, under
// every profile (80,000 requests with 4 KB ids had held 575 MB).
func TestUnansweredRequestsCostBoundedMemory(t *testing.T) {
	if race.Enabled {
		t.Skip("measures the heap, which the race detector multiplies; the plain run measures it")
	}
	id := strings.Repeat("i", 4<<10)
	params := `{"text":"` + strings.Repeat("p", maxKeptParams) + `"}`
	for _, p := range profile.All() {
		c := New(Options{Profile: p})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		raw := make([]byte, 0, len(id)+len(params)+100)
		for i := range 500 {
			raw = fmt.Appendf(raw[:0], `{"jsonrpc":"2.0","id":"%s%d","method":"x/y","params":%s}`, id, i, params)
			c.Feed(&frame.Frame{Seq: uint64(i + 1), Dir: frame.In, Raw: raw})
			raw = fmt.Appendf(raw[:0], `{"jsonrpc":"2.0","id":"%s%d","method":"x/z","params":%s}`, id, i, params)
			c.Feed(&frame.Frame{Seq: uint64(i + 1), Dir: frame.Out, Raw: raw})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 4<<20 {
			t.Errorf("%s: 1,000 requests in flight hold %d MB, want at most 4 MB", p.Name(), grown>>20)
		}
		runtime.KeepAlive(c)
	}
}
