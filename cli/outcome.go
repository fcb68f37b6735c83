package cli

// A replay's or a diff's outcome, for a person (printOutcome) and for a
// machine (--json).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tapedeck/tapedeck/cli/internal/escape"
	"github.com/tapedeck/tapedeck/cli/internal/screen"
	"github.com/tapedeck/tapedeck/diff"
	"github.com/tapedeck/tapedeck/frame"
)

// noiseReport is what --runs found.
type noiseReport struct {
	Runs int
	// Rules are the narrowest ignore rules that cover what varied between
	// runs of the same plugin.
	Rules []string
	// Stable are the changes from the recording that every run agrees on:
	// not noise between runs, but (often) time-relative text.
	Stable []stableChange
}

type stableChange struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// printOutcome prints a replay's result for a person.
func (e *env) printOutcome(o *outcome) {
	w := e.stdout
	for _, n := range o.notes {
		fmt.Fprintf(w, "note: %s\n", escape.Text(n))
	}
	if o.run != nil {
		for _, n := range o.run.Notes {
			fmt.Fprintf(w, "note: %s\n", escape.Text(n))
		}
		for _, u := range o.run.Unmatched {
			fmt.Fprintf(w, "unanswered: the plugin asked %s, which the recording never answered; it got an error\n", escape.Text(u))
		}
	}
	n := len(o.diff.Differences)
	verdict := "same"
	if n > 0 {
		verdict = fmt.Sprintf("%d difference", n)
		if n > 1 {
			verdict += "s"
		}
	}
	timedOut := o.run != nil && o.run.TimedOut
	if timedOut {
		verdict = "timed out, " + verdict
	}
	var live []frame.Frame
	if o.run != nil {
		live = o.run.Live
		fmt.Fprintf(w, "%s: %s (compared %d recorded and %d replayed frames, %s)\n",
			escape.Text(o.src.name), verdict, o.diff.Compared[0], o.diff.Compared[1], formatDuration(o.run.Elapsed))
	} else {
		live = o.against.frames
		fmt.Fprintf(w, "%s vs %s: %s (compared %d and %d frames)\n",
			escape.Text(o.src.name), escape.Text(o.against.name), verdict, o.diff.Compared[0], o.diff.Compared[1])
	}
	if l := driftLine(o.drift); l != "" {
		fmt.Fprintln(w, escape.Text(l))
	}
	if n == 0 && !timedOut {
		return
	}
	diff.Render(w, &o.diff, diff.RenderOptions{Color: screen.Color(w), Escape: escape.Lines})
	if tail := stderrTail(live, 10); len(tail) > 0 {
		if o.run == nil {
			fmt.Fprintf(w, "stderr of %s (last lines):\n", escape.Text(o.against.name))
		} else {
			fmt.Fprintln(w, "plugin stderr (last lines):")
		}
		for _, l := range tail {
			fmt.Fprintf(w, "    %s\n", escape.Text(l))
		}
	}
}

func stderrTail(live []frame.Frame, n int) []string {
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

// outcomeJSON is replay --json.
type outcomeJSON struct {
	Source      string            `json:"source"`
	Same        bool              `json:"same"`
	Differences []diff.Difference `json:"differences"`
	Compared    [2]int            `json:"compared"`
	Unmatched   []string          `json:"unmatched"`
	Notes       []string          `json:"notes"`
	Exit        *frame.Frame      `json:"-"`
	ElapsedMS   int64             `json:"elapsedMs"`
	Proposed    []string          `json:"proposedIgnores,omitempty"`
	Stable      []stableChange    `json:"stableChanges,omitempty"`
	TimedOut    bool              `json:"timedOut,omitempty"`
	Error       string            `json:"error,omitempty"`
	Drift       *drift            `json:"drift,omitempty"`
}

func toJSON(o *outcome, nr *noiseReport) outcomeJSON {
	j := outcomeJSON{Source: o.src.name, Same: o.same(), Differences: o.diff.Differences, Compared: o.diff.Compared, Drift: o.drift}
	if nr != nil {
		j.Proposed, j.Stable = nr.Rules, nr.Stable
	}
	if o.err != nil {
		j.Error = o.err.Error()
	}
	if o.run != nil {
		j.Unmatched, j.Notes, j.ElapsedMS = o.run.Unmatched, append(o.notes, o.run.Notes...), o.run.Elapsed.Milliseconds()
		j.TimedOut = o.run.TimedOut
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

func writeOutcomeJSON(w io.Writer, o *outcome, nr *noiseReport) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(toJSON(o, nr)); err != nil {
		return err
	}
	_, err := w.Write(escape.JSON(nil, b.Bytes()))
	return err
}
