package redact

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// TestDeepCutFrame: a frame stored cut is not checked as JSON, so it can
// open millions of arrays; the rewriter enters maxDepth levels and copies
// the rest, with the regular expressions applied to its text, instead of
// recursing a level per byte (which ran out of stack).
func TestDeepCutFrame(t *testing.T) {
	r := newRedactor(t, false, []string{`sk-[0-9a-f]+`}, "*:..a..b")
	deep := `{"jsonrpc":"2.0","method":"net/fetch","params":{"x":` + strings.Repeat("[", 6<<20) + `"sk-0123"`
	got := r.Line(frame.Out, []byte(deep), true)
	if !bytes.HasPrefix(got, []byte(`{"jsonrpc":"2.0","method":"net/fetch","params":{"x":[[[`)) || len(got) < 6<<20 {
		t.Fatalf("a deep cut frame came back as %d bytes starting %.80q", len(got), got)
	}
	if bytes.Contains(got, []byte("sk-0123")) || !bytes.Contains(got, []byte(ph("sk-0123"))) {
		t.Errorf("the secret below the depth the rewriter enters was not replaced: ends %q", got[len(got)-60:])
	}
}

// TestDeepRuleMatchesAtDepth: a "..": rule finds its member far down, in
// a frame as deep as JSON may be, and only there.
func TestDeepRuleMatchesAtDepth(t *testing.T) {
	r := newRedactor(t, false, nil, "*:..a..b")
	const d = 9000
	line := `{"jsonrpc":"2.0","method":"x","params":` + strings.Repeat(`{"a":`, d) + `{"b":"secret","c":"kept"}` + strings.Repeat("}", d) + "}"
	got := string(r.Line(frame.Out, []byte(line), false))
	want := `{"jsonrpc":"2.0","method":"x","params":` + strings.Repeat(`{"a":`, d) + `{"b":"` + ph("secret") + `","c":"kept"}` + strings.Repeat("}", d) + "}"
	if got != want {
		t.Errorf("the rule did not redact exactly params..a..b: got ...%s", got[len(got)-d-60:len(got)-d])
	}
}
