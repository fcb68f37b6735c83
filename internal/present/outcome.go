package present

// A replay's or a diff's outcome, for a person (Outcome) and for a
// machine (OutcomeJSON).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/clock"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/filter"
	"github.com/tapedeck/tapedeck/internal/fingerprint"
	"github.com/tapedeck/tapedeck/internal/noise"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/playback"
)

// OutcomeOptions tunes OutcomeWith.
type OutcomeOptions struct {
	// Verbose prints every note as it is, not grouped (replay -v).
	Verbose bool
}

// Outcome prints a replay's (or a comparison's) result for a person, as
// OutcomeWith with the default options.
func Outcome(w io.Writer, o *playback.Outcome) {
	OutcomeWith(w, o, OutcomeOptions{})
}

// OutcomeWith prints a replay's (or a comparison's) result for a person:
// the verdict line, the drift, when it differs each change once (see
// diff.Render), the requests the recording never answered, the notes
// (grouped: one line for notes alike, each note with opt.Verbose), and
// when it differs the last lines of the plugin's stderr.
func OutcomeWith(w io.Writer, o *playback.Outcome, opt OutcomeOptions) {
	n := o.Diff.Count()
	verdict := "same"
	if n > 0 {
		verdict = fmt.Sprintf("%d difference", n)
		if n > 1 {
			verdict += "s"
		}
	}
	timedOut := o.Run != nil && o.Run.TimedOut
	if timedOut {
		verdict = "timed out, " + verdict
	}
	if o.Run != nil {
		fmt.Fprintf(w, "%s: %s (compared %d recorded and %d replayed frames, %s)\n",
			escape.Text(o.Recording.Name), verdict, o.Diff.Compared[0], o.Diff.Compared[1], Duration(o.Run.Elapsed))
	} else {
		fmt.Fprintf(w, "%s vs %s: %s (compared %d and %d frames)\n",
			escape.Text(o.Recording.Name), escape.Text(o.Against.Name), verdict, o.Diff.Compared[0], o.Diff.Compared[1])
	}
	if l := DriftLine(o.Drift); l != "" {
		fmt.Fprintln(w, escape.Text(l))
	}
	differs := n > 0 || timedOut
	if differs {
		diff.Render(w, &o.Diff, diff.RenderOptions{Color: screen.Color(w), Escape: escape.Lines})
	}
	if o.Run != nil {
		for _, u := range o.Run.Unmatched {
			fmt.Fprintf(w, "unanswered: the plugin asked %s, which the recording never answered; it got an error\n", escape.Text(u))
		}
	}
	Notes(w, outcomeNotes(o), opt.Verbose)
	if !differs {
		return
	}
	if tail := StderrTail(o.Tail(), 10); len(tail) > 0 {
		if o.Run == nil {
			fmt.Fprintf(w, "stderr of %s (last lines):\n", escape.Text(o.Against.Name))
		} else {
			fmt.Fprintln(w, "plugin stderr (last lines):")
		}
		for _, l := range tail {
			fmt.Fprintf(w, "    %s\n", escape.Text(l))
		}
	}
}

// outcomeNotes is every note of an outcome: tapedeck's, then the replay's.
func outcomeNotes(o *playback.Outcome) []note.Note {
	notes := append([]note.Note(nil), o.Notes...)
	if o.Run != nil {
		notes = append(notes, o.Run.Notes...)
	}
	return notes
}

// Notes prints notes, "note: " before each: grouped (see GroupNotes), or
// every one as it is when verbose.
func Notes(w io.Writer, notes []note.Note, verbose bool) {
	if verbose {
		for _, n := range notes {
			fmt.Fprintf(w, "note: %s\n", escape.Text(n.String()))
		}
		return
	}
	for _, g := range GroupNotes(notes) {
		more := ""
		if g.Count > 1 {
			more = " (-v lists them)"
		}
		fmt.Fprintf(w, "note: %s%s\n", escape.Text(g.Text), more)
	}
}

// NoteGroup is notes alike, said once.
type NoteGroup struct {
	// Text is the line that says them: the note itself when it is alone.
	Text  string   `json:"text"`
	Count int      `json:"count"`
	Notes []string `json:"notes"`
}

