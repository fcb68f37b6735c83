package filter

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
)

func compiledOrFatal(t *testing.T, fs ...Filter) *Set {
	t.Helper()
	s, err := Compile(fs, &Config{}, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFiltersRewriteStringValuesOnly: a filter rewrites matches inside
// string values (escapes decoded and spelled again), never member names,
// numbers or host frames; a frame it does not match keeps its bytes; the
// JSON stays valid; At scopes a filter to a method and a path, a response
// taking the method of the request it answers; a line that is not JSON is
// filtered as text by filters without At; the note counts.
func TestFiltersRewriteStringValuesOnly(t *testing.T) {
	s := compiledOrFatal(t,
		Filter{Regex: `\d{4}-\d{2}-\d{2}`, Replacement: "[date]"},
		Filter{Regex: `id-[0-9a-z]+`, Replacement: "[id]", At: "session/get:result.turns[*]"},
	)
	frames := []frame.Frame{
		{Seq: 1, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","id":7,"method":"session/get","params":{"on":"2026-01-02"}}`)},
		{Seq: 2, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"nothing to see"}}`)},
		{Seq: 3, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0", "method":"ui/notify","params":{"2026-01-02":"on \"2026-01-02\"\n","n":20260102, "k":"id-abc"}}`)},
		{Seq: 4, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","id":7,"result":{"turns":[{"text":"id-x1 at 2026-03-04"}],"other":"id-x2"}}`)},
		{Seq: 5, Dir: frame.Out, Raw: []byte(`plugin says 2026-05-06 and id-q9`)},
		{Seq: 6, Dir: frame.Err, Raw: []byte(`log 2026-05-06`)},
		{Seq: 7, Event: frame.EventEOF, Dir: frame.In},
	}
	orig := make([]string, len(frames))
	for i, f := range frames {
		orig[i] = string(f.Raw)
	}
	out := s.Frames(frames, false, true)
	want := []string{
		orig[0],
		orig[1],
		`{"jsonrpc":"2.0", "method":"ui/notify","params":{"2026-01-02":"on \"[date]\"\n","n":20260102, "k":"id-abc"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"turns":[{"text":"[id] at [date]"}],"other":"id-x2"}}`,
		`plugin says [date] and id-q9`,
		orig[5], // stderr is not compared
		"",
	}
	for i := range out {
		if got := string(out[i].Raw); got != want[i] {
			t.Errorf("frame %d: %s\nwant      %s", i+1, got, want[i])
		}
		if i < 4 && !json.Valid(out[i].Raw) {
			t.Errorf("frame %d is no longer JSON: %s", i+1, out[i].Raw)
		}
		if string(frames[i].Raw) != orig[i] {
			t.Errorf("frame %d of the input changed", i+1)
		}
	}
	if &out[1].Raw[0] != &frames[1].Raw[0] {
		t.Error("a frame no filter matched was copied")
	}
	if got, want := s.Note(), "filters applied: [date] ×3, [id] ×1"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := s.Frames(frames[1:2], false, true); &got[0] != &frames[1] {
		t.Error("frames no filter matches were copied")
	}
	if out := s.Frames(frames, true, false); string(out[5].Raw) != "log [date]" {
		t.Errorf("compared stderr line: %s", out[5].Raw)
	}
}

// TestBadFiltersAreRefused: a tapedeck.json filter that does not compile,
// is empty, matches the empty string or has a bad "at" is refused in one
// line naming the file and the filter.
func TestBadFiltersAreRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ConfigName)
	for _, c := range []struct{ json, want string }{
		{`{"filters":[{"regex":"ok","replacement":"x"},{"regex":"(","replacement":"[p]"}]}`, `tapedeck.json: filter 2 (regex "("): bad regex: error parsing regexp: missing closing ): ` + "`(`"},
		{`{"filters":[{"regex":"","replacement":"x"}]}`, `tapedeck.json: filter 1 (regex ""): the regex is empty`},
		{`{"filters":[{"regex":"\\d*","replacement":"[n]"}]}`, `tapedeck.json: filter 1 (regex "\\d*"): the regex matches the empty string`},
		{`{"filters":[{"regex":"x","replacement":"y","at":"params.text"}]}`, `tapedeck.json: filter 1 (regex "x"): at: bad path "params.text": want METHOD:PATH`},
		{`{"filters":[{"regex":"x","placeholder":"y"}]}`, `unknown field "placeholder"`},
	} {
		os.WriteFile(path, []byte(c.json), 0o644)
		_, err := ReadConfig(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n got %v\nwant …%s…", c.json, err, c.want)
		}
	}
}

