package jsonpath

import (
	"errors"
	"strings"
	"testing"
)

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}

func TestMatch(t *testing.T) {
	tests := []struct {
		path     string
		concrete string // segments separated by spaces
		want     bool
	}{
		{"params.headers.Authorization", "params headers Authorization", true},
		{"params.headers.Authorization", "params headers authorization", false},
		{"params.headers.Authorization", "params headers", false},
		{"params.headers.Authorization", "params headers Authorization x", false},
		{"result.turns[*].text", "result turns [0] text", true},
		{"result.turns[*].text", "result turns [17] text", true},
		{"result.turns[*].text", "result turns x text", false},
		{"result.turns[2].text", "result turns [2] text", true},
		{"result.turns[2].text", "result turns [3] text", false},
		{"params..value", "params value", true},
		{"params..value", "params a b [3] value", true},
		{"params..value", "params a value b", false},
		{"params..value", "value", false},
		{"..value", "value", true},
		{"..value", "x [1] value", true},
		{"params.tree..updatedAt", "params tree children [0] updatedAt", true},
		{"params.tree..updatedAt", "params updatedAt", false},
		{"params.*", "params x", true},
		{"params.*", "params [0]", false},
		{"params.*.id", "params tree id", true},
		{`params["a.b"].c`, "params a.b c", true},
		{`params["a.b"].c`, "params a b c", false},
		{"params..[*]", "params x [4]", true},
		{"params..[*]", "params x", false},
		{"a..b..c", "a x b y z c", true},
		{"a..b..c", "a b c", true},
		{"a..b..c", "a c b", false},
	}
	for _, tt := range tests {
		p, err := Parse(tt.path)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.path, err)
		}
		if got := p.Match(split(tt.concrete)); got != tt.want {
			t.Errorf("Parse(%q).Match(%q) = %v, want %v", tt.path, tt.concrete, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ path, want string }{
		{"", "empty path"},
		{".a", "a dot where a name should be"},
		{"a.", "a dot at the end"},
		{"a..", ".. at the end"},
		{"a...b", "three dots"},
		{"a.[0]", "a dot before"},
		{"a[", "[ without ]"},
		{"a[x]", "want [n], [*]"},
		{"a[01]", "want [n], [*]"},
		{"a[-1]", "want [n], [*]"},
		{`a["x`, "unterminated quoted name"},
		{`a["x"`, "want ] after the quoted name"},
		{"a]b", "in a name"},
		{`a"b`, "in a name"},
		{"a[0]b", "want . or [ before"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.path)
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.path, err, tt.want)
		}
	}
}

func TestParseRule(t *testing.T) {
	r, err := ParseRule("net/fetch:params.headers.Authorization")
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != "net/fetch" || r.Path.String() != "params.headers.Authorization" {
		t.Errorf("ParseRule = %+v", r)
	}
	methods := []struct {
		glob, method string
		want         bool
	}{
		{"net/fetch", "net/fetch", true},
		{"net/*", "net/fetch", true},
		{"net/*", "ui/notify", false},
		{"*", "ui/setPanel", true},
		{"*", "initialize", true},
		{"ui/set*", "ui/setBadge", true},
	}
	for _, m := range methods {
		if got := (Rule{Method: m.glob}).MatchMethod(m.method); got != m.want {
			t.Errorf("Rule{Method: %q}.MatchMethod(%q) = %v, want %v", m.glob, m.method, got, m.want)
		}
	}
	for _, bad := range []string{"params.x", ":params.x", "net/fetch:", "net/[:params", "a:b..", "a:"} {
		if _, err := ParseRule(bad); err == nil || !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseRule(%q) = %v, want a syntax error", bad, err)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, s := range []string{
		"params.headers.Authorization", "result.turns[*].text", "params..value", "..value",
		"params.tree..updatedAt", `params["content.type"]`, `a["x.y"].b[3][*]..c`, "a.*.b", "[0].x", "a..[*]",
	} {
		p, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if got := p.String(); got != s {
			t.Errorf("Parse(%q).String() = %q", s, got)
		}
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{
		"net/fetch:params.headers.Authorization", "session/get:result.turns[*].text", "storage/set:params..value",
		`*:params["a\"]b"]..x[0]`, "a:b", "x:..[*]", ":", "a:[", "a:b[01]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseRule(%q) error %v does not wrap ErrSyntax", s, err)
			}
			return
		}
		// What parses prints back to a rule that parses to the same thing.
		again, err := ParseRule(r.String())
		if err != nil {
			t.Fatalf("ParseRule(%q).String() = %q does not parse: %v", s, r.String(), err)
		}
		if again.String() != r.String() {
			t.Fatalf("String not stable: %q then %q", r.String(), again.String())
		}
		// Matching never panics, and a path of plain names matches itself.
		r.Path.Match([]string{"params", "[0]", "x"})
		r.Path.Match(nil)
	})
}

// BenchmarkParse parses the paths rules are written with (redaction,
// ignore and carry rules), plain, quoted, indexed and with "..".
func BenchmarkParse(b *testing.B) {
	paths := []string{
		"params.headers.Authorization", "result.turns[*].text", "params..value",
		`params["content-type"]`, "result.items[12].id", "params.tree..updatedAt",
	}
	b.ReportAllocs()
	for range b.N {
		for _, s := range paths {
			if _, err := Parse(s); err != nil {
				b.Fatal(err)
			}
		}
	}
}
