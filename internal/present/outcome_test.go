package present

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/host"
	"github.com/tapedeck/tapedeck/internal/noise"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/playback"
)

func out(seq uint64, raw string) frame.Frame {
	return frame.Frame{Seq: seq, Dir: frame.Out, Raw: []byte(raw)}
}

func panel(label string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":{"type":"text","text":"` + label + `"}}}`
}

const notify = `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"a <b> & c","kind":"info"}}`

// labelOutcome is a replay where a label changed in two panels, with the
// notes replay says of it, a request it never answered, and stderr.
func labelOutcome() *playback.Outcome {
	rec := []frame.Frame{out(4, panel("Hello")), out(6, notify), out(9, panel("Hello"))}
	live := []frame.Frame{out(5, panel("Howdy")), out(6, notify), out(9, panel("Howdy")), {Seq: 10, Dir: frame.Err, Raw: []byte("plugin: bye")}}
	return &playback.Outcome{
		Recording: &playback.Recording{Name: "demo"},
		Run: &host.Result{
			Live: live,
			Notes: []note.Note{
				{Kind: note.Answered, Method: "ui/setPanel", Seq: 5},
				{Kind: note.Exited, Step: note.Step{Seq: 11}},
				{Kind: note.Answered, Method: "ui/setPanel", Seq: 9},
				{Kind: note.Answered, Method: "prompt/inject", Seq: 12},
			},
			Unmatched: []string{"tools/list (replay seq 13)"},
			Elapsed:   2 * time.Millisecond,
		},
		Diff: diff.Frames(rec, live, diff.Options{}),
	}
}

// TestOutcomeReadsOnce: the verdict first, each change once with seqs
// alone, then the unanswered requests and the notes, grouped; -v lists
// every note.
func TestOutcomeReadsOnce(t *testing.T) {
	o := labelOutcome()
	var b bytes.Buffer
	Outcome(&b, o)
	got := b.String()
	lines := strings.Split(got, "\n")
	if lines[0] != "demo: 2 differences (compared 3 recorded and 3 replayed frames, 2ms)" {
		t.Errorf("first line %q, want the verdict:\n%s", lines[0], got)
	}
	if lines[1] != "changed   request ui/setPanel  recorded seq 4, replayed seq 5" || lines[2] != "    and 1 more like it: recorded seq 9; replayed seq 9" {
		t.Errorf("the block does not open with its seqs and the one more like it:\n%s", got)
	}
	if n := strings.Count(got, "changed   request"); n != 1 {
		t.Errorf("%d blocks for one change:\n%s", n, got)
	}
	if strings.Contains(got, "#") {
		t.Errorf("a numbering other than seq:\n%s", got)
	}
	tail := "" +
		"unanswered: the plugin asked tools/list (replay seq 13), which the recording never answered; it got an error\n" +
		"note: 3 requests answered from a recorded call whose params differed: ui/setPanel ×2, prompt/inject (-v lists them)\n" +
		"note: the plugin exited before host frame seq 11; the rest was not sent\n" +
		"plugin stderr (last lines):\n" +
		"    plugin: bye\n"
	if !strings.HasSuffix(got, tail) {
		t.Errorf("report does not end with\n%s\ngot\n%s", tail, got)
	}
	if i, j := strings.Index(got, "note:"), strings.Index(got, "--- recorded"); i < j {
		t.Errorf("notes before the differences:\n%s", got)
	}

	b.Reset()
	OutcomeWith(&b, o, OutcomeOptions{Verbose: true})
	for _, n := range note.Strings(o.Run.Notes) {
		if !strings.Contains(b.String(), "note: "+n+"\n") {
			t.Errorf("-v does not list %q:\n%s", n, b.String())
		}
	}
	if strings.Contains(b.String(), "-v lists them") {
		t.Errorf("-v still groups:\n%s", b.String())
	}
}

// TestSameOutcomeNotesAfterVerdict: a replay that is the same still says
// its verdict first.
func TestSameOutcomeNotesAfterVerdict(t *testing.T) {
	o := &playback.Outcome{
		Recording: &playback.Recording{Name: "demo"},
		Notes:     []note.Note{note.Text("hello-go is not here; using /bin/hello-go")},
		Run:       &host.Result{Notes: []note.Note{{Kind: note.Answered, Method: "x", Seq: 3}}},
	}
	var b bytes.Buffer
	Outcome(&b, o)
	want := "demo: same (compared 0 recorded and 0 replayed frames, " + Duration(0) + ")\n" +
		"note: hello-go is not here; using /bin/hello-go\n" +
		"note: x (replay seq 3) answered from a recorded call whose params differed\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGroupNotes(t *testing.T) {
	gaveUp := func(seq uint64) note.Note {
		return note.Note{Kind: note.GaveUp, Step: note.Step{Seq: seq}, Text: "after 30s: gave up waiting"}
	}
	g := GroupNotes([]note.Note{
		gaveUp(6),
		{Kind: note.Answered, Method: "a", Seq: 1},
		gaveUp(9),
		gaveUp(12),
	})
	if len(g) != 2 || g[0].Text != "host frame seq 6 sent after 30s: gave up waiting (and 2 more like it)" || g[0].Count != 3 || len(g[0].Notes) != 3 ||
		g[1].Text != "a (replay seq 1) answered from a recorded call whose params differed" || g[1].Count != 1 {
		t.Errorf("groups: %+v", g)
	}
}

