package main

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tapedeck/tapedeck/check"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/report"
)

// writeSessionHTML writes the HTML report of a session to path, replacing
// it atomically.
func writeSessionHTML(path string, meta *frame.Session, frames []frame.Frame) error {
	findings := checkFindings(meta, frames)
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

// checkFindings runs the check engine over a session, for the report to
// mark the frames the host would reject, drop or punish.
func checkFindings(meta *frame.Session, frames []frame.Frame) []report.Finding {
	c := check.New(check.OptionsFor(meta.Cwd))
	var out []report.Finding
	add := func(fs []check.Finding) {
		for _, f := range fs {
			out = append(out, report.Finding{Seq: f.Seq, Level: string(f.Level), Rule: f.Rule, Method: f.Method, Message: f.Message, Path: f.Path})
		}
	}
	for i := range frames {
		add(c.Feed(&frames[i]))
	}
	add(c.Finish())
	return out
}
