// Package noise tells noise from change: replay --runs replays a recording
// again (Find), takes what differs between runs of the same plugin as
// noise and proposes what covers it, a filter where only part of a string
// varied (a random id, a time: the shapes of shape.go) and an ignore rule
// where a whole value did; what every run changes alike is reported
// apart, as change.
package noise

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/filter"
	"github.com/tapedeck/tapedeck/internal/inorder"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/playback"
)

// Report is what replaying again found: what varies between runs of
// the same plugin, and what every run changes alike.
type Report struct {
	Runs int
	// Rules are the narrowest ignore rules that cover what varied between
	// runs of the same plugin, where a whole value varied (or a value
	// that is not a string).
	Rules []string
	// Stable are the changes from the recording that every run agrees on:
	// not noise between runs, but (often) time-relative text.
	Stable []StableChange
	// Filters are proposed for strings of which only a part varied (a
	// random id, a time, a UUID, a number): each matches the shape of the
	// part that varied, scoped with At to where it varied, so that a
	// change to the rest of the string still fails. Sorted by At.
	Filters []filter.Filter
}

// StableChange is a change from the recording that every run makes alike.
type StableChange struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// Find replays first's recording runs-1 more times (as first was
// replayed, see playback.Outcome.Again, with opt's callbacks), up to jobs
// of them at once (0 or less: 1, one after the other on the calling
// goroutine), and proposes, for what differs between runs of the same
// plugin (under the ignore rules and filters first was compared with, so
// that what is already covered is not proposed again), a filter where
// only part of a string varied and an ignore rule where a whole value did;
// what differs from the recording in the same way in every run is
// reported apart. The report does not depend on jobs: each run is compared
// with first as it ends, and what they found is taken in run order. The
// first run in order that cannot run stops the others (their plugins are
// stopped through ctx) and is the error. With jobs above 1, opt's OnStart
// and Waiting are called from the goroutines that replay, one call at a
// time.
func Find(ctx context.Context, first *playback.Outcome, opt *playback.Options, runs, jobs int) (*Report, error) {
	rec := first.Recording
	nr := &Report{Runs: runs}
	type varied struct{ method, path string }
	seen := map[varied]bool{}
	var order []varied
	sites := map[varied]*place{}
	stderr := first.DiffOptions.CompareStderr
	base := first.Filtered(first.Compared())
	if jobs > 1 {
		opt = serialiseCallbacks(opt)
	}
	// The runs share what the first was replayed under (its redaction key
	// too, so a redacted value reads the same in every run), and a plan.
	again := first.Again(opt)
	if again == nil {
		return nil, fmt.Errorf("replay %s again: it was not replayed", rec.Name)
	}
	// Each further run, replayed and compared with first: on the
	// goroutine that replayed it.
	between := func(ctx context.Context, _ int) ([]diff.Difference, error) {
		o := again(ctx)
		if o.Err != nil {
			return nil, o.Err
		}
		live := first.Filtered(o.Compared())
		if sameLines(base, live, stderr) {
			return nil, nil // most runs: nothing to compare
		}
		return diff.Frames(base, live, diff.Options{Mask: first.DiffOptions.Mask, Ignore: first.DiffOptions.Ignore}).Differences, nil
	}
	// What each found, in run order, on the calling goroutine.
	note := func(_ int, differences []diff.Difference) error {
		for _, d := range differences {
			for _, ch := range d.Changes {
				v := varied{d.Method, ch.Path}
				s := sites[v]
				if !seen[v] {
					seen[v] = true
					order = append(order, v)
					s = &place{pathChange: pathChange{method: d.Method, segs: ch.Segments}, strings: true}
					sites[v] = s
					s.add(d.Recorded, ch.Segments)
				}
				s.add(d.Live, ch.Segments)
				s.absent = s.absent || ch.Old == "" || ch.New == ""
			}
		}
		return nil
	}
	if i, err := inorder.Run(ctx, max(runs-1, 0), jobs, between, note); err != nil {
		return nil, fmt.Errorf("replay %s (run %d): %w", rec.Name, i+2, err)
	}
	var whole []pathChange
	var parts []proposedFilter
	for _, v := range order {
		s := sites[v]
		fs := s.filters()
		if fs == nil {
			whole = append(whole, s.pathChange)
			continue
		}
		for _, f := range fs {
			parts = append(parts, proposedFilter{site: s.pathChange, re: f.Regex, repl: f.Replacement})
		}
	}
	nr.Rules = proposeRules(whole)
	nr.Filters = groupFilters(parts)
	var proposed []jsonpath.Rule
	for _, r := range nr.Rules {
		if pr, err := jsonpath.ParseRule(r); err == nil {
			proposed = append(proposed, pr)
		}
	}
	covered := func(method string, segs []string) bool { return coveredBy(proposed, method, segs) }
	for _, d := range first.Diff.Differences {
		for _, ch := range d.Changes {
			// What a proposed rule ignores is noise, however alike the runs
			// made it (a made-up member name absent from every run).
			if !seen[varied{d.Method, ch.Path}] && !covered(d.Method, ch.Segments) {
				nr.Stable = append(nr.Stable, StableChange{Method: d.Method, Path: ch.Path, Old: ch.Old, New: ch.New})
			}
		}
	}
	return nr, nil
}

