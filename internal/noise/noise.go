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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	found := newPlaces()
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
		found.add(differences)
		return nil
	}
	if i, err := inorder.Run(ctx, max(runs-1, 0), jobs, between, note); err != nil {
		return nil, fmt.Errorf("replay %s (run %d): %w", rec.Name, i+2, err)
	}
	var whole []pathChange
	var parts []proposedFilter
	for _, v := range found.order {
		s := found.byVaried[v]
		fs := s.filters()
		if fs == nil {
			whole = append(whole, s.pathChange)
			continue
		}
		for _, f := range fs {
			parts = append(parts, proposedFilter{site: s.pathChange, re: f.Regex, repl: f.Replacement})
		}
	}
	var proposed *ruleSet
	nr.Rules, proposed = proposeRules(whole)
	nr.Filters = groupFilters(parts)
	for _, d := range first.Diff.Differences {
		for _, ch := range d.Changes {
			// What a proposed rule ignores is noise, however alike the runs
			// made it (a made-up member name absent from every run).
			if found.byVaried[variedAt(d.Method, ch)] == nil && !proposed.covers(d.Method, ch.Segments) {
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

// varied names a place that varied between runs: a path in the messages
// of a method, by its segments (a change's spelled Path is cut where it
// is long, and two long ones may spell alike).
type varied struct{ method, path string }

// variedAt is the place of change ch in a message of method.
func variedAt(method string, ch diff.Change) varied {
	return varied{method, strings.Join(ch.Segments, "\x00")}
}

// places are the places that varied between runs, gathered in run order
// from the differences each run found, and the values each took.
type places struct {
	byVaried map[varied]*place
	order    []varied // in the order first found
	// decoded counts the sides of differences whose JSON was decoded to
	// read the values: at most two for each difference, however many
	// changes it holds.
	decoded int
}

func newPlaces() *places { return &places{byVaried: map[varied]*place{}} }

// add notes the changes of the differences one run found, and the values
// their places took: the recorded one when the place is first found, and
// the run's.
func (ps *places) add(differences []diff.Difference) {
	for _, d := range differences {
		recorded, live := decodedSide{side: d.Recorded}, decodedSide{side: d.Live}
		for _, ch := range d.Changes {
			v := variedAt(d.Method, ch)
			s := ps.byVaried[v]
			if s == nil {
				s = &place{pathChange: pathChange{method: d.Method, segs: ch.Segments}, strings: true}
				ps.byVaried[v] = s
				ps.order = append(ps.order, v)
				s.add(recorded.at(ch.Segments))
			}
			s.add(live.at(ch.Segments))
			s.absent = s.absent || ch.Old == "" || ch.New == ""
		}
		ps.decoded += recorded.decodes + live.decodes
	}
}

// place is a place that varied between runs and the values it took.
type place struct {
	pathChange
	values  []string
	strings bool // every value so far is a string
}

// add notes a value the place took (nil: none, or null).
func (s *place) add(v any) {
	str, ok := v.(string)
	if !ok {
		s.strings = false
		return
	}
	s.values = append(s.values, str)
}

// filters proposes the filters that cover how the site's string varied,
// or nil when it is not a string or varied whole.
func (s *place) filters() []filter.Filter {
	if !s.strings || len(s.values) < 2 {
		return nil
	}
	return proposeStringFilters(s.values)
}

// decodedSide is one side of a difference (nil: none), for looking up
// the values of its changes: its JSON is decoded when the first is looked
// up, and kept for the rest. A difference may hold thousands of changes
// (an answer listing that many items that vary), and decoding reads the
// whole frame: decoded again for each change, a frame of n such items cost
// n² (4,000 items: 48.6 s).
type decodedSide struct {
	side    *diff.Side
	decodes int  // times its JSON was decoded: 0 or 1
	tree    any  // the JSON, decoded
	ok      bool // the JSON decoded
}

// at is the value at segs in the side's JSON, as jsonpath.Lookup has it;
// nil when there is none.
func (ds *decodedSide) at(segs []string) any {
	if ds.side == nil {
		return nil
	}
	if ds.decodes == 0 {
		ds.decodes++
		ds.tree, ds.ok = jsonpath.Decode(ds.side.JSON)
	}
	if !ds.ok {
		return nil
	}
	v, _ := jsonpath.Walk(ds.tree, segs)
	return v
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
// The rules are also given as a ruleSet, for asking what they cover.
func proposeRules(paths []pathChange) ([]string, *ruleSet) {
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
	every, kept := newRuleSet(), newRuleSet()
	for _, p := range all {
		every.add(p.method, p.segs)
	}
	var rules []string
	seen := map[string]bool{}
	for _, p := range all {
		// Covered by a rule of an object that holds it: by itself, and
		// by another's below its own length.
		if len(p.segs) > 1 && every.covers(p.method, p.segs[:len(p.segs)-1]) {
			continue
		}
		r := spellRule(p.method, p.segs)
		if !seen[r] {
			seen[r] = true
			rules = append(rules, r)
			kept.add(p.method, p.segs)
		}
	}
	sort.Strings(rules)
	return rules, kept
}

// ruleSet is a set of proposed ignore rules, for asking whether one of
// them covers a path (as coveredBy does) at a cost of about the path's
// depth, however many rules it holds: comparing each path with every rule
// made proposing n rules cost n² (8,000 rules: 7.7 s).
//
// It is built from what spellRule spells the rules from, a method and
// segments, rather than from the parsed rules (whose segments jsonpath
// keeps to itself): each rule is put in a trie of segments, with one
// child for a member or index named exactly and one for each wildcard
// noise spells (* and [*]). The tries are only as right as spellRule's
// spelling is read back by jsonpath.ParseRule segment for segment, which
// is the case for all but spellings noise does not make of its own
// accord (see spelledAsIs): those rules are kept apart and compared one
// by one, as coveredBy does.
type ruleSet struct {
	byMethod map[string]*ruleNode // rules whose method is a name, not a glob
	globs    []globRules          // rules whose method is a glob (* for no method)
	odd      []jsonpath.Rule      // rules not spelledAsIs
	// looked counts the rules, and nodes of their tries, looked at to
	// answer covers.
	looked int
}

// globRules are the rules of one method glob.
type globRules struct {
	glob jsonpath.Rule // for its MatchMethod
	root *ruleNode
}

// ruleNode is a node in a trie of rule paths: the rules whose path leads
// to it from the root go on below it by these segments.
type ruleNode struct {
	end      bool                 // a rule's path ends here
	exact    map[string]*ruleNode // a member by name, or an index "[n]"
	anyName  *ruleNode            // *
	anyIndex *ruleNode            // [*]
}

func newRuleSet() *ruleSet { return &ruleSet{byMethod: map[string]*ruleNode{}} }

// add adds the rule spellRule spells for a path (one that does not parse
// is left out, as it would be from tapedeck.json).
func (rs *ruleSet) add(method string, segs []string) {
	r, err := jsonpath.ParseRule(spellRule(method, segs))
	switch {
	case err != nil:
		return
	case !spelledAsIs(method, segs):
		rs.odd = append(rs.odd, r)
		return
	}
	var root *ruleNode
	if !strings.ContainsAny(r.Method, `*?[\`) {
		// Without a glob's special characters, a method glob matches
		// that one method alone.
		if root = rs.byMethod[r.Method]; root == nil {
			root = &ruleNode{}
			rs.byMethod[r.Method] = root
		}
	} else {
		i := slices.IndexFunc(rs.globs, func(g globRules) bool { return g.glob.Method == r.Method })
		if i < 0 {
			i = len(rs.globs)
			rs.globs = append(rs.globs, globRules{glob: r, root: &ruleNode{}})
		}
		root = rs.globs[i].root
	}
	n := root
	for _, seg := range segs {
		n = n.child(seg)
	}
	n.end = true
}

// child is the node below n by the segment seg of a path spelledAsIs,
// made when there is none.
func (n *ruleNode) child(seg string) *ruleNode {
	next := func(c **ruleNode) *ruleNode {
		if *c == nil {
			*c = &ruleNode{}
		}
		return *c
	}
	switch seg {
	case anyMember:
		return next(&n.anyName)
	case "[*]":
		return next(&n.anyIndex)
	}
	if n.exact == nil {
		n.exact = map[string]*ruleNode{}
	}
	c := n.exact[seg]
	if c == nil {
		c = &ruleNode{}
		n.exact[seg] = c
	}
	return c
}

// spelledAsIs reports whether jsonpath.ParseRule reads the rule
// spellRule spells for method and segs back as they are: the method whole
// (it holds no colon, which would end it early), and for each segment, *
// for anyMember, [*] for "[*]", the index for an index spelled as
// jsonpath spells it (no leading zero, below 2³¹), and the member so named
// for a segment not in brackets (bare, or quoted as JSON, which gives back
// a name of valid UTF-8 as it was). A concrete member named "[*]" is read
// as [*] too; that is what the rule says, and the trie follows it.
func spelledAsIs(method string, segs []string) bool {
	if strings.Contains(method, ":") {
		return false
	}
	for _, s := range segs {
		switch {
		case s == anyMember || s == "[*]":
		case isIndex(s):
			n, err := strconv.ParseUint(s[1:len(s)-1], 10, 31)
			if err != nil || s != jsonpath.Index(int(n)) {
				return false
			}
		case !utf8.ValidString(s):
			return false
		}
	}
	return true
}

// covers reports whether a rule of the set ignores the value at segs of a
// message of method: the value it names or one that holds it (an ignore
// rule takes a whole subtree), as coveredBy does.
func (rs *ruleSet) covers(method string, segs []string) bool {
	if root := rs.byMethod[method]; root != nil && root.covers(segs, &rs.looked) {
		return true
	}
	for _, g := range rs.globs {
		rs.looked++
		if g.glob.MatchMethod(method) && g.root.covers(segs, &rs.looked) {
			return true
		}
	}
	rs.looked += len(rs.odd)
	return coveredBy(rs.odd, method, segs)
}

// covers reports whether a path of the trie below n names a prefix of
// segs, but the empty one: a rule names the value at it, which holds the
// value at segs. A segment leads to its exact child and to one wildcard's
// at most, so that a walk forks only where rules were proposed both for a
// wildcard and for a name or index below the same place; looked counts
// the nodes it looks at.
func (n *ruleNode) covers(segs []string, looked *int) bool {
	*looked++
	if len(segs) == 0 {
		return false
	}
	seg, rest := segs[0], segs[1:]
	next := n.exact[seg]
	if next != nil && (next.end || next.covers(rest, looked)) {
		return true
	}
	// As jsonpath matches: * takes any member, [*] any index, as jsonpath
	// spells one.
	next = n.anyName
	if jsonpath.IsIndex(seg) {
		next = n.anyIndex
	}
	return next != nil && (next.end || next.covers(rest, looked))
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