// GroupNotes groups notes that say the same but of other frames (see
// note.Note.Like), in the order of their first. Notes about requests
// answered from a recorded call whose params differed say how many and of
// which methods: "2 requests answered from a recorded call whose params
// differed: ui/setPanel ×2"; others, the first and how many more: "… (and
// 2 more like it)".
func GroupNotes(notes []note.Note) []NoteGroup {
	type group struct {
		NoteGroup
		requests bool     // notes of kind note.Answered
		methods  []string // their methods, in order, once each
		count    map[string]int
	}
	var groups []*group
	at := map[note.Note]*group{}
	for _, n := range notes {
		key := n.Like()
		requests := n.Kind == note.Answered
		if requests {
			key = note.Note{Kind: note.Answered}
		}
		g := at[key]
		if g == nil {
			g = &group{requests: requests, count: map[string]int{}}
			at[key] = g
			groups = append(groups, g)
		}
		g.Count++
		g.Notes = append(g.Notes, n.String())
		if requests {
			if g.count[n.Method] == 0 {
				g.methods = append(g.methods, n.Method)
			}
			g.count[n.Method]++
		}
	}
	out := make([]NoteGroup, 0, len(groups))
	for _, g := range groups {
		switch {
		case g.Count == 1:
			g.Text = g.Notes[0]
		case g.requests:
			var ms []string
			for _, m := range g.methods {
				if k := g.count[m]; k > 1 {
					m += fmt.Sprintf(" ×%d", k)
				}
				ms = append(ms, m)
			}
			g.Text = fmt.Sprintf("%d requests %s: %s", g.Count, note.AnsweredWhat, strings.Join(ms, ", "))
		default:
			g.Text = fmt.Sprintf("%s (and %d more like it)", g.Notes[0], g.Count-1)
		}
		out = append(out, g.NoteGroup)
	}
	return out
}

