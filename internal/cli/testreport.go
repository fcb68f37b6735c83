package cli

// What tapedeck test prints of each tape and at the end, and the exit
// status it gives.

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/pending"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/playback"
)

// finishTests prints a test run's summary and its hint, writes the HTML
// and JUnit reports, and gives the exit status.
func (e *env) finishTests(t *tally, args []string, asJSON, update, ci bool, htmlDir, junit string) error {
	summary := fmt.Sprintf("%d passed, %d failed", t.passed, t.failed)
	if t.skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", t.skipped)
	}
	if !asJSON {
		fmt.Fprintln(e.stdout, summary)
	}
	switch {
	case t.updated > 0:
		fmt.Fprintln(e.stderr, pendingHint(t.updated, args))
	case t.differed > 0 && !asJSON && !update:
		a := strings.Join(args, " ")
		fmt.Fprintf(e.stdout, "to accept these changes: %s && %s\n", escape.Text(strings.TrimSpace("tapedeck test --update "+a)), escape.Text(strings.TrimSpace("tapedeck review "+a)))
	}
	if t.html != nil {
		if err := t.html.Finish(summary); err != nil {
			return fail(1, "write HTML reports: %v", err)
		}
		fmt.Fprintf(e.stderr, "tapedeck: wrote %s\n", escape.Text(filepath.Join(htmlDir, "index.html")))
	}
	if t.junit != nil {
		if err := t.junit.WriteFile(junit); err != nil {
			return fail(1, "write JUnit: %v", err)
		}
		fmt.Fprintf(e.stderr, "tapedeck: wrote %s\n", escape.Text(junit))
	}
	// With --update a tape whose change is now pending review is no
	// failure of this run: the hint's "&& tapedeck review" goes on.
	if t.failed > t.updated {
		return &exitError{code: 1}
	}
	if t.skipped > 0 && t.passed == 0 && t.failed == 0 {
		// Nothing was tested: under CI that is no pass.
		what := "every tape was skipped: nothing was tested (install the plugins' programs, or --fail-on-skip to fail each)"
		if ci {
			return fail(1, "%s; CI is set, so this run fails", what)
		}
		fmt.Fprintf(e.stderr, "tapedeck: %s\n", what)
	}
	return nil
}

// tally counts a test run's results as they are reported.
type tally struct {
	passed, failed, skipped, updated int
	differed                         int // failures that ran and differed: an update can take them
	// html and junit, when asked for, take each tape's result as it ends
	// (the outcome is not kept for the end).
	html  *present.HTMLSuite
	junit *present.JUnitSuite
}

// reportTape reports one tape's result as it ends (as JSON or text),
// counts it, and says what an update wrote.
func (e *env) reportTape(r *playback.TapeResult, t *tally, asJSON, verbose bool) error {
	if t.html != nil {
		if err := t.html.Add(r); err != nil {
			return fail(1, "write HTML reports: %v", err)
		}
	}
	if t.junit != nil {
		t.junit.Add(r)
	}
	if asJSON {
		if err := present.TapeJSON(e.stdout, r); err != nil {
			return err
		}
	} else {
		present.TapeLine(e.stdout, r, present.OutcomeOptions{Verbose: verbose})
		if r.Outcome != nil && r.Outcome.Same() {
			// A pass that may mean little is said with it.
			for _, n := range r.Outcome.Notes {
				if n.Kind == note.Unused {
					fmt.Fprintf(e.stdout, "    note: %s\n", escape.Text(n.String()))
				}
			}
		}
	}
	switch {
	case r.Skip != "":
		t.skipped++
	case r.Outcome.Same():
		t.passed++
	default:
		t.failed++
		if r.Outcome.Err == nil {
			t.differed++
		}
		if r.UpdateErr != nil {
			return fail(1, "update %s: %s", escape.Text(r.Tape), escape.Text(r.UpdateErr.Error()))
		}
		if r.Pending != "" {
			t.updated++
			fmt.Fprintf(e.stderr, "tapedeck: wrote %s\n", escape.Text(r.Pending))
		}
	}
	return nil
}

// writePending writes a failing tape's live run beside it for review
// (test --update): pending.Update of a tape.
func writePending(o *playback.Outcome) (string, error) {
	u, err := pending.Update(o, nil)
	if err != nil {
		return "", err
	}
	return u.Pending, nil
}
