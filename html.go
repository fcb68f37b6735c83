package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tapedeck/tapedeck/check"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/report"
)

// writeSessionHTML writes the HTML report of a session to path, replacing
// it atomically. frames is read three times (check, then the report's two
// passes), one frame at a time: the report of a long session is written in
// little memory.
func writeSessionHTML(path string, meta *frame.Session, frames report.Frames) error {
	findings, err := checkFindings(meta, frames)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := report.Session(bw, meta, frames, findings); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// writeReplayHTML writes the HTML report of a replay to path, replacing it
// atomically. A replay that could not run gets a report that says why.
func writeReplayHTML(path string, o *outcome) error {
	in := report.ReplayInput{Name: o.src.name, Meta: o.src.meta, Recorded: o.src.frames, Diff: o.diff}
	in.Notes = append(in.Notes, o.notes...)
	if o.against != nil {
		in.Live = o.against.frames
	}
	if o.run != nil {
		in.Live = o.run.Live
		in.Notes = append(in.Notes, o.run.Notes...)
		in.Unmatched = o.run.Unmatched
		in.Elapsed = o.run.Elapsed
	}
	if o.err != nil {
		in.Err = o.err.Error()
	}
	return writeFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := report.Replay(bw, in); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// writeTestHTML writes into dir one replay report per tape that ran (named
// after the tape) and an index.html that links them under the heading
// summary.
func writeTestHTML(dir string, results []testResult, summary string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	taken := map[string]bool{"index.html": true}
	entries := make([]report.IndexEntry, 0, len(results))
	for _, r := range results {
		e := report.IndexEntry{Name: r.tape}
		switch {
		case r.skip != "":
			e.Status, e.Detail = "skip", r.skip
		case r.outcome.err != nil:
			e.Status, e.Detail = "error", "could not run: "+r.outcome.err.Error()
		case r.outcome.same():
			e.Status, e.Detail = "ok", "same ("+formatDuration(r.elapsed)+")"
		default:
			n, word := len(r.outcome.diff.Differences), "differences"
			if n == 1 {
				word = "difference"
			}
			e.Status, e.Detail = "fail", fmt.Sprintf("%d %s (%s)", n, word, formatDuration(r.elapsed))
		}
		if r.outcome != nil {
			name := reportName(r.tape, taken)
			if err := writeReplayHTML(filepath.Join(dir, name), r.outcome); err != nil {
				return err
			}
			e.Href = (&url.URL{Path: name}).String()
		}
		entries = append(entries, e)
	}
	return writeFileAtomic(filepath.Join(dir, "index.html"), func(w io.Writer) error {
		return report.Index(w, "tapedeck test: "+summary, entries)
	})
}

// reportName names the report of a tape after it (hello.jsonl → hello.html),
// with -2, -3 … when tapes in different folders share a name.
func reportName(tape string, taken map[string]bool) string {
	base := strings.TrimSuffix(filepath.Base(tape), ".jsonl")
	name := base + ".html"
	for n := 2; taken[name]; n++ {
		name = base + "-" + strconv.Itoa(n) + ".html"
	}
	taken[name] = true
	return name
}

// reportFindingsPerRule bounds the findings of one rule that a report
// marks: a session that breaks a rule on every frame would otherwise carry
// one finding per frame into the page (500,000 for a million frames).
const reportFindingsPerRule = 1000

// checkFindings runs the check engine over a session, for the report to
// mark the frames the host would reject, drop or punish: at most
// reportFindingsPerRule of each rule, and for the rest one finding that
// says how many more tapedeck check lists.
func checkFindings(meta *frame.Session, frames report.Frames) ([]report.Finding, error) {
	c := check.New(check.OptionsFor(meta.Cwd))
	var out []report.Finding
	perRule := map[string]int{}
	add := func(fs []check.Finding) {
		for _, f := range fs {
			perRule[f.Rule]++
			if perRule[f.Rule] > reportFindingsPerRule {
				continue
			}
			out = append(out, report.Finding{Seq: f.Seq, Level: string(f.Level), Rule: f.Rule, Method: f.Method, Message: f.Message, Path: f.Path})
		}
	}
	if err := frames(func(f *frame.Frame) error { add(c.Feed(f)); return nil }); err != nil {
		return nil, fmt.Errorf("check frames: %w", err)
	}
	add(c.Finish())
	rules := slices.Sorted(maps.Keys(perRule))
	for _, rule := range rules {
		if n := perRule[rule] - reportFindingsPerRule; n > 0 {
			out = append(out, report.Finding{Level: string(check.Info), Rule: rule,
				Message: fmt.Sprintf("and %d more %s findings, not marked in this report: tapedeck check lists them all", n, rule)})
		}
	}
	return out, nil
}
