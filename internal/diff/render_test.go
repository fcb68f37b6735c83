package diff

import (
	"encoding/json"
	"strings"
	"testing"
)

func render(t *testing.T, r Result) string {
	t.Helper()
	var b strings.Builder
	if err := Render(&b, &r, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSameChangeIsShownOnce: a label changed in two panels prints one
// block that names the other, by seq alone.
func TestSameChangeIsShownOnce(t *testing.T) {
	panel := func(label, count string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":{"type":"column","children":[{"type":"text","text":"` + label + `"},{"type":"text","text":"clicked ` + count + `"}]}}}`
	}
	rec := timeline("> "+initReq, "< "+panel("Hello", "0"), "< "+notify, "< "+panel("Hello", "1"), "exit 0")
	live := timeline("> "+initReq, "! starting", "< "+panel("Howdy", "0"), "< "+notify, "< "+panel("Howdy", "1"), "exit 0")
	r := Frames(rec, live, Options{})
	if len(r.Differences) < 2 {
		t.Fatalf("differences: %s", kinds(r))
	}
	out := render(t, r)
	if n := strings.Count(out, `params.tree.children[0].text: "Hello" → "Howdy"`); n != 1 {
		t.Errorf("the change is shown %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "changed   request ui/setPanel  recorded seq 2, replayed seq 3\n    and 1 more like it: recorded seq 4; replayed seq 5\n") {
		t.Errorf("no one block with \"and 1 more like it\":\n%s", out)
	}
	if strings.Contains(out, "#") {
		t.Errorf("a second numbering beside the seqs:\n%s", out)
	}
	g := r.Groups()
	var sp *Group
	for i := range g {
		if g[i].What == "request ui/setPanel" {
			sp = &g[i]
		}
	}
	if sp == nil || sp.Count != 2 || len(sp.RecordedSeqs) != 2 || len(sp.LiveSeqs) != 2 {
		t.Errorf("groups: %+v", g)
	}
	// Another change of the same message is its own block.
	live = timeline("> "+initReq, "< "+panel("Howdy", "0"), "< "+notify, "< "+panel("Hi", "1"), "exit 0")
	if out := render(t, Frames(rec, live, Options{})); strings.Contains(out, "more like it") || strings.Count(out, "changed   request") != 2 {
		t.Errorf("two different changes:\n%s", out)
	}
	// The same notification missing twice: once.
	rec = timeline("< "+notify, "< "+badge, "< "+notify, "exit 0")
	live = timeline("< "+badge, "exit 0")
	if out := render(t, Frames(rec, live, Options{})); strings.Count(out, "missing") != 1 || !strings.Contains(out, "missing   notification ui/notify  recorded seq 1\n    and 1 more like it: recorded seq 3\n") {
		t.Errorf("a notification missing twice:\n%s", out)
	}
}

// TestStringsAsSent: <, > and & stay as they are in the paths, the JSON
// and the nodes; control characters stay escaped.
func TestStringsAsSent(t *testing.T) {
	rec := timeline(`< {"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":{"type":"text","text":"a < b & c"}}}`)
	live := timeline(`< {"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":{"type":"text","text":"a > b & c\u001b"}}}`)
	r := Frames(rec, live, Options{Panel: "ui/setPanel"})
	out := render(t, r)
	for _, want := range []string{
		`params.tree.text: "a < b & c" → "a > b & c\u001b"`,
		`-      "text": "a < b & c",`,
		`+      "text": "a > b & c\u001b",`,
		`changed node params.tree (text "a > b & c\u001b")`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `\u003c`) || strings.Contains(out, `\u0026`) || strings.Contains(out, "\x1b") {
		t.Errorf("escaped too much or too little:\n%s", out)
	}
	if !strings.Contains(r.Differences[0].Recorded.Pretty, `"a < b & c"`) {
		t.Errorf("pretty JSON escapes <:\n%s", r.Differences[0].Recorded.Pretty)
	}
}

const (
	longOld = "Please write a summary of the note below in three sentences, keeping names, dates and numbers exactly (created 2024-01-01 by Ada)"
	longNew = "Please write a summary of the note below in three sentences, keeping names, dates and numbers exactly (created 2024-01-02 by Ada)"
)

func notifyOf(msg string) string {
	b, _ := json.Marshal(msg)
	return `{"jsonrpc":"2.0","method":"ui/notify","params":{"kind":"info","message":` + string(b) + `}}`
}

// TestLongStringShowsTheChangedWords: two long strings that differ at
// their end show the changed word with a few around it, never the same
// prefix on both sides.
func TestLongStringShowsTheChangedWords(t *testing.T) {
	r := Frames(timeline("< "+notifyOf(longOld)), timeline("< "+notifyOf(longNew)), Options{})
	out := render(t, r)
	want := `    params.message: "… exactly (created 2024-01-[-01-]{+02+} by Ada)"` + "\n"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	c := r.Differences[0].Changes[0]
	if c.Old == c.New || !strings.Contains(c.Old, "01 by Ada") || !strings.Contains(c.New, "02 by Ada") {
		t.Errorf("old and new cut so that they look alike: %s → %s", c.Old, c.New)
	}
	var del, ins string
	for _, s := range c.Words {
		switch s.Op {
		case "-":
			del += s.Text
		case "+":
			ins += s.Text
		}
	}
	if del != "01" || ins != "02" {
		t.Errorf("words: %+v", c.Words)
	}
	// Words around several changes, the long stretch between them cut.
	w := wordDiff("one two three four five six seven eight nine ten eleven twelve", "one 2 three four five six seven eight nine ten eleven 12")
	if got := Words(w, WordsOptions{}); got != `"one [-two-]{+2+} three four five six … eight nine ten eleven [-twelve-]{+12+}"` {
		t.Errorf("words: %s", got)
	}
	// Several changed words in a row are one change.
	w = wordDiff("keep a b c keep", "keep x y z keep")
	if got := Words(w, WordsOptions{}); got != `"keep [-a b c-]{+x y z+} keep"` {
		t.Errorf("words: %s", got)
	}
	// Short strings are shown whole.
	r = Frames(timeline("< "+notifyOf("short one")), timeline("< "+notifyOf("short two")), Options{})
	if c := r.Differences[0].Changes[0]; c.Words != nil || !strings.Contains(render(t, r), `params.message: "short one" → "short two"`) {
		t.Errorf("short strings: %+v\n%s", c, render(t, r))
	}
	// A very long string: Old and New cut, each to a window of the change.
	head := strings.Repeat("word ", 60)
	r = Frames(timeline("< "+notifyOf(head+"old tail")), timeline("< "+notifyOf(head+"new tail")), Options{})
	c = r.Differences[0].Changes[0]
	if !strings.HasPrefix(c.Old, `"…`) || !strings.Contains(c.Old, "old tail") || !strings.Contains(c.New, "new tail") || len([]rune(c.Old)) > briefMax {
		t.Errorf("long old and new: %s → %s", c.Old, c.New)
	}
}

// TestMultiLineStringIsDiffedByLine: a string of several lines shows, in
// the unified diff, the line that changed, not the whole string per side.
func TestMultiLineStringIsDiffedByLine(t *testing.T) {
	a := "first line\nsecond line\nthird line\nfourth line\nfifth line\nsixth line\nseventh line\n"
	b := "first line\nsecond line\nthird line\nfourth line CHANGED\nfifth line\nsixth line\nseventh line\n"
	r := Frames(timeline("< "+notifyOf(a)), timeline("< "+notifyOf(b)), Options{})
	d := r.Differences[0]
	want := "" +
		`     "message": "first line\n"` + "\n" +
		`                "second line\n"` + "\n" +
		`                "third line\n"` + "\n" +
		`-               "fourth line\n"` + "\n" +
		`+               "fourth line CHANGED\n"` + "\n" +
		`                "fifth line\n"` + "\n"
	if !strings.Contains(d.Unified, want) {
		t.Errorf("unified diff lacks\n%s\nin\n%s", want, d.Unified)
	}
	c := d.Changes[0]
	if len(c.Lines) != 4 || c.Lines[1] != (Span{"-", "fourth line\n"}) || c.Lines[2] != (Span{"+", "fourth line CHANGED\n"}) {
		t.Errorf("lines: %+v", c.Lines)
	}
	if out := render(t, r); !strings.Contains(out, `params.message: "…\nthird line\nfourth line{+ CHANGED+}\nfifth line\nsixth line\n…"`) {
		t.Errorf("path summary:\n%s", out)
	}
	// Side.Pretty stays JSON.
	var v any
	if err := json.Unmarshal([]byte(d.Recorded.Pretty), &v); err != nil {
		t.Errorf("pretty is not JSON: %v\n%s", err, d.Recorded.Pretty)
	}
}

// TestDifferencesAsJSON: the JSON of a change carries its word and line
// diffs, a difference its seqs.
func TestDifferencesAsJSON(t *testing.T) {
	r := Frames(timeline("< "+notifyOf(longOld+"\nline 2")), timeline("< "+notifyOf(longNew+"\nline 2")), Options{})
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Differences []struct {
			Recorded struct{ Seq uint64 } `json:"recorded"`
			Live     struct{ Seq uint64 } `json:"live"`
			Changes  []struct {
				Old, New     string
				Words, Lines []Span
			} `json:"changes"`
		} `json:"differences"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	d := back.Differences[0]
	if d.Recorded.Seq != 1 || d.Live.Seq != 1 || len(d.Changes) != 1 || len(d.Changes[0].Words) == 0 || len(d.Changes[0].Lines) == 0 {
		t.Errorf("JSON: %s", js)
	}
	if strings.Contains(string(js), `\u003c`) {
		t.Errorf("JSON escapes <: %s", js)
	}
}

// TestHugeStringsStayQuick: strings of many words that differ throughout
// still get a word diff, told apart by what they share at both ends.
func TestHugeStringsStayQuick(t *testing.T) {
	a := "same start " + strings.Repeat("a ", maxWordTokens) + "same end"
	b := "same start " + strings.Repeat("b ", maxWordTokens) + "same end"
	w := wordDiff(a, b)
	if len(w) != 4 || w[0] != (Span{"=", "same start "}) || w[3] != (Span{"=", " same end"}) || w[1].Op != "-" || w[2].Op != "+" {
		t.Errorf("words: %d spans, first %+v", len(w), w[0])
	}
}
