package canon

import (
	"bytes"
	"strings"
	"testing"
)

func TestSameValuesSpellTheSame(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{`{"b":1,"a":[1, 2,{"y":null,"x":true}]}`, `{ "a" : [1,2,{"x":true,"y":null}], "b":1 }`},
		{`"\u0041\n\/"`, `"A\u000a/"`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"a":1,"b":0,"a":2}`, `{"b":0,"a":2}`},
		{`{"k\u00e9":"\u00e9"}`, `{"ké":"é"}`},
		{`"<&>"`, `"\u003c\u0026\u003E"`},
		{"\"\u2028\"", `"\u2028"`},
		{`"\ud83d\ude00"`, `"😀"`},
		{`"\ud800"`, `"\ufffd"`},
		{"\"\xff\xfe\"", `"\ufffd"`}, // a run of bytes that are not UTF-8: one U+FFFD
		{"\"a\xffb\"", "\"a\\ufffdb\""},
		{" \t\r\n[ ]\n", `[]`},
	} {
		ka, oka := Append(nil, []byte(c.a))
		kb, okb := Append(nil, []byte(c.b))
		if !oka || !okb || !bytes.Equal(ka, kb) {
			t.Errorf("Append(%s) = %s %v, Append(%s) = %s %v: want equal", c.a, ka, oka, c.b, kb, okb)
		}
	}
	for _, c := range []struct{ a, b string }{
		{`1`, `1.0`}, {`1`, `1e0`}, {`0`, `-0`}, {`1E2`, `1e2`}, {`"a"`, `"A"`}, {`{"a":null}`, `{}`},
		{`[1,2]`, `[2,1]`}, {`"\u00e9"`, `"e\u0301"`}, {`null`, `false`},
	} {
		ka, _ := Append(nil, []byte(c.a))
		kb, _ := Append(nil, []byte(c.b))
		if bytes.Equal(ka, kb) {
			t.Errorf("Append(%s) = Append(%s) = %s: want different", c.a, c.b, ka)
		}
	}
}

func TestSpelling(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":"x\n","a":[1.50,{"d":true,"c":null}]}`: `{"a":[1.50,{"c":null,"d":true}],"b":"x\n"}`,
		`"\u0000\b\u2029\"\\"`:                       `"\u0000\b\u2029\"\\"`,
		`{"b":1,"a":2,"b":3}`:                        `{"a":2,"b":3}`,
	} {
		if got, ok := Append([]byte("key:"), []byte(in)); !ok || string(got) != "key:"+want {
			t.Errorf("Append(%s) = %s %v, want key:%s", in, got, ok, want)
		}
	}
}

func TestInvalidJSONHasNoSpelling(t *testing.T) {
	for _, bad := range []string{
		`{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `+1`, `.5`, `1e`, `"a`, "\"\x01\"", `{"a" 1}`, `{1:2}`, `tru`, `nul`,
		`1 2`, `{"a":1}x`, ``, ` `, `"\q"`, `"\u12g4"`, `"\u12"`, `[1}`, `{"a":1]`, `"\`,
	} {
		if got, ok := Append([]byte("key:"), []byte(bad)); ok || string(got) != "key:" {
			t.Errorf("Append(%q) = %q %v: want dst unchanged and false", bad, got, ok)
		}
	}
}

func TestAppendWithID(t *testing.T) {
	for in, want := range map[string]string{
		`{"id":7,"method":"m","params":{"id":1}}`: `{"id":"#3","method":"m","params":{"id":1}}`,
		`{"method":"m","\u0069d":"x"}`:            `{"id":"#3","method":"m"}`,
		`{"id":1,"id":2}`:                         `{"id":"#3"}`,
		`[{"id":1}]`:                              `[{"id":1}]`,
	} {
		if got, ok := AppendWithID(nil, []byte(in), "#3"); !ok || string(got) != want {
			t.Errorf("AppendWithID(%s) = %s %v, want %s", in, got, ok, want)
		}
	}
	if _, ok := AppendWithID(nil, []byte(`{"id":01}`), "#3"); ok {
		t.Error("AppendWithID took an invalid id")
	}
}

// TestDepth: as deep as encoding/json decodes, scalars at the bottom
// included, and no deeper.
func TestDepth(t *testing.T) {
	nest := func(n int, inner string) []byte {
		return []byte(strings.Repeat("[", n) + inner + strings.Repeat("]", n))
	}
	for _, c := range []struct {
		in []byte
		ok bool
	}{
		{nest(MaxDepth, ""), true},
		{nest(MaxDepth, "1"), true},
		{nest(MaxDepth-1, `{"a":"b"}`), true},
		{nest(MaxDepth+1, ""), false},
		{nest(MaxDepth, "{}"), false},
	} {
		if _, ok := Append(nil, c.in); ok != c.ok {
			t.Errorf("Append of %d bytes of nesting = %v, want %v", len(c.in), ok, c.ok)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct{ name, in string }{
		{"sorted", `{"id":12,"jsonrpc":"2.0","method":"ui/setPanel","params":{"nodes":[{"id":"a","text":"hello"},{"id":"b","text":"world"}]}}`},
		{"unsorted", `{"jsonrpc":"2.0","method":"ui/setPanel","id":12,"params":{"nodes":[{"text":"hello","id":"a"},{"text":"w\u00f6rld","id":"b"}]}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			in := []byte(c.in)
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = AppendWithID(buf[:0], in, "#1")
			}
		})
	}
}

// TestReorderNested: objects out of order inside objects out of order,
// names twice, and an id whose value held such an object.
func TestReorderNested(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":{"d":{"f":1,"e":2},"c":[{"h":1,"g":2}]},"a":0}`:           `{"a":0,"b":{"c":[{"g":2,"h":1}],"d":{"e":2,"f":1}}}`,
		`{"a":{"y":1,"x":2},"a":{"q":{"s":1,"r":2},"p":2}}`:             `{"a":{"p":2,"q":{"r":2,"s":1}}}`,
		`[{"b":1,"a":2},{"a":1},{"d":{"z":0,"y":1},"c":3}]`:             `[{"a":2,"b":1},{"a":1},{"c":3,"d":{"y":1,"z":0}}]`,
		`{"params":{"b":1,"a":{"d":1,"c":2}},"id":{"z":1,"y":2},"m":0}`: `{"id":"#3","m":0,"params":{"a":{"c":2,"d":1},"b":1}}`,
	} {
		if got, ok := AppendWithID([]byte("k:"), []byte(in), "#3"); !ok || string(got) != "k:"+want {
			t.Errorf("AppendWithID(%s) = %s %v, want k:%s", in, got, ok, want)
		}
	}
}

// TestDeepUnsortedIsLinear: a tree as deep as is taken, every object out
// of order, is reordered with one copy of it, not one per level (which
// took time quadratic in the depth).
func TestDeepUnsortedIsLinear(t *testing.T) {
	const depth = MaxDepth/2 - 1
	in := strings.Repeat(`{"type":"column","children":[`, depth) + `{"type":"text","text":"hi"}` + strings.Repeat(`]}`, depth)
	want := strings.Repeat(`{"children":[`, depth) + `{"text":"hi","type":"text"}` + strings.Repeat(`],"type":"column"}`, depth)
	p := &parser{in: []byte(in)}
	got, ok := appendValue(nil, p)
	if !ok || string(got) != want {
		t.Fatalf("Append of %d levels: ok %v, spelling right %v", depth, ok, string(got) == want)
	}
	if p.moved > len(in) {
		t.Errorf("reordering copied %d bytes for a %d-byte value: want at most one copy", p.moved, len(in))
	}
}