// StderrTail is the last n stderr lines of a timeline.
func StderrTail(live []frame.Frame, n int) []string {
	var lines []string
	for _, f := range live {
		if !f.IsEvent() && f.Dir == frame.Err {
			lines = append(lines, string(f.Raw))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// Noise prints what replaying again found.
func Noise(w io.Writer, nr *noise.Report) {
	if len(nr.Rules) == 0 && len(nr.Filters) == 0 {
		fmt.Fprintf(w, "%d runs agree with each other: no noise to ignore\n", nr.Runs)
	}
	if len(nr.Filters) > 0 {
		fmt.Fprintf(w, "%d runs differ from each other inside these strings; proposed filters:\n", nr.Runs)
		for _, f := range nr.Filters {
			fmt.Fprintf(w, "  %s  /%s/ → %s\n", escape.Text(f.At), escape.Text(f.Regex), escape.Text(f.Replacement))
		}
	}
	if len(nr.Rules) > 0 {
		fmt.Fprintf(w, "%d runs differ from each other at these paths; proposed ignore rules:\n", nr.Runs)
		for _, r := range nr.Rules {
			fmt.Fprintf(w, "  %s\n", escape.Text(r))
		}
	}
	if len(nr.Rules)+len(nr.Filters) > 0 {
		fmt.Fprintln(w, "(--write-config adds them to tapedeck.json)")
	}
	if len(nr.Stable) > 0 {
		fmt.Fprintf(w, "all %d runs agree with each other but differ from the recording at these paths\n", nr.Runs)
		fmt.Fprintln(w, "(not noise between runs; time-relative text such as \"5 minutes ago\" is the usual cause):")
		for _, st := range nr.Stable[:min(len(nr.Stable), stableShown)] {
			fmt.Fprintf(w, "  %s:%s  %s → %s\n", escape.Text(OrAny(st.Method)), escape.Text(st.Path), escape.Text(OrAbsent(st.Old)), escape.Text(OrAbsent(st.New)))
		}
		if more := len(nr.Stable) - stableShown; more > 0 {
			fmt.Fprintf(w, "  … and %d more (--json lists them all)\n", more)
		}
	}
}

// stableShown is how many of the changes every run agrees on Noise prints:
// a plugin that changed everything changes each frame alike, and the
// differences above already show them.
const stableShown = 20

// Proposals counts what --runs proposes: "1 ignore rules", "2 filters",
// "1 ignore rules and 1 filters" (the first as replay has always said it).
func Proposals(nr *noise.Report) string {
	var parts []string
	if len(nr.Rules) > 0 || len(nr.Filters) == 0 {
		parts = append(parts, fmt.Sprintf("%d ignore rules", len(nr.Rules)))
	}
	if len(nr.Filters) > 0 {
		parts = append(parts, Count(int64(len(nr.Filters)), "filter", "filters"))
	}
	return strings.Join(parts, " and ")
}

// Differences prints an outcome's differences alone (no verdict, no
// notes), as review shows a pending change.
func Differences(w io.Writer, o *playback.Outcome) error {
	return diff.Render(w, &o.Diff, diff.RenderOptions{Color: screen.Color(w), Escape: escape.Lines})
}

// Unified prints the line diff of two texts named a and b, escaped.
func Unified(w io.Writer, a, b, nameA, nameB string) error {
	_, err := io.WriteString(w, escape.Lines(diff.Unified(a, b, nameA, nameB)))
	return err
}

// CountDifferences counts differences by kind: "1 changed, 1 extra".
func CountDifferences(r diff.Result) string {
	n := map[diff.Kind]int{}
	for _, d := range r.Differences {
		n[d.Kind]++
	}
	var parts []string
	for _, k := range []diff.Kind{diff.Changed, diff.Missing, diff.Extra, diff.Moved, diff.Exit} {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

// outcomeJSON is replay --json.
type outcomeJSON struct {
	Source      string            `json:"source"`
	Same        bool              `json:"same"`
	Differences []diff.Difference `json:"differences"`
	// More counts the differences found past those kept (diff.MaxKept).
	More     int    `json:"more,omitempty"`
	Compared [2]int `json:"compared"`
	// Groups are the differences that are the same change, as the
	// report prints them once each.
	Groups    []diff.Group `json:"groups"`
	Unmatched []string     `json:"unmatched"`
	// Notes are every note; NoteGroups them grouped, as the report says
	// them.
	Notes      []string             `json:"notes"`
	NoteGroups []NoteGroup          `json:"noteGroups"`
	Exit       *frame.Frame         `json:"-"`
	ElapsedMS  int64                `json:"elapsedMs"`
	Proposed   []string             `json:"proposedIgnores,omitempty"`
	Filters    []filter.Filter      `json:"proposedFilters,omitempty"`
	Stable     []noise.StableChange `json:"stableChanges,omitempty"`
	TimedOut   bool                 `json:"timedOut,omitempty"`
	Error      string               `json:"error,omitempty"`
	Drift      *fingerprint.Drift   `json:"drift,omitempty"`
}

func toJSON(o *playback.Outcome, nr *noise.Report) outcomeJSON {
	j := outcomeJSON{Source: o.Recording.Name, Same: o.Same(), Differences: o.Diff.Differences, More: o.Diff.More, Compared: o.Diff.Compared, Drift: o.Drift}
	if nr != nil {
		j.Proposed, j.Filters, j.Stable = nr.Rules, nr.Filters, nr.Stable
	}
	if o.Err != nil {
		j.Error = o.Err.Error()
	}
	notes := outcomeNotes(o)
	j.Notes = note.Strings(notes)
	if o.Run != nil {
		j.Unmatched, j.ElapsedMS = o.Run.Unmatched, o.Run.Elapsed.Milliseconds()
		j.TimedOut = o.Run.TimedOut
	}
	if j.Differences == nil {
		j.Differences = []diff.Difference{}
	}
	j.Groups = o.Diff.Groups()
	if j.Groups == nil {
		j.Groups = []diff.Group{}
	}
	j.NoteGroups = GroupNotes(notes)
	if j.Unmatched == nil {
		j.Unmatched = []string{}
	}
	if j.Notes == nil {
		j.Notes = []string{}
	}
	return j
}

// OutcomeJSON writes replay --json (and diff --json): one indented
// object, nr (may be nil) adding the proposed rules of --runs.
func OutcomeJSON(w io.Writer, o *playback.Outcome, nr *noise.Report) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // strings as the plugin sent them: < stays <
	enc.SetIndent("", "  ")
	if err := enc.Encode(toJSON(o, nr)); err != nil {
		return err
	}
	_, err := w.Write(escape.JSON(nil, b.Bytes()))
	return err
}

// testJSON is one tape's result in test --json.
type testJSON struct {
	Tape   string `json:"tape"`
	Status string `json:"status"` // pass, fail, skip
	Skip   string `json:"skip,omitempty"`
	outcomeJSON
}

// TapeJSON writes one tape's result of test --json, as a line.
func TapeJSON(w io.Writer, r *playback.TapeResult) error {
	j := testJSON{Tape: r.Tape, Status: "skip", Skip: r.Skip}
	if r.Skip == "" {
		j.outcomeJSON = toJSON(r.Outcome, nil)
		j.Status = "fail"
		if r.Outcome.Same() {
			j.Status = "pass"
		}
	}
	j.outcomeJSON.Source = ""
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return err
	}
	_, err := w.Write(escape.JSON(nil, b.Bytes()))
	return err
}

// Start says what a replay is about to run (replay -v).
func Start(w io.Writer, s playback.Start) {
	fmt.Fprintf(w, "tapedeck: %s: runs %s\n  in      %s\n  adding  %s\n",
		escape.Text(s.Recording.Name), escape.Text(ShellQuote(s.Command)), escape.Text(s.Dir), escape.Text(OrNone(strings.Join(s.Added, " "))))
	if s.Clock != nil {
		fmt.Fprintf(w, "  clock   %s (NODE_OPTIONS --require, PYTHONPATH sitecustomize)\n", clock.Describe(s.Clock))
	}
}
