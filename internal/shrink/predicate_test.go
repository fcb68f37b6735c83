package shrink

import (
	"errors"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/diff"
)

func facts() *Facts {
	code := 3
	return &Facts{
		Diff: &diff.Result{Differences: []diff.Difference{
			{Kind: diff.Changed, Method: "ui/setPanel", Changes: []diff.Change{{Path: "params.tree.children[0].text", Segments: []string{"params", "tree", "children", "[0]", "text"}}}},
			{Kind: diff.Missing, Method: "ui/notify"},
		}},
		Code:      &code,
		Stderr:    []string{"plugin: TypeError: x is undefined"},
		Unmatched: []string{"net/fetch (replay seq 9)"},
	}
}

func TestPredicates(t *testing.T) {
	cases := []struct {
		src  string
		want bool
	}{
		{`differs`, true},
		{`!differs`, false},
		{`differs("ui/*")`, true},
		{`differs("host/*")`, false},
		{`changed("ui/setPanel:params.tree..text")`, true},
		{`changed("ui/setPanel:params.tree..label")`, false},
		{`changed("*:params.tree.children[*].text")`, true},
		{`changed("ui/setPanel")`, true},
		{`missing("ui/notify")`, true},
		{`extra("ui/notify")`, false},
		{`moved("*")`, false},
		{`stderr("TypeError")`, true},
		{`stderr("^RangeError")`, false},
		{`unanswered("net/*")`, true},
		{`exit == 3`, true},
		{`exit != 0 && !timedout`, true},
		{`signal("SIGTERM")`, false},
		{`timedout || exit == 3`, true},
		{`(missing("x") || extra("y")) && differs`, false},
		{`!!differs`, true},
		{`differs && exit == 0 || stderr("Type")`, true},
	}
	f := facts()
	for _, c := range cases {
		p, err := ParsePredicate(c.src)
		if err != nil {
			t.Errorf("ParsePredicate(%q): %v", c.src, err)
			continue
		}
		if got := p.Eval(f); got != c.want {
			t.Errorf("ParsePredicate(%q).Eval = %v, want %v", c.src, got, c.want)
		}
		again, err := ParsePredicate(p.String())
		if err != nil || again.String() != p.String() {
			t.Errorf("ParsePredicate(%q).String() = %q does not read back (%v)", c.src, p.String(), err)
		}
	}
}

func TestPredicateErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{``, "want a test"},
		{`differs &&`, "want a test"},
		{`changed(ui/setPanel)`, "want a quoted string"},
		{`changed("ui/setPanel:")`, "path after the colon is empty"},
		{`stderr("(")`, "stderr"},
		{`exit = 3`, "want == or != after exit"},
		{`exit == x`, "want an exit code"},
		{`frobbed("x")`, `unknown test "frobbed"`},
		{`(differs`, "want )"},
		{`differs)`, "unexpected"},
		{`"open`, "unterminated string"},
		{strings.Repeat("(", 200) + "differs" + strings.Repeat(")", 200), "nested deeper"},
	}
	for _, c := range cases {
		_, err := ParsePredicate(c.src)
		if !errors.Is(err, ErrPredicate) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePredicate(%q) = %v, want an error with %q", c.src, err, c.want)
		}
	}
}

// FuzzParsePredicate: any input parses or fails with ErrPredicate, never
// panics; what parses reads back from its String to the same predicate,
// which evaluates the same.
func FuzzParsePredicate(f *testing.F) {
	for _, s := range []string{`differs`, `changed("ui/setPanel:params.tree..text") && exit != 0`, `!(missing("a") || stderr("x+"))`, `exit == -1`, `"\u00e9"`, `signal("SIGTERM") || timedout`} {
		f.Add(s)
	}
	fa := facts()
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePredicate(s)
		if err != nil {
			if !errors.Is(err, ErrPredicate) {
				t.Fatalf("ParsePredicate(%q): error %v does not wrap ErrPredicate", s, err)
			}
			return
		}
		again, err := ParsePredicate(p.String())
		if err != nil {
			t.Fatalf("ParsePredicate(%q).String() = %q does not parse: %v", s, p.String(), err)
		}
		if again.String() != p.String() || again.Eval(fa) != p.Eval(fa) {
			t.Fatalf("ParsePredicate(%q) = %q, read back as %q", s, p.String(), again.String())
		}
	})
}