// TestConfigAddsFiltersOnce: AddToConfig keeps what the file has and adds
// each new rule and filter once, and ReadConfig reads them back.
func TestConfigAddsFiltersOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), ConfigName)
	os.WriteFile(path, []byte(`{"ignore":["a:b"]}`), 0o644)
	f := Filter{Regex: `<\d+>`, Replacement: "[n]", At: "m:params.x"}
	for range 2 {
		if err := AddToConfig(path, []string{"a:b", "c:d"}, []Filter{f}); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Ignore, " ") != "a:b c:d" || len(cfg.Filters) != 1 || cfg.Filters[0] != f {
		t.Errorf("config %+v", cfg)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"regex": "<\\d+>"`) {
		t.Errorf("written as\n%s", b)
	}
}

// TestExpandIsReplaceAll: expand, which filters replace with, says what
// ReplaceAllString says (empty matches and $-groups included) while under
// its limit, and refuses past it.
func TestExpandIsReplaceAll(t *testing.T) {
	for _, c := range []struct{ re, tmpl, v string }{
		{`\d+`, "[n]", "a1b22c333"},
		{`x*`, "-", "axxbx"},
		{`(\w+)@(\w+)`, "$2 at ${1}", "me@home you@work"},
		{`^`, "> ", "line"},
		{`.`, "$0$0", "abc"},
		{`\bfoo`, "X", "foo afoo foo"},
		{`(?m)^a`, "B", "a\na\nba"},
		{`\B.`, "-", "ab cd"},
		{`a$`, "Z", "aaa"},
		{`x|$`, "!", "axb"},
	} {
		f := rawFilter(c.re, c.tmpl)
		got, _, ok := expand(&f, c.v, 1<<20)
		if want := f.re.ReplaceAllString(c.v, c.tmpl); !ok || got != want {
			t.Errorf("expand(%s, %q, %q) = %q, %v; ReplaceAllString says %q", c.re, c.tmpl, c.v, got, ok, want)
		}
	}
	f := rawFilter(`.`, "$0$0")
	if _, _, ok := expand(&f, "abcd", 7); ok {
		t.Error("expand went past its limit")
	}
}

// rawFilter is a filter of re and tmpl as compile makes it, but for the
// refusal of a regex that matches the empty string.
func rawFilter(re, tmpl string) compiledFilter {
	f := compiledFilter{Filter: Filter{Regex: re, Replacement: tmpl}, re: regexp.MustCompile(re)}
	tree, _ := syntax.Parse(re, syntax.Perl)
	f.context = looksBack(tree)
	return f
}

// FuzzExpandIsReplaceAll: however the value reads, expand (one match at a
// time, from the end of the last) replaces what ReplaceAllString does.
func FuzzExpandIsReplaceAll(f *testing.F) {
	patterns := []string{`\d+`, `x*`, `(\w+)@(\w+)`, `^`, `.`, `\bfoo`, `(?m)^a`, `\B.`, `a$`, `x|$`, `[a-c]{2}`, `\s*,\s*`}
	f.Add(uint8(0), "a1b22c333")
	f.Add(uint8(5), "foo afoo\nfoo")
	f.Fuzz(func(t *testing.T, which uint8, v string) {
		p := patterns[int(which)%len(patterns)]
		c := rawFilter(p, "<$0|${1}>")
		got, _, ok := expand(&c, v, 1<<24)
		if want := c.re.ReplaceAllString(v, "<$0|${1}>"); !ok || got != want {
			t.Fatalf("expand(%s, %q) = %q, %v; ReplaceAllString says %q", p, v, got, ok, want)
		}
	})
}

// TestFilterBoundsAreCheckedFirst: a regex of too many groups or a
// replacement too long is refused when the filters are compiled, before
// it meets a value (201 groups had cost 3.5 GB and 112 s on a 4 MB tape).
func TestFilterBoundsAreCheckedFirst(t *testing.T) {
	many := strings.Repeat("(a)", 201)
	if _, err := Compile([]Filter{{Regex: many, Replacement: "x"}}, &Config{}, ""); err == nil || !strings.Contains(err.Error(), "201 groups") {
		t.Errorf("201 groups: %v, want refused", err)
	}
	if _, err := Compile([]Filter{{Regex: "a", Replacement: strings.Repeat("x", 5000)}}, &Config{}, ""); err == nil || !strings.Contains(err.Error(), "replacement is 5000 bytes") {
		t.Errorf("a 5000-byte replacement: %v, want refused", err)
	}
}

// TestFiltersThatDoubleStayBounded: forty filters of "$0$0" in
// tapedeck.json leave a value at most twice its length and 4 KiB, instead
// of 2^40 times it (diff ran out of memory at 1.4 GB).
func TestFiltersThatDoubleStayBounded(t *testing.T) {
	var fs []Filter
	for i := 0; i < 40; i++ {
		fs = append(fs, Filter{Regex: ".", Replacement: "$0$0"})
	}
	set, err := Compile(fs, &Config{}, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := set.text("abcdefgh", "m", nil, true, false)
	if len(got) > 2*8+4<<10 {
		t.Errorf("the value grew to %d bytes", len(got))
	}
	// The note counts the filters that applied, not those refused.
	if set.counts[0] != 8 || set.counts[len(fs)-1] != 0 {
		t.Errorf("counted %d replacements by the first filter and %d by the last; want 8 and 0 (refused)", set.counts[0], set.counts[len(fs)-1])
	}
}

// BenchmarkHundredFilters: a hundred filters over 2,000 frames of a
// panel's JSON, none of whose strings most filters match.
func BenchmarkHundredFilters(b *testing.B) {
	var filters []Filter
	for i := range 100 {
		filters = append(filters, Filter{Regex: fmt.Sprintf(`note%d [0-9a-z]{6}`, i), Replacement: "note [id]"})
	}
	set, err := Compile(filters, &Config{}, "")
	if err != nil {
		b.Fatal(err)
	}
	frames := make([]frame.Frame, 2000)
	for i := range frames {
		frames[i] = frame.Frame{Seq: uint64(i + 1), Dir: frame.Out, Raw: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"ui/setPanel","params":{"tree":{"type":"column","children":[{"type":"text","text":"hello %d"},{"type":"button","id":"b%d","label":"Save note"},{"type":"text","text":"note7 abc123"}]}}}`, i, i))}
	}
	b.ResetTimer()
	for range b.N {
		set.Frames(frames, false, false)
	}
}