// TestOutcomeJSONHasTheSameFacts: --json carries the grouped notes, the
// groups of differences with their seqs, the word diff, and < as sent.
func TestOutcomeJSONHasTheSameFacts(t *testing.T) {
	o := labelOutcome()
	long := func(end string) string {
		return `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"Please write a summary of the note below in three sentences, keeping names and dates (` + end + `)","kind":"info"}}`
	}
	o.Diff = diff.Frames(append(o.Run.Live[:0:0], out(4, panel("Hello")), out(6, long("created <today>")), out(9, panel("Hello"))),
		[]frame.Frame{out(5, panel("Howdy")), out(6, long("created <yesterday>")), out(9, panel("Howdy"))}, diff.Options{})
	var b bytes.Buffer
	if err := OutcomeJSON(&b, o, nil); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Differences []struct {
			Kind     string
			Recorded struct{ Seq uint64 }
			Live     struct{ Seq uint64 }
			Changes  []struct {
				Path, Old, New string
				Words          []diff.Span
			}
		}
		Groups     []diff.Group
		Notes      []string
		NoteGroups []NoteGroup
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatalf("%v\n%s", err, b.Bytes())
	}
	if len(j.Differences) != 3 || j.Differences[0].Recorded.Seq != 4 || j.Differences[0].Live.Seq != 5 {
		t.Errorf("differences: %+v", j.Differences)
	}
	if len(j.Groups) != 2 || j.Groups[0].Count != 2 || j.Groups[0].Differences[1] != 2 ||
		j.Groups[0].RecordedSeqs[1] != 9 || j.Groups[0].LiveSeqs[0] != 5 || j.Groups[1].Count != 1 {
		t.Errorf("groups: %+v", j.Groups)
	}
	if len(j.Notes) != 4 || len(j.NoteGroups) != 2 || j.NoteGroups[0].Count != 3 ||
		j.NoteGroups[0].Text != "3 requests answered from a recorded call whose params differed: ui/setPanel ×2, prompt/inject" {
		t.Errorf("notes: %q\n%+v", j.Notes, j.NoteGroups)
	}
	w := j.Differences[1].Changes[0].Words
	var del, ins string
	for _, s := range w {
		switch s.Op {
		case "-":
			del += s.Text
		case "+":
			ins += s.Text
		}
	}
	if del != "today" || ins != "yesterday" {
		t.Errorf("words: %+v", w)
	}
	if strings.Contains(b.String(), `\u003c`) || !strings.Contains(b.String(), "created <today>") {
		t.Errorf("JSON does not keep < as sent:\n%s", b.String())
	}
	// One tape of test --json too.
	b.Reset()
	if err := TapeJSON(&b, &playback.TapeResult{Tape: "t.jsonl", Outcome: o}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"noteGroups":[`) || !strings.Contains(b.String(), `"groups":[`) || strings.Contains(b.String(), `\u003c`) || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("test --json line:\n%s", b.String())
	}
}

// TestJUnitSharesTheReport: a failure's text in JUnit XML is the report's
// differences, each change once, by seq.
func TestJUnitSharesTheReport(t *testing.T) {
	var b bytes.Buffer
	var s JUnitSuite
	s.Add(&playback.TapeResult{Tape: "demo.jsonl", Outcome: labelOutcome()})
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if !strings.Contains(got, "recorded seq 4, replayed seq 5") || !strings.Contains(got, "and 1 more like it: recorded seq 9; replayed seq 9") ||
		strings.Count(got, "changed   request") != 1 || strings.Contains(got, "(seq ") {
		t.Errorf("JUnit failure text:\n%s", got)
	}
}

// TestOutcomeSaysTheDifferencesNotKept: a comparison that kept some of
// its differences says how many more it found, in the verdict's count, in
// text and in JSON.
func TestOutcomeSaysTheDifferencesNotKept(t *testing.T) {
	t.Parallel()
	o := labelOutcome()
	kept := len(o.Diff.Differences)
	o.Diff.More = 5
	var text bytes.Buffer
	Outcome(&text, o)
	if want := fmt.Sprintf("demo: %d differences (", kept+5); !strings.HasPrefix(text.String(), want) ||
		!strings.Contains(text.String(), fmt.Sprintf("\ndifferences not kept: 5 more (tapedeck keeps the first %d of a comparison)\n", kept)) {
		t.Errorf("the report does not count or say the 5 not kept:\n%s", text.String())
	}
	var js bytes.Buffer
	if err := OutcomeJSON(&js, o, nil); err != nil {
		t.Fatal(err)
	}
	var j struct{ More int }
	if err := json.Unmarshal(js.Bytes(), &j); err != nil || j.More != 5 {
		t.Errorf("JSON more = %d (%v), want 5", j.More, err)
	}
}

// TestNoiseShowsTheFirstStableChanges: what every run changes alike is
// printed up to stableShown changes, then counted: a plugin whose every
// frame changed printed 9,686 such lines after its differences.
func TestNoiseShowsTheFirstStableChanges(t *testing.T) {
	t.Parallel()
	nr := &noise.Report{Runs: 3}
	for i := range stableShown + 5 {
		nr.Stable = append(nr.Stable, noise.StableChange{Method: "ui/setBadge", Path: fmt.Sprintf("params.n%d", i), Old: "1"})
	}
	var b bytes.Buffer
	Noise(&b, nr)
	got := b.String()
	if n := strings.Count(got, "  ui/setBadge:params.n"); n != stableShown {
		t.Errorf("printed %d stable changes, want %d:\n%s", n, stableShown, got)
	}
	if !strings.Contains(got, "  … and 5 more (--json lists them all)\n") || strings.Contains(got, fmt.Sprintf("params.n%d ", stableShown)) {
		t.Errorf("the changes past the first %d are not counted:\n%s", stableShown, got)
	}
}
