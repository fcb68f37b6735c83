package playback

// What a comparison is told by: the tapedeck.json beside a tape (its
// ignore rules and filters), and the Outcome's own filters for further
// comparisons.

import (
	"fmt"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/filter"
	"github.com/tapedeck/tapedeck/internal/host"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/note"
)

// Filter names noise inside a string, replaced by a placeholder on both
// sides before comparing (see filter.Filter and tapedeck.json).
type Filter = filter.Filter

// configBeside is the path of the tapedeck.json that rec is compared
// under ("" for a stored session) and what it holds.
func configBeside(rec *Recording) (string, *filter.Config, error) {
	if rec.TapePath == "" {
		return "", &filter.Config{}, nil
	}
	path := filter.ConfigPath(rec.TapePath)
	cfg, err := filter.ReadConfig(path)
	return path, cfg, err
}

// ignoreRules parses rules from flags and config, naming the bad one.
func ignoreRules(flags []string, cfg *filter.Config, cfgPath string) ([]jsonpath.Rule, error) {
	var rules []jsonpath.Rule
	for _, s := range flags {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("--ignore %q: %v", s, err)
		}
		rules = append(rules, r)
	}
	for _, s := range cfg.Ignore {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("%s: ignore rule %q: %v", cfgPath, s, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// ignoreFunc turns rules into the predicate diff takes.
func ignoreFunc(rules []jsonpath.Rule) func(string, []string) bool {
	if len(rules) == 0 {
		return nil
	}
	return func(method string, p []string) bool {
		for _, r := range rules {
			if r.MatchMethod(method) && r.Path.Match(p) {
				return true
			}
		}
		return false
	}
}

// compareFiltered compares recorded with live under o.DiffOptions once
// filters have rewritten copies of both, and notes which filters applied.
// recorded and live themselves are left as they are: what is saved keeps
// the real values.
func (o *Outcome) compareFiltered(filters *filter.Set, recorded, live []frame.Frame) {
	o.filters = filters
	stderr := o.DiffOptions.CompareStderr
	o.Diff = o.timing().diff(filters.Frames(recorded, stderr, true), filters.Frames(live, stderr, true), o.DiffOptions)
	if n := filters.Note(); n != "" {
		o.Notes = append(o.Notes, note.Text(n))
	}
}

// Filtered is frames as o's comparison read them: with the filters it
// compared under applied to what the plugin said (stderr too when it was
// compared), counting nothing; frames itself when no filter changed any.
// frames is never changed.
func (o *Outcome) Filtered(frames []frame.Frame) []frame.Frame {
	return o.filters.Frames(frames, o.DiffOptions.CompareStderr, false)
}

// Recompare compares other recorded frames (a shrunk candidate's, say)
// with o's live run, under the same options, filters and profile timing
// as o (counting nothing). o itself is left as it is.
func (o *Outcome) Recompare(recorded []frame.Frame) diff.Result {
	live := o.Compared()
	res := o.timing().diff(o.Filtered(recorded), o.Filtered(live), o.DiffOptions)
	res, _ = o.timing().relax(res, recorded, live, nil)
	return res
}

// Compared is what the plugin said this time as it is compared with the
// recording: each value it chose itself put back to the recorded one
// (host.Uncarry), each folder of the run's own to the recorded folder
// (host.Unmove), its frames of independent streams in the recorded order
// of their streams (see timing.arrange). Live itself when neither applies.
func (o *Outcome) Compared() []frame.Frame {
	live, _ := o.comparedMoved()
	return live
}

// comparedMoved is Compared, and how many of the plugin's frames it put
// in another place.
func (o *Outcome) comparedMoved() ([]frame.Frame, int) {
	if o.Run == nil {
		return o.Live(), 0
	}
	live := host.Unmove(host.Uncarry(o.Run.Live, o.Run.Carried), o.moved)
	if o.prepared == nil {
		return live, 0
	}
	return o.prepared.timing.arrange(o.Recording.Frames, live)
}

// carriedNote says which values the plugin chose itself came back other
// than recorded, by place; "" for none.
func carriedNote(carried []host.Carried) string {
	if len(carried) == 0 {
		return ""
	}
	var places []string
	n := map[string]int{}
	for _, c := range carried {
		if n[c.Place] == 0 {
			places = append(places, c.Place)
		}
		n[c.Place]++
	}
	parts := make([]string, len(places))
	for i, pl := range places {
		parts[i] = fmt.Sprintf("%s ×%d", pl, n[pl])
	}
	return fmt.Sprintf("carried %d values the plugin chose itself (the live one sent back and compared as the recorded one): %s", len(carried), strings.Join(parts, ", "))
}