// TestManyMatchesStayBounded: a regex of 32 groups over a 4 MB value that
// matches everywhere (1 MB here) stops at maxMatches, holding one match's positions
// at a time (FindAll of 201 groups built 3.5 GB and took 112 s on a 4 MB
// tape), and one that matches a few times is applied.
func TestManyMatchesStayBounded(t *testing.T) {
	v := strings.Repeat("ab", 512<<10)
	for _, f := range []compiledFilter{rawFilter(strings.Repeat("(a)?", 31)+"(b)", "x"), rawFilter(`(?:^|\B)(a)(b)`, "x")} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, _, ok := expand(&f, v, 2*len(v)+4<<10)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if ok {
			t.Errorf("%s: applied to %d matches, want refused past %d", f.Regex, len(v)/2, maxMatches)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 || took > 5*time.Second {
			t.Errorf("%s: allocated %d MB in %v for a 1 MB value, want at most 64 MB and 5 s", f.Regex, got>>20, took)
		}
	}
	few := "x" + strings.Repeat("-", 1<<20) + "ab"
	f := rawFilter(strings.Repeat("(a)?", 31)+"(b)", "x")
	if out, n, ok := expand(&f, few, 2*len(few)+4<<10); !ok || n != 1 || !strings.HasSuffix(out, "-x") {
		t.Errorf("one match in 1 MB: %d matches, %v", n, ok)
	}
}

// TestEachHoldsNoMoreThanItsHostCalls streams 500,000 host requests, each
// answered, through a filter scoped by method: what Each remembers of the
// host's requests (to scope a response by the request it answers) must
// not grow with them, and a response still takes its request's method.
func TestEachHoldsNoMoreThanItsHostCalls(t *testing.T) {
	s := compiledOrFatal(t, Filter{Regex: `id-[0-9]+`, Replacement: "[id]", At: "session/get:result.id"})
	each := s.Each(false, false)
	var before, after runtime.MemStats
	const n = 500000
	var raw []byte
	for i := range n {
		if i == 2*diff.MaxHostCalls {
			runtime.GC()
			runtime.ReadMemStats(&before)
		}
		raw = fmt.Appendf(raw[:0], `{"jsonrpc":"2.0","id":%d,"method":"session/get"}`, i)
		each(&frame.Frame{Seq: uint64(2*i + 1), Dir: frame.In, Raw: raw})
		raw = fmt.Appendf(raw[:0], `{"jsonrpc":"2.0","id":%d,"result":{"id":"id-%d"}}`, i, i)
		out := each(&frame.Frame{Seq: uint64(2*i + 2), Dir: frame.Out, Raw: raw})
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"id":"[id]"}}`, i); string(out.Raw) != want {
			t.Fatalf("response %d filtered to %s, want %s", i, out.Raw, want)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(each) // what it remembers is what is measured
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4<<20 {
		t.Errorf("%d more host requests grew the heap %d bytes: want what Each remembers bounded (under 4 MiB)", n-2*diff.MaxHostCalls, grew)
	}
}