// sameLines reports whether two timelines hold the same frames, in the
// same order, of those a comparison reads (stderr only when it is
// compared; of the events only the exit), leaving aside when each came:
// then no comparison can find them different. A live line that matched
// the recording shares its bytes, so this is mostly pointer compares.
func sameLines(a, b []frame.Frame, stderr bool) bool {
	skip := func(f *frame.Frame) bool {
		return f.IsEvent() && f.Event != frame.EventExit || f.Dir == frame.Err && !f.IsEvent() && !stderr
	}
	i, j := 0, 0
	for {
		for i < len(a) && skip(&a[i]) {
			i++
		}
		for j < len(b) && skip(&b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if !a[i].Same(&b[j]) {
			return false
		}
		i, j = i+1, j+1
	}
}

// serialiseCallbacks is opt (nil: the defaults) with its OnStart and
// Waiting called one at a time, for replays on several goroutines.
func serialiseCallbacks(opt *playback.Options) *playback.Options {
	if opt == nil {
		return &playback.Options{}
	}
	if opt.OnStart == nil && opt.Waiting == nil {
		return opt
	}
	o := *opt
	var mu sync.Mutex
	if onStart := opt.OnStart; onStart != nil {
		o.OnStart = func(s playback.Start) {
			mu.Lock()
			defer mu.Unlock()
			onStart(s)
		}
	}
	if waiting := opt.Waiting; waiting != nil {
		o.Waiting = func(what string, waited time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			waiting(what, waited)
		}
	}
	return &o
}

// place is a place that varied between runs and the values it took.
type place struct {
	pathChange
	values  []string
	strings bool // every value so far is a string
}

// add notes the value at segs of one side of a difference.
func (s *place) add(side *diff.Side, segs []string) {
	v, ok := stringAt(side, segs)
	if !ok {
		s.strings = false
		return
	}
	s.values = append(s.values, v)
}

// filters proposes the filters that cover how the site's string varied,
// or nil when it is not a string or varied whole.
func (s *place) filters() []filter.Filter {
	if !s.strings || len(s.values) < 2 {
		return nil
	}
	return proposeStringFilters(s.values)
}

// stringAt is the string at segs in the JSON of a side, if it is one.
func stringAt(side *diff.Side, segs []string) (string, bool) {
	if side == nil {
		return "", false
	}
	v, _ := jsonpath.Lookup(side.JSON, segs)
	s, ok := v.(string)
	return s, ok
}

// proposedFilter is a filter proposed for one site.
type proposedFilter struct {
	site     pathChange
	re, repl string
}

// groupFilters spells the proposed filters with the narrowest At that
// covers their sites: sites alike but for array indexes share one At with
// [*] where their indexes differ, as proposeRules does. Sorted by At, the
// filters of one At in the order they were found; without duplicates.
func groupFilters(parts []proposedFilter) []filter.Filter {
	type group struct {
		p    proposedFilter
		segs []string
	}
	groups := map[string]*group{}
	var order []string
	for _, p := range parts {
		shape := make([]string, len(p.site.segs))
		for i, s := range p.site.segs {
			shape[i] = s
			if isIndex(s) {
				shape[i] = "[*]"
			}
		}
		k := p.site.method + "\x00" + strings.Join(shape, "\x00") + "\x00" + p.re + "\x00" + p.repl
		g, ok := groups[k]
		if !ok {
			groups[k] = &group{p: p, segs: append([]string(nil), p.site.segs...)}
			order = append(order, k)
			continue
		}
		for i, s := range p.site.segs {
			if isIndex(s) && g.segs[i] != s {
				g.segs[i] = "[*]"
			}
		}
	}
	var out []filter.Filter
	seen := map[filter.Filter]bool{}
	for _, k := range order {
		g := groups[k]
		f := filter.Filter{Regex: g.p.re, Replacement: g.p.repl, At: spellRule(g.p.site.method, g.segs)}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// pathChange is a path that changed in a message of method; absent says
// the member was missing on one side of a change (it came or went).
type pathChange struct {
	method string
	segs   []string
	absent bool
}

// coveredBy reports whether a rule of rules ignores the value at segs of a
// message of method: the value it names or one that holds it (an ignore
// rule takes a whole subtree).
func coveredBy(rules []jsonpath.Rule, method string, segs []string) bool {
	for _, r := range rules {
		if !r.MatchMethod(method) {
			continue
		}
		for n := len(segs); n > 0; n-- {
			if r.Path.Match(segs[:n]) {
				return true
			}
		}
	}
	return false
}

// manyNames is how many member names that came or went under one object
// between runs make them made up (see proposeRules), however they look.
const manyNames = 8

// proposeRules spells the narrowest ignore rules that cover paths: each path
// as it is, except that paths alike but for array indexes (several children
// whose text varies the same way) share one rule with [*] where their
// indexes differ, and members named by values the plugin made up (idLike,
// or manyNames or more that came or went under one object) share the rule
// of the object that holds them. Sorted, without duplicates, and without
// those another covers (a member of an object whose rule is proposed).
func proposeRules(paths []pathChange) []string {
	type group struct {
		method string
		segs   []string // the first path, generalised where others differ
	}
	// The objects under which members came and go by many names: their
	// members' names are made up too, however short ("k1021").
	parentKey := func(p pathChange) string {
		shape := make([]string, len(p.segs)-1)
		for i, s := range p.segs[:len(p.segs)-1] {
			shape[i] = s
			if isIndex(s) {
				shape[i] = "[*]"
			}
		}
		return p.method + "\x00" + strings.Join(shape, "\x00")
	}
	names := map[string]map[string]bool{}
	for _, p := range paths {
		if n := len(p.segs); p.absent && n > 1 && !isIndex(p.segs[n-1]) {
			k := parentKey(p)
			if names[k] == nil {
				names[k] = map[string]bool{}
			}
			names[k][p.segs[n-1]] = true
		}
	}
	madeUp := func(p pathChange, i int) bool {
		s := p.segs[i]
		return idLike(s) || i == len(p.segs)-1 && p.absent && !isIndex(s) && len(names[parentKey(p)]) >= manyNames
	}
	groups := map[string]*group{}
	var order []string
	for _, p := range paths {
		shape := make([]string, len(p.segs))
		for i, s := range p.segs {
			shape[i] = s
			switch {
			case isIndex(s):
				shape[i] = "[*]"
			case madeUp(p, i):
				shape[i] = anyMember // a member named by a value the plugin made up
			}
		}
		k := p.method + "\x00" + strings.Join(shape, "\x00")
		g, ok := groups[k]
		if !ok {
			groups[k] = &group{method: p.method, segs: append([]string(nil), p.segs...)}
			order = append(order, k)
			continue
		}
		for i, s := range p.segs {
			switch {
			case g.segs[i] == s:
			case isIndex(s):
				g.segs[i] = "[*]"
			case madeUp(p, i):
				g.segs[i] = anyMember
			}
		}
	}
	type proposed struct {
		method string
		segs   []string
	}
	var all []proposed
	for _, k := range order {
		segs := groups[k].segs
		if n := len(segs); n > 1 && segs[n-1] == anyMember {
			// The members themselves come and go under made-up names: the
			// rule takes the object that holds them (a member ignored keeps
			// its name, which differs).
			segs = segs[:n-1]
		}
		all = append(all, proposed{groups[k].method, segs})
	}
	var parsed []jsonpath.Rule
	for _, p := range all {
		if r, err := jsonpath.ParseRule(spellRule(p.method, p.segs)); err == nil {
			parsed = append(parsed, r)
		}
	}
	var rules []string
	seen := map[string]bool{}
	for _, p := range all {
		// Covered by a rule of an object that holds it: by itself, and
		// by another's below its own length.
		if len(p.segs) > 1 && coveredBy(parsed, p.method, p.segs[:len(p.segs)-1]) {
			continue
		}
		r := spellRule(p.method, p.segs)
		if !seen[r] {
			seen[r] = true
			rules = append(rules, r)
		}
	}
	sort.Strings(rules)
	return rules
}

func isIndex(s string) bool { return strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") }

// anyMember stands, in a proposed rule's segments, for any member name
// (spelled "*"; a member named "*" is spelled quoted).
const anyMember = "\x00*"

// idLike reports whether a member name looks made up at run time (a
// random id, a counter, a time): at least six letters, digits, '-' or '_'
// with a digit among them. Rules for paths that differ only in such names
// are joined into one with "*" there, so that runs that name their members
// anew each time converge on one rule instead of one rule per name.
func idLike(s string) bool {
	if len(s) < 6 {
		return false
	}
	digit := false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '_':
		default:
			return false
		}
	}
	return digit
}

// spellRule spells an ignore rule: METHOD:PATH, keys that need it quoted.
func spellRule(method string, segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
		case s == anyMember:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteByte('*')
		case isIndex(s):
			b.WriteString(s)
		case s == "" || strings.ContainsAny(s, `.[]"*`):
			q, _ := json.Marshal(s)
			b.WriteString("[" + string(q) + "]")
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	if method == "" {
		method = "*"
	}
	return method + ":" + b.String()
}
