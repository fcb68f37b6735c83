package filter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
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
	} {
		re := regexp.MustCompile(c.re)
		got, ok := expand(re, c.tmpl, c.v, re.FindAllStringSubmatchIndex(c.v, -1), 1<<20)
		if want := re.ReplaceAllString(c.v, c.tmpl); !ok || got != want {
			t.Errorf("expand(%s, %q, %q) = %q, %v; ReplaceAllString says %q", c.re, c.tmpl, c.v, got, ok, want)
		}
	}
	re := regexp.MustCompile(`.`)
	if _, ok := expand(re, "$0$0", "abcd", re.FindAllStringSubmatchIndex("abcd", -1), 7); ok {
		t.Error("expand went past its limit")
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
