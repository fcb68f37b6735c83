package redact

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// lineCheckedFirst is Line as it was when every line was checked for JSON
// before anything else: the oracle FuzzLineChecksJSONWhenItMatters holds
// Line to.
func (r *Redactor) lineCheckedFirst(dir frame.Dir, raw []byte, cut bool) []byte {
	if dir == frame.Err {
		return r.text(raw)
	}
	lead, body, trail := trimSpace(raw)
	if len(body) == 0 || body[0] != '{' || !cut && !json.Valid(body) {
		return r.text(raw)
	}
	env, ok := envelope(body)
	if !ok {
		return r.text(raw)
	}
	if !r.activate(r.pair(dir, env)) {
		return raw
	}
	return r.rewrite(raw, lead, body, trail, cut)
}

// FuzzLineChecksJSONWhenItMatters: Line checks a line for JSON only where
// the answer can change what it returns or what it remembers, and so
// redacts every session as checking each line first did: the same bytes,
// line after line, and the same requests remembered for pairing.
func FuzzLineChecksJSONWhenItMatters(f *testing.F) {
	for _, s := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"net/fetch\",\"params\":{\"headers\":{\"Authorization\":\"x\"}}}\n{\"id\":1,\"result\":{\"headers\":{\"Set-Cookie\":\"y\"}}}",
		"{\"method\":\"net/fetch\",\"params\":{\"headers\":{\"token\":\"z\"}}\n{\"method\":\"storage/set\",\"params\":{\"value\":1}}",
		"{\"id\":2,\"method\":\"net/fetch\",\"params\":{\"headers\":{\"Cookie\":\"c\"}},}\n{\"id\":2,\"result\":{\"headers\":{\"Cookie\":\"d\"}}}",
		"{\"method\":\"storage/set\",\"params\":{\"value\":[1,]}}\n{\"method\":\"x\" \"params\":{}}",
	} {
		f.Add([]byte(s), byte(0))
	}
	f.Fuzz(func(t *testing.T, session []byte, cuts byte) {
		a := newRedactor(t, true, nil, "storage/set:params.value", "*:result.secret")
		b := newRedactor(t, true, nil, "storage/set:params.value", "*:result.secret")
		for i, raw := range bytes.Split(session, []byte("\n")) {
			dir := frame.Out
			if i%2 == 1 {
				dir = frame.In
			}
			cut := cuts&(1<<(i%8)) != 0
			got, want := a.Line(dir, raw, cut), b.lineCheckedFirst(dir, raw, cut)
			if !bytes.Equal(got, want) {
				t.Fatalf("line %d %q (%v, cut %v): Line gave %q, checked first %q", i, raw, dir, cut, got, want)
			}
		}
		if am, bm := maps.Collect(a.pending.All()), maps.Collect(b.pending.All()); !maps.Equal(am, bm) {
			t.Fatalf("remembered %v, checked first %v", am, bm)
		}
	})
}
