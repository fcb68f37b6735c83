package jsonpath

import (
	"strings"
	"testing"
)

// matchByBacktracking is the matcher match replaced, kept as an oracle:
// it tries every place for each ".." in turn (time exponential in their
// number), which is right by construction.
func matchByBacktracking(pat []segment, c []string) bool {
	for len(pat) > 0 {
		s := pat[0]
		if s.kind == segDescend {
			for k := 0; k <= len(c); k++ {
				if matchByBacktracking(pat[1:], c[k:]) {
					return true
				}
			}
			return false
		}
		if len(c) == 0 || !s.matches(c[0]) {
			return false
		}
		pat, c = pat[1:], c[1:]
	}
	return len(c) == 0
}

// FuzzMatchAgreesWithBacktracking: on any pattern that parses and any short
// concrete path made of a few names and indexes, match says what the
// backtracking matcher says.
func FuzzMatchAgreesWithBacktracking(f *testing.F) {
	for _, s := range []struct{ pat, path string }{
		{"a..b..c", "a x b y z c"}, {"..[*]", "x [1]"}, {"params.*..id", "params t [0] id"}, {"a", ""},
	} {
		f.Add(s.pat, s.path)
	}
	f.Fuzz(func(t *testing.T, pat, path string) {
		p, err := Parse(pat)
		if err != nil {
			return
		}
		c := strings.Fields(path)
		if len(c) > 12 || len(p.segs) > 12 {
			return // the oracle is exponential
		}
		want := matchByBacktracking(p.segs, c)
		if got := match(p.segs, c); got != want {
			t.Fatalf("Parse(%q).Match(%q) = %v, the backtracking matcher says %v", pat, c, got, want)
		}
		st := p.Start()
		for _, seg := range c {
			st = p.Step(st, seg)
		}
		if got := p.Accepts(st); got != want {
			t.Fatalf("Parse(%q) stepped through %q accepts: %v, the backtracking matcher says %v", pat, c, got, want)
		}
	})
}

// TestMatchManyDescendsOnADeepPath: twelve ".." against a path 2,000
// segments deep that none of them completes, which the backtracking
// matcher would need about 2,000^12 steps to refuse; a pattern without
// ".." longer than MaxStepped, matched segment by segment; and one with
// ".." that long, which Parse refuses.
func TestMatchManyDescendsOnADeepPath(t *testing.T) {
	deep := make([]string, 2000)
	for i := range deep {
		deep[i] = "a"
	}
	rule, err := ParseRule("*:" + strings.Repeat("..a", 12) + "..zz")
	if err != nil {
		t.Fatal(err)
	}
	if rule.Path.Match(deep) {
		t.Error("matched a path that has no zz")
	}
	if !rule.Path.Match(append(deep[:len(deep):len(deep)], "zz")) {
		t.Error("did not match the path that ends in zz")
	}
	long, err := Parse(strings.Repeat("a.", 40) + "b")
	if err != nil {
		t.Fatal(err)
	}
	if !long.Match(append(deep[:40:40], "b")) || long.Match(deep[:41]) {
		t.Error("a 41-segment pattern matches wrongly")
	}
	longer, err := Parse(strings.Repeat("a.", 70) + "b")
	if err != nil || !longer.Match(append(deep[:70:70], "b")) || longer.Match(deep[:71]) {
		t.Errorf("a 71-segment pattern without ..: %v, or it matches wrongly", err)
	}
	if _, err := Parse(strings.Repeat("a.", 70) + ".b"); err == nil || !strings.Contains(err.Error(), "at most 63 segments") {
		t.Errorf("Parse of a 71-segment pattern with .. = %v, want it refused", err)
	}
}
