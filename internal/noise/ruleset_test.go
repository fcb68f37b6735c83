package noise

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tapedeck/tapedeck/internal/jsonpath"
)

// TestRuleSetIsCoveredBy: a ruleSet covers what coveredBy over the same
// rules, parsed one by one, covers: over random rules and paths, with the
// wildcards noise spells, member names it quotes, spellings it does not
// make of its own (odd index spellings, a method holding a colon, method
// globs) and paths with the wildcards in them (as proposeRules asks).
func TestRuleSetIsCoveredBy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	methods := []string{"tools/list", "tools/list", "a", "", "x:y", "x", "t*", "t?", `a\b`, "[", "tools/*", "ab"}
	segs := []string{"params", "result", "result", "files", "a", "src/f1.go", "x.y", "", "*", "a*b",
		"[0]", "[1]", "[10]", "[03]", "[01]", "[*]", "[*]", anyMember, anyMember, `["q"]`, `["a"]`, "[x]", "[]",
		"\xff.", "a:b", "..", "[2147483648]", "[2147483647]", "é", `q"`, "b]"}
	path := func() []string {
		var p []string
		for range 1 + r.IntN(4) {
			p = append(p, segs[r.IntN(len(segs))])
		}
		return p
	}
	covered, asked := 0, 0
	for round := range 1000 {
		rs := newRuleSet()
		var parsed []jsonpath.Rule
		var added []pathChange
		for range r.IntN(12) {
			m, p := methods[r.IntN(len(methods))], path()
			rs.add(m, p)
			added = append(added, pathChange{method: m, segs: p})
			if pr, err := jsonpath.ParseRule(spellRule(m, p)); err == nil {
				parsed = append(parsed, pr)
			}
		}
		for range 40 {
			m, p := methods[r.IntN(len(methods))], path()
			if len(added) > 0 && r.IntN(2) == 0 {
				// A path a rule was made from, or below it, or a sibling.
				a := added[r.IntN(len(added))]
				p = slices.Clone(a.segs)
				if r.IntN(4) > 0 {
					m = a.method
				}
				switch r.IntN(3) {
				case 0:
					p = append(p, segs[r.IntN(len(segs))])
				case 1:
					p[r.IntN(len(p))] = segs[r.IntN(len(segs))]
				}
			}
			got, want := rs.covers(m, p), coveredBy(parsed, m, p)
			if got != want {
				t.Fatalf("round %d: rules %q cover %s %q: %v, coveredBy says %v", round, parsed, m, p, got, want)
			}
			asked++
			if got {
				covered++
			}
		}
	}
	if covered < asked/20 || covered > asked*9/10 {
		t.Errorf("%d of %d paths covered: too few of one answer to compare", covered, asked)
	}
}

// TestRuleSetLooksAtThePathNotEveryRule: asking whether one of n
// proposed rules covers a path looks at about as many rules (or nodes of
// their tries) as the path is deep, not at all n, for rules as
// proposeRules makes them: a member name for each of n files, array
// indexes joined into [*], made-up names into *, and one rule for every
// method. Before, each question compared the path with every rule: with
// 8,000 files, proposeRules took 7.7 s.
func TestRuleSetLooksAtThePathNotEveryRule(t *testing.T) {
	const n = 2000
	var paths []pathChange
	for k := range n {
		paths = append(paths,
			pathChange{method: "tools/list", segs: []string{"result", "files", fmt.Sprintf("src/f%d.go", k), "mtime"}},
			pathChange{method: "tools/call", segs: []string{"result", "items", jsonpath.Index(k), "at"}},
			pathChange{method: "tools/call", segs: []string{"result", "byId", fmt.Sprintf("id-%06d", k), "seen"}},
		)
	}
	paths = append(paths, pathChange{segs: []string{"params", "clock"}})
	rules, kept := proposeRules(paths)
	if len(rules) != n+3 {
		t.Fatalf("%d rules, want %d", len(rules), n+3)
	}
	depth := 0
	for _, p := range paths {
		for _, c := range []struct {
			segs []string
			want bool
		}{
			{p.segs, true},
			{append(slices.Clone(p.segs), "below"), true},
			{p.segs[:1], false},
			{append(slices.Clone(p.segs[:len(p.segs)-1]), "other"), false},
		} {
			depth += len(c.segs)
			if got := kept.covers(p.method, c.segs); got != c.want {
				t.Fatalf("%s %q covered: %v, want %v", p.method, c.segs, got, c.want)
			}
		}
	}
	if limit := 4 * depth; kept.looked > limit {
		t.Errorf("looked at %d rules or nodes for paths %d segments deep in all, want at most %d", kept.looked, depth, limit)
	}
}
