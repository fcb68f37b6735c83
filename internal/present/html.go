package present

// The HTML reports of a session and of a replay, written atomically.

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/htmlreport"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/playback"
)

// SessionHTML writes the HTML report of a session to path, replacing
// it atomically. frames is read twice (check, then the report), one frame
// at a time: the report of a long session is written in little memory.
func SessionHTML(path string, meta *frame.Session, frames htmlreport.Frames) error {
	findings, err := checkFindings(meta, frames)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := htmlreport.Session(bw, meta, frames, findings); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// ReplayHTML writes the HTML report of a replay (or a comparison) to
// path, replacing it atomically. A replay that could not run gets a report
// that says why.
func ReplayHTML(path string, o *playback.Outcome) error {
	var live htmlreport.Frames
	if frames := o.Live(); frames != nil {
		live = htmlreport.Slice(frames)
	}
	return replayHTML(path, o, htmlreport.Slice(o.Recording.Frames), live)
}

// DiffHTML writes the HTML report of a comparison of streams (o is
// playback.CompareStreams' of a with b) to path, replacing it atomically.
// Each stream is read once more, one frame at a time: the report of two
// long recordings is written in little memory.
func DiffHTML(path string, o *playback.Outcome, a, b *playback.Stream) error {
	return replayHTML(path, o, a.Each, b.Each)
}

func replayHTML(path string, o *playback.Outcome, recorded, live htmlreport.Frames) error {
	in := htmlreport.ReplayInput{Name: o.Recording.Name, Meta: o.Recording.Meta, Recorded: recorded, Live: live, Diff: o.Diff}
	in.Notes = note.Strings(outcomeNotes(o))
	if o.Run != nil {
		in.Unmatched = o.Run.Unmatched
		in.Elapsed = o.Run.Elapsed
	}
	if o.Err != nil {
		in.Err = o.Err.Error()
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := htmlreport.Replay(bw, in); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// reportFindingsPerRule bounds the findings of one rule that a report
// marks: a session that breaks a rule on every frame would otherwise carry
// one finding per frame into the page (500,000 for a million frames).
const reportFindingsPerRule = 1000

// checkFindings runs the check engine over a session, for the report to
// mark the frames the host would reject, drop or punish: at most
// reportFindingsPerRule of each rule, and for the rest one finding that
// says how many more tapedeck check lists.
// The session's profile decides the rules (an MCP or a language server's
// session is checked by its own, not Agentty's).
func checkFindings(meta *frame.Session, frames htmlreport.Frames) ([]htmlreport.Finding, error) {
	opts := check.OptionsFor(meta.Cwd)
	opts.Profile, opts.Framing = profile.Of(meta), meta.Framing
	c := check.New(opts)
	var out []htmlreport.Finding
	perRule := map[string]int{}
	add := func(fs []check.Finding) {
		for _, f := range fs {
			perRule[f.Rule]++
			if perRule[f.Rule] > reportFindingsPerRule {
				continue
			}
			out = append(out, htmlreport.Finding{Seq: f.Seq, Level: string(f.Level), Rule: f.Rule, Method: f.Method, Message: f.Message, Path: f.Path})
		}
	}
	if err := frames(func(f *frame.Frame) error { add(c.Feed(f)); return nil }); err != nil {
		return nil, fmt.Errorf("check frames: %w", err)
	}
	add(c.Finish())
	rules := slices.Sorted(maps.Keys(perRule))
	for _, rule := range rules {
		if n := perRule[rule] - reportFindingsPerRule; n > 0 {
			out = append(out, htmlreport.Finding{Level: string(check.Info), Rule: rule,
				Message: fmt.Sprintf("and %d more %s findings, not marked in this report: tapedeck check lists them all", n, rule)})
		}
	}
	return out, nil
}
