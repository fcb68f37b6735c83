package playback

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tapedeck/tapedeck/diff"
)

// NoiseReport is what replaying again found: what varies between runs of
// the same plugin, and what every run changes alike.
type NoiseReport struct {
	Runs int
	// Rules are the narrowest ignore rules that cover what varied between
	// runs of the same plugin.
	Rules []string
	// Stable are the changes from the recording that every run agrees on:
	// not noise between runs, but (often) time-relative text.
	Stable []StableChange
}

// StableChange is a change from the recording that every run makes alike.
type StableChange struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// Noise replays rec runs-1 more times after first (a Replay of rec with
// the same opt) and proposes ignore rules for the paths that differ
// between runs of the same plugin; what differs from the recording in the
// same way in every run is reported apart.
func Noise(ctx context.Context, rec *Recording, opt *Options, first *Outcome, runs int) (*NoiseReport, error) {
	nr := &NoiseReport{Runs: runs}
	type varied struct{ method, path string }
	seen := map[varied]bool{}
	var paths []pathChange
	for i := 1; i < runs; i++ {
		o := Replay(ctx, rec, opt)
		if o.Err != nil {
			return nil, fmt.Errorf("replay %s (run %d): %v", rec.Name, i+1, o.Err)
		}
		between := diff.Frames(first.Run.Live, o.Run.Live, diff.Options{Mask: first.DiffOptions.Mask})
		for _, d := range between.Differences {
			for _, ch := range d.Changes {
				v := varied{d.Method, ch.Path}
				if !seen[v] {
					seen[v] = true
					paths = append(paths, pathChange{method: d.Method, segs: ch.Segments})
				}
			}
		}
	}
	nr.Rules = proposeRules(paths)
	for _, d := range first.Diff.Differences {
		for _, ch := range d.Changes {
			if !seen[varied{d.Method, ch.Path}] {
				nr.Stable = append(nr.Stable, StableChange{Method: d.Method, Path: ch.Path, Old: ch.Old, New: ch.New})
			}
		}
	}
	return nr, nil
}

// pathChange is a path that changed in a message of method.
type pathChange struct {
	method string
	segs   []string
}

// proposeRules spells the narrowest ignore rules that cover paths: each path
// as it is, except that paths alike but for array indexes (several children
// whose text varies the same way) share one rule with [*] where their
// indexes differ. Sorted, without duplicates.
func proposeRules(paths []pathChange) []string {
	type group struct {
		method string
		segs   []string // the first path, generalised where others differ
	}
	groups := map[string]*group{}
	var order []string
	for _, p := range paths {
		shape := make([]string, len(p.segs))
		for i, s := range p.segs {
			shape[i] = s
			if isIndex(s) {
				shape[i] = "[*]"
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
			if isIndex(s) && g.segs[i] != s {
				g.segs[i] = "[*]"
			}
		}
	}
	var rules []string
	seen := map[string]bool{}
	for _, k := range order {
		r := spellRule(groups[k].method, groups[k].segs)
		if !seen[r] {
			seen[r] = true
			rules = append(rules, r)
		}
	}
	sort.Strings(rules)
	return rules
}

func isIndex(s string) bool { return strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") }

// spellRule spells an ignore rule: METHOD:PATH, keys that need it quoted.
func spellRule(method string, segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
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
