package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
)

var key = []byte("test key")

func ph(v string) string { return Placeholder(key, []byte(v)) }

func newRedactor(t testing.TB, defaults bool, res []string, rules ...string) *Redactor {
	t.Helper()
	cfg := Config{Defaults: defaults, Key: key}
	for _, s := range rules {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Rules = append(cfg.Rules, r)
	}
	for _, s := range res {
		cfg.Regexps = append(cfg.Regexps, regexp.MustCompile(s))
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type line struct {
	dir       frame.Dir
	raw, want string
}

func run(t *testing.T, r *Redactor, lines []line) {
	t.Helper()
	for i, l := range lines {
		got := r.Line(l.dir, []byte(l.raw), false)
		if string(got) != l.want {
			t.Errorf("line %d: Line(%s, %s)\n got %s\nwant %s", i, l.dir, l.raw, got, l.want)
		}
	}
}

func TestPathRulesAndPairing(t *testing.T) {
	r := newRedactor(t, false, nil,
		"net/fetch:params.headers.Authorization",
		"session/get:result.turns[*].text",
		"storage/set:params..value",
	)
	run(t, r, []line{
		// A request: the named header only; member order and other values kept.
		{frame.Out,
			`{"jsonrpc":"2.0","id":1,"method":"net/fetch","params":{"url":"https://x","headers":{"Authorization":"Bearer abc","Accept":"*/*"}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"net/fetch","params":{"url":"https://x","headers":{"Authorization":"` + ph("Bearer abc") + `","Accept":"*/*"}}}`},
		// The method after params still counts.
		{frame.Out,
			`{"params":{"headers":{"Authorization":"Bearer abc"}},"id":2,"method":"net/fetch"}`,
			`{"params":{"headers":{"Authorization":"` + ph("Bearer abc") + `"}},"id":2,"method":"net/fetch"}`},
		// Untouched: other methods.
		{frame.Out, `{"jsonrpc":"2.0","id":3,"method":"ui/notify","params":{"headers":{"Authorization":"x"}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"ui/notify","params":{"headers":{"Authorization":"x"}}}`},
		// A plugin request for session/get, answered by the host (in) by id.
		{frame.Out, `{"jsonrpc":"2.0","id":7,"method":"session/get","params":{}}`, `{"jsonrpc":"2.0","id":7,"method":"session/get","params":{}}`},
		{frame.Out, `{"jsonrpc":"2.0","id":7,"result":{"turns":[{"text":"wrong direction"}]}}`, `{"jsonrpc":"2.0","id":7,"result":{"turns":[{"text":"wrong direction"}]}}`},
		{frame.In, `{"jsonrpc":"2.0", "id":7, "result":{"paneId":"p","turns":[{"role":"user","text":"my secret"},{"role":"agent","text":"ok"}]}}`,
			`{"jsonrpc":"2.0","id":7,"result":{"paneId":"p","turns":[{"role":"user","text":"` + ph("my secret") + `"},{"role":"agent","text":"` + ph("ok") + `"}]}}`},
		// Answered once: a second answer with the same id is not paired.
		{frame.In, `{"jsonrpc":"2.0","id":7,"result":{"turns":[{"text":"again"}]}}`, `{"jsonrpc":"2.0","id":7,"result":{"turns":[{"text":"again"}]}}`},
		// Any depth, any type: the placeholder of a non-string is that of its compact text.
		{frame.Out, `{"jsonrpc":"2.0","method":"storage/set","params":{"key":"k","value":{"a": [1, 2]}}}`,
			`{"jsonrpc":"2.0","method":"storage/set","params":{"key":"k","value":"` + ph(`{"a":[1,2]}`) + `"}}`},
		// Not JSON: untouched.
		{frame.Out, `net/fetch Authorization`, `net/fetch Authorization`},
	})
	counts := r.Counts()
	want := []int64{2, 2, 1}
	for i, c := range counts {
		if c.N != want[i] {
			t.Errorf("count of %s = %d, want %d", c.Rule, c.N, want[i])
		}
	}
}

func TestDefaultsAndStability(t *testing.T) {
	r := newRedactor(t, true, nil)
	req := `{"jsonrpc":"2.0","id":"a","method":"net/fetch","params":{"url":"u","headers":{"authorization":"s1","X-Api-Key":"s2","Cookie":"c=1","Content-Type":"text/plain","x-auth-token":"s1","X-Secret":["a","b"]}}}`
	got := string(r.Line(frame.Out, []byte(req), false))
	want := `{"jsonrpc":"2.0","id":"a","method":"net/fetch","params":{"url":"u","headers":{"authorization":"` + ph("s1") +
		`","X-Api-Key":"` + ph("s2") + `","Cookie":"` + ph("c=1") + `","Content-Type":"text/plain","x-auth-token":"` + ph("s1") +
		`","X-Secret":"` + ph(`["a","b"]`) + `"}}}`
	if got != want {
		t.Errorf("default redaction:\n got %s\nwant %s", got, want)
	}
	resp := `{"jsonrpc":"2.0","id":"a","result":{"status":200,"headers":{"set-cookie":"sid=1","etag":"x"}}}`
	got = string(r.Line(frame.In, []byte(resp), false))
	want = `{"jsonrpc":"2.0","id":"a","result":{"status":200,"headers":{"set-cookie":"` + ph("sid=1") + `","etag":"x"}}}`
	if got != want {
		t.Errorf("response headers:\n got %s\nwant %s", got, want)
	}
	if c := r.Counts(); len(c) != 1 || !c[0].Default || c[0].N != 6 {
		t.Errorf("counts = %+v", c)
	}
	// Redacting what is redacted already changes nothing.
	again := newRedactor(t, true, []string{`[0-9a-f]{12}`})
	if out := again.Line(frame.Out, []byte(want), false); string(out) != want {
		t.Errorf("second redaction changed the frame:\n%s", out)
	}
	// Different keys, different placeholders; same key and value, same one.
	if Placeholder([]byte("a"), []byte("v")) == Placeholder([]byte("b"), []byte("v")) || ph("v") == ph("w") {
		t.Error("placeholders are not keyed and stable")
	}
	if !strings.HasPrefix(ph("v"), "«redacted:") || len([]rune(ph("v"))) != len("redacted:")+2+12 {
		t.Errorf("placeholder %q", ph("v"))
	}
}

func TestRegexps(t *testing.T) {
	r := newRedactor(t, false, []string{`sk-[A-Za-z0-9]{8,}`})
	run(t, r, []line{
		{frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"key sk-ABCDEFGH12 and sk-ABCDEFGH12\n"}}`,
			`{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"key ` + ph("sk-ABCDEFGH12") + ` and ` + ph("sk-ABCDEFGH12") + `\n"}}`},
		// Escapes are decoded before matching.
		{frame.Out, `{"method":"m","params":"sk-ABCDEFGH\u0031\u0032"}`, `{"method":"m","params":"` + ph("sk-ABCDEFGH12") + `"}`},
		{frame.Err, "using sk-ABCDEFGH99\r", "using " + ph("sk-ABCDEFGH99") + "\r"},
		{frame.Out, "\xffsk-ABCDEFGH99", "\xff" + ph("sk-ABCDEFGH99")},
		{frame.Out, `{"method":"m","params":"nothing here"}`, `{"method":"m","params":"nothing here"}`},
	})
	if c := r.Counts(); c[0].N != 5 || !c[0].Regexp {
		t.Errorf("counts = %+v", c)
	}
}

func TestUntouchedFramesAreTheSameBytes(t *testing.T) {
	r := newRedactor(t, true, nil, "*:params.password")
	for _, raw := range []string{
		`{ "jsonrpc" : "2.0", "method" : "ui/notify", "params" : { "message" : "hi" } }`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r",
		`[1,2]`, ``, `   `, "\xff\xfe", `{"a":`,
	} {
		in := []byte(raw)
		out := r.Line(frame.Out, in, false)
		if !bytes.Equal(out, in) || (len(in) > 0 && &out[0] != &in[0]) {
			t.Errorf("Line(%q) = %q, want the input itself", raw, out)
		}
	}
	// Surrounding white space and a CR are kept; the inside is compacted.
	in := " {\"method\" : \"m\", \"params\": {\"password\": \"p\", \"x\" : [ 1 , 2 ]}}\r"
	want := " {\"method\":\"m\",\"params\":{\"password\":\"" + ph("p") + "\",\"x\":[1,2]}}\r"
	if got := string(r.Line(frame.Out, []byte(in), false)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCutFrames(t *testing.T) {
	r := newRedactor(t, false, nil, "session/get:result.turns[*].text")
	r.Line(frame.Out, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/get","params":{}}`), false)
	cut := `{"jsonrpc":"2.0","id":1,"result":{"turns":[{"text":"one"},{"text":"tw`
	want := `{"jsonrpc":"2.0","id":1,"result":{"turns":[{"text":"` + ph("one") + `"},{"text":"` + ph(`"tw`) + `"`
	if got := string(r.Line(frame.In, []byte(cut), true)); got != want {
		t.Errorf("cut frame:\n got %s\nwant %s", got, want)
	}
}

func TestNewNothingToDo(t *testing.T) {
	r, err := New(Config{})
	if r != nil || err != nil {
		t.Errorf("New(empty) = %v, %v; want nil, nil", r, err)
	}
	if _, err := New(Config{Defaults: true}); err != ErrNoKey {
		t.Errorf("New without a key = %v, want ErrNoKey", err)
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"net/fetch","params":{"headers":{"Authorization":"x"}}}`,
		`{"id":1,"result":{"turns":[{"text":"a\u00e9\ud83d\ude00"}]}}`,
		`{"method":"storage/set","params":{"value":[{"value":1}]}}`,
		`{"a":"\ud800"}`, `{"a`, `{"a":[`, "{\"a\":\"sk-12345678\"}\r", `[]`, `{}`, `{"method":"x","params":"\\"}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, cut bool) {
		r := newRedactor(t, true, []string{`sk-[0-9]+`}, "*:params..value", "net/fetch:params.headers.*", "*:result..text")
		r.res = append(r.res, regexp.MustCompile(`[0-9a-f]{4}`))
		r.reN = append(r.reN, 0)
		in := bytes.Clone(raw)
		for _, d := range []frame.Dir{frame.Out, frame.In, frame.Err} {
			out := r.Line(d, raw, cut)
			if !bytes.Equal(raw, in) {
				t.Fatal("Line modified its input")
			}
			_, body, _ := trimSpace(raw)
			if d != frame.Err && !cut && json.Valid(body) && body[0] == '{' {
				if _, ob, _ := trimSpace(out); !json.Valid(ob) {
					t.Fatalf("valid JSON %q became invalid %q", raw, out)
				}
			}
			// Redaction is idempotent.
			if again := r.Line(d, out, cut); !bytes.Equal(again, out) {
				t.Fatalf("second redaction changed %q to %q", out, again)
			}
		}
	})
}

func TestKeyIDAndMask(t *testing.T) {
	a, b := []byte("key one, sixteen+"), []byte("key two, sixteen+")
	if KeyID(a) == KeyID(b) || KeyID(a) != KeyID(append([]byte(nil), a...)) || len(KeyID(a)) != 12 {
		t.Errorf("KeyID: %s %s", KeyID(a), KeyID(b))
	}
	pa, pb := Placeholder(a, []byte("sk-live-1")), Placeholder(b, []byte("sk-live-1"))
	if pa == pb {
		t.Fatal("placeholders under two keys are equal")
	}
	for _, c := range []struct{ in, want string }{
		{"token " + pa + " end", "token " + Masked + " end"},
		{pa + pb, Masked + Masked},
		{"«redacted:zz»" + pa, "«redacted:zz»" + Masked},
		{"nothing here", "nothing here"},
		{"«redacted:0123456789a", "«redacted:0123456789a"},
	} {
		if got := Mask(c.in); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if Mask("x "+pa) != Mask("x "+pb) {
		t.Error("masked text under two keys differs")
	}
}

// TestALineIsKeptAfterTheNext: what Line returns stays as it was after
// the lines that follow (a replay keeps every redacted live line without
// copying it), for JSON and for text alike.
func TestALineIsKeptAfterTheNext(t *testing.T) {
	r := newRedactor(t, true, []string{`secret-[0-9]+`})
	first := r.Line(frame.Out, []byte(`{"jsonrpc":"2.0","id":"a","method":"net/fetch","params":{"headers":{"authorization":"s1"}}}`), false)
	text := r.Line(frame.Err, []byte("token secret-1 here"), false)
	kept, keptText := string(first), string(text)
	r.Line(frame.Out, []byte(`{"jsonrpc":"2.0","id":"b","method":"net/fetch","params":{"headers":{"authorization":"other, longer secret"}}}`), false)
	r.Line(frame.Err, []byte("and secret-22 too, longer than the first"), false)
	if string(first) != kept || string(text) != keptText || !strings.Contains(kept, "«redacted:") || !strings.Contains(keptText, "«redacted:") {
		t.Errorf("the earlier results changed or were not redacted: %s / %s", first, text)
	}
}

// TestPendingRequestsStayBounded: 20,000 plugin requests never answered,
// each with a method and an id of its own 2 kB long. What the Redactor
// remembers to pair responses is bounded in bytes (recent.MaxCallBytes): it
// had kept every one whole (a 641 MB export held 270 MB), and a response
// to a request still remembered is still redacted.
func TestPendingRequestsStayBounded(t *testing.T) {
	r := newRedactor(t, true, nil, "*:result.secret")
	pad := strings.Repeat("m", 2000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 20000 {
		r.Line(frame.Out, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"%d%s","method":"%d%s","params":{}}`, i, pad, i, pad), false)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20 {
		t.Errorf("20,000 unanswered requests of 4 kB grew the heap %.1f MiB, want under 16 MiB", float64(grew)/(1<<20))
	}
	r.Line(frame.Out, []byte(`{"jsonrpc":"2.0","id":7,"method":"x/get","params":{}}`), false)
	if got := string(r.Line(frame.In, []byte(`{"jsonrpc":"2.0","id":7,"result":{"secret":"hunter2"}}`), false)); strings.Contains(got, "hunter2") {
		t.Errorf("the answer to a remembered request was not redacted: %s", got)
	}
	runtime.KeepAlive(r)
}

// TestOverlapsFromAgreesWithEverySpan: over random placeholders and
// matches, each in order and apart as placeholders and FindAllIndex give
// them, the walk side by side finds the overlaps comparing each match with
// every placeholder finds (a line of n of each took n²: 2.6 MB, 10.5 s).
func TestOverlapsFromAgreesWithEverySpan(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 36))
	apart := func(n int) [][2]int {
		var out [][2]int
		at := 0
		for range n {
			at += rng.IntN(6)
			end := at + 1 + rng.IntN(8)
			out = append(out, [2]int{at, end})
			at = end
		}
		return out
	}
	for round := range 3000 {
		spans, ms := apart(rng.IntN(10)), apart(rng.IntN(10))
		at := 0
		for _, m := range ms {
			want := false
			for _, s := range spans {
				if m[0] < s[1] && s[0] < m[1] {
					want = true
				}
			}
			if got := overlapsFrom(spans, &at, m[0], m[1]); got != want {
				t.Fatalf("round %d: match %v against %v: overlaps %v, want %v", round, m, spans, got, want)
			}
		}
	}
}
