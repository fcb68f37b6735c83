package render

// A replay's or a diff's outcome, for a person (Outcome) and for a
// machine (OutcomeJSON).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tapedeck/tapedeck/clock"
	"github.com/tapedeck/tapedeck/diff"
	"github.com/tapedeck/tapedeck/fingerprint"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/playback"
)

// Outcome prints a replay's (or a comparison's) result for a person: its
// notes, the verdict line, the drift, and when it differs the differences
// and the last lines of the plugin's stderr.
func Outcome(w io.Writer, o *playback.Outcome) {
	for _, n := range o.Notes {
		fmt.Fprintf(w, "note: %s\n", escape.Text(n))
	}
	if o.Run != nil {
		for _, n := range o.Run.Notes {
			fmt.Fprintf(w, "note: %s\n", escape.Text(n))
		}
		for _, u := range o.Run.Unmatched {
			fmt.Fprintf(w, "unanswered: the plugin asked %s, which the recording never answered; it got an error\n", escape.Text(u))
		}
	}
	n := len(o.Diff.Differences)
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
	if n == 0 && !timedOut {
		return
	}
	diff.Render(w, &o.Diff, diff.RenderOptions{Color: screen.Color(w), Escape: escape.Lines})
	if tail := StderrTail(o.Live(), 10); len(tail) > 0 {
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
func Noise(w io.Writer, nr *playback.NoiseReport) {
	if len(nr.Rules) == 0 {
		fmt.Fprintf(w, "%d runs agree with each other: no noise to ignore\n", nr.Runs)
	} else {
		fmt.Fprintf(w, "%d runs differ from each other at these paths; proposed ignore rules:\n", nr.Runs)
		for _, r := range nr.Rules {
			fmt.Fprintf(w, "  %s\n", escape.Text(r))
		}
		fmt.Fprintln(w, "(--write-config adds them to tapedeck.json)")
	}
	if len(nr.Stable) > 0 {
		fmt.Fprintf(w, "all %d runs agree with each other but differ from the recording at these paths\n", nr.Runs)
		fmt.Fprintln(w, "(not noise between runs; time-relative text such as \"5 minutes ago\" is the usual cause):")
		for _, st := range nr.Stable {
			fmt.Fprintf(w, "  %s:%s  %s → %s\n", escape.Text(OrAny(st.Method)), escape.Text(st.Path), escape.Text(OrAbsent(st.Old)), escape.Text(OrAbsent(st.New)))
		}
	}
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
	Source      string                  `json:"source"`
	Same        bool                    `json:"same"`
	Differences []diff.Difference       `json:"differences"`
	Compared    [2]int                  `json:"compared"`
	Unmatched   []string                `json:"unmatched"`
	Notes       []string                `json:"notes"`
	Exit        *frame.Frame            `json:"-"`
	ElapsedMS   int64                   `json:"elapsedMs"`
	Proposed    []string                `json:"proposedIgnores,omitempty"`
	Stable      []playback.StableChange `json:"stableChanges,omitempty"`
	TimedOut    bool                    `json:"timedOut,omitempty"`
	Error       string                  `json:"error,omitempty"`
	Drift       *fingerprint.Drift      `json:"drift,omitempty"`
}

func toJSON(o *playback.Outcome, nr *playback.NoiseReport) outcomeJSON {
	j := outcomeJSON{Source: o.Recording.Name, Same: o.Same(), Differences: o.Diff.Differences, Compared: o.Diff.Compared, Drift: o.Drift}
	if nr != nil {
		j.Proposed, j.Stable = nr.Rules, nr.Stable
	}
	if o.Err != nil {
		j.Error = o.Err.Error()
	}
	if o.Run != nil {
		j.Unmatched, j.Notes, j.ElapsedMS = o.Run.Unmatched, append(o.Notes, o.Run.Notes...), o.Run.Elapsed.Milliseconds()
		j.TimedOut = o.Run.TimedOut
	}
	if j.Differences == nil {
		j.Differences = []diff.Difference{}
	}
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
func OutcomeJSON(w io.Writer, o *playback.Outcome, nr *playback.NoiseReport) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
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
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = w.Write(append(escape.JSON(nil, b), '\n'))
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
