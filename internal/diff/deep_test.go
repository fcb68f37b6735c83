package diff

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// deepPanel is a ui/setPanel whose tree nests depth columns, the innermost
// holding a text node saying leaf. Its members are out of order, as a
// plugin that writes "type" first sends them.
func deepPanel(depth int, leaf string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":`)
	for range depth {
		b.WriteString(`{"type":"column","children":[`)
	}
	b.WriteString(`{"type":"text","text":"` + leaf + `"}`)
	for range depth {
		b.WriteString(`]}`)
	}
	b.WriteString(`}}`)
	return b.String()
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// diffDeep compares and renders two deep panels that differ in their
// innermost text, with an ignore rule whose cost grows with the path (as
// one with ".." does), and returns the bytes allocated and the output.
func diffDeep(t *testing.T, depth int) (uint64, string) {
	t.Helper()
	rec := timeline("< "+deepPanel(depth, "Hello"), "exit 0")
	live := timeline("< "+deepPanel(depth, "Howdy"), "exit 0")
	ignore := func(_ string, path []string) bool {
		return len(path) > 0 && strings.Join(path, ".") == "params.updatedAt"
	}
	var out strings.Builder
	n := allocated(func() {
		r := Frames(rec, live, Options{Ignore: ignore, Panel: "ui/setPanel"})
		if len(r.Differences) != 1 || r.Differences[0].Kind != Changed {
			t.Fatalf("depth %d: differences %s, want one changed", depth, kinds(r))
		}
		if err := Render(&out, &r, RenderOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	return n, out.String()
}

// TestDeepTreeDiffIsLinear: a ui/setPanel nested as deeply as a frame can
// be decoded is compared and shown with work linear in its length (it took
// 10 GB of allocations and 19 s, for 300 kB of frames): the tree is walked
// MaxDepth levels deep, what lies deeper is one value on one line.
func TestDeepTreeDiffIsLinear(t *testing.T) {
	const depth = 4985 // 2 levels each: as deep as encoding/json decodes
	input := uint64(2 * len(deepPanel(depth, "Hello")))
	full, out := diffDeep(t, depth)
	half, _ := diffDeep(t, depth/2)
	t.Logf("input %d bytes: allocated %d bytes (%d at half the depth), output %d bytes", input, full, half, len(out))
	if full > 300*input {
		t.Errorf("allocated %d bytes for %d bytes of frames: want at most 300 times the frames", full, input)
	}
	if float64(full) > 2.6*float64(half) {
		t.Errorf("allocated %d bytes at depth %d, %d at depth %d: want about twice, not four times", full, depth, half, depth/2)
	}
	if !strings.Contains(out, "changed node params.tree.children[0]") || !strings.Contains(out, `"Howdy"`) {
		t.Errorf("output does not name the changed node and value:\n%.2000s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		body := strings.TrimLeft(strings.TrimLeft(line, " "), "-+")
		if pad := len(line) - len(strings.TrimLeft(body, " ")); pad > 2*MaxDepth+8 {
			t.Fatalf("a line indented %d columns: want at most %d", pad, 2*MaxDepth+8)
		}
		if strings.HasPrefix(strings.TrimSpace(line), "params.tree") && strings.Count(line, "children") > MaxDepth {
			t.Fatalf("a change path %d segments long: want at most %d", strings.Count(line, "children"), MaxDepth)
		}
	}
}

// TestDeepTreeShowsCompactBelowTheCap: indent and display write a value
// nested past MaxDepth compact on its line, and what is above it as
// before.
func TestDeepTreeShowsCompactBelowTheCap(t *testing.T) {
	v := any("x")
	for range MaxDepth + 2 {
		v = []any{v}
	}
	shown, _ := display(v)
	for name, s := range map[string]string{"Indent": Indent(v), "display": shown} {
		lines := strings.Split(s, "\n")
		if len(lines) != 2*MaxDepth+1 {
			t.Errorf("%s: %d lines, want %d", name, len(lines), 2*MaxDepth+1)
		}
		if mid := lines[MaxDepth]; mid != strings.Repeat(" ", 2*MaxDepth)+`[["x"]]` {
			t.Errorf("%s: middle line %q, want the innermost arrays compact", name, mid)
		}
	}
	if got, want := Indent(map[string]any{"a": []any{"b", map[string]any{}}}), "{\n  \"a\": [\n    \"b\",\n    {}\n  ]\n}"; got != want {
		t.Errorf("indent = %q, want %q", got, want)
	}
}

// TestMarshalSpellsAsEncodingJSON: marshal spells decoded values as
// encoding/json (without HTML escapes) does.
func TestMarshalSpellsAsEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"b":[1,2.50,-0,1e9,true,false,null],"a":{"z":"","y":"<&>\u2028\u2029\u0001\b\f\n\r\t\"\\/"}}`,
		"\"bad \xff\xfe bytes and \u00e9 \U0001F600\"",
		`[[],{},[{}],""]`,
		`{"\u0000key\u001f":"\ud800"}`,
	} {
		var v any
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decode %q: %v", in, err)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if got, want := marshal(v), strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Errorf("marshal(%q) = %s, want %s", in, got, want)
		}
	}
}

// randomValue is a decoded JSON value of random shape, up to depth levels
// deep, with strings of one or several lines, wide names and escapes.
func randomValue(r *rand.Rand, depth int) any {
	strs := []string{"", "x", "a\nb", "a\n", "\n", "\n\n", "é\nü\n3", "<&>\u2028", "line one\nline two\nline three\n", "\x01\t\"\\"}
	switch k := r.IntN(9); {
	case depth > 0 && k < 3:
		m := map[string]any{}
		for range r.IntN(4) {
			m[strs[r.IntN(len(strs))]+"ключ"[:r.IntN(3)*2]] = randomValue(r, depth-1)
		}
		return m
	case depth > 0 && k < 5:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randomValue(r, depth-1)
		}
		return a
	case k < 7:
		return strs[r.IntN(len(strs))]
	case k < 8:
		return json.Number([]string{"0", "-1.5e3", "12"}[r.IntN(3)])
	default:
		return []any{true, false, nil}[r.IntN(3)]
	}
}

// TestIndentAndDisplayAsBefore: Indent and display, which now share one
// writer and a scratch buffer, spell random values (and values nested
// past MaxDepth, with strings of several lines at their columns) as the
// former ones did, and display says when it split a string.
func TestIndentAndDisplayAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := range 5000 {
		v := randomValue(r, 1+r.IntN(6))
		if i%10 == 0 {
			for range MaxDepth - 3 + r.IntN(6) {
				v = map[string]any{"k": v, "s": "a\nb"}
			}
		}
		if got, want := Indent(v), oracleIndent(v); got != want {
			t.Fatalf("Indent:\n%s\nthe former:\n%s", got, want)
		}
		got, split := display(v)
		if want := oracleDisplay(v); got != want {
			t.Fatalf("display:\n%s\nthe former:\n%s", got, want)
		}
		if split != (got != Indent(v)) {
			t.Fatalf("display says split %v of\n%s", split, got)
		}
	}
}
