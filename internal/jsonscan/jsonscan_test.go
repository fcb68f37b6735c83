package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSkip(t *testing.T) {
	for _, c := range []struct {
		in     string
		i, end int
		ok     bool
	}{
		{`"ab" `, 0, 4, true},
		{`"a\"b"x`, 0, 6, true},
		{`"a\\"x`, 0, 5, true},
		{`"a\\\"b"`, 0, 8, true},
		{`"ab\`, 0, 4, false}, // a trailing backslash: the end, not past it
		{`"ab\"`, 0, 5, false},
		{`"ab`, 0, 3, false},
		{`{"a":[1,"]",{}]} `, 0, 16, true},
		{`[1,2]]`, 0, 5, true},
		{`{"a":"}`, 0, 7, false},
		{`{"a":[`, 0, 6, false},
		{`-1.5e3,`, 0, 6, true},
		{`true}`, 0, 4, true},
		{`null:`, 0, 4, true},
		{`x`, 1, 1, false},
		{`,`, 0, 0, false},
		{`}`, 0, 0, false},
		{``, 0, 0, false},
		{` [1] `, 1, 4, true},
	} {
		end, ok := SkipValue([]byte(c.in), c.i)
		if end != c.end || ok != c.ok {
			t.Errorf("SkipValue(%q, %d) = %d, %v; want %d, %v", c.in, c.i, end, ok, c.end, c.ok)
		}
	}
	if end, ok := SkipString([]byte(`1"a"`), 0); end != 0 || ok {
		t.Errorf("SkipString at a non-quote = %d, %v; want 0, false", end, ok)
	}
	if i := SkipSpace([]byte(" \t\r\n x"), 0); i != 5 {
		t.Errorf("SkipSpace = %d, want 5", i)
	}
	if i := SkipSpace([]byte("  "), 0); i != 2 {
		t.Errorf("SkipSpace of white space only = %d, want 2", i)
	}
}

func TestUnquote(t *testing.T) {
	for _, c := range []struct {
		in, want string
		lone     rune
		ok       bool
	}{
		{`"plain"`, "plain", 0, true},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t", 0, true},
		{`"\u00e9\u00C9"`, "éÉ", 0, true},
		{`"\ud83d\ude00"`, "😀", 0, true},
		{`"\ud800x"`, "\uFFFDx", 0xd800, true},
		{`"\udc00\ud800"`, "\uFFFD\uFFFD", 0xdc00, true},
		{`"\ud800\u0041"`, "\uFFFDA", 0xd800, true},
		{"\"\xff\"", "\xff", 0, true},
		{`"\q"`, "q", 0, true},              // not JSON: the character
		{`"\u12zz"`, "\uFFFD12zz", 0, true}, // not JSON: U+FFFD
		{`"\u12"`, "\uFFFD12", 0, true},
		{`"ab\"`, "", 0, false},
		{`"ab`, "", 0, false},
		{`"`, "", 0, false},
		{`ab`, "", 0, false},
	} {
		got, lone, ok := Unquote([]byte("pre"), []byte(c.in))
		want := "pre" + c.want
		if string(got) != want || lone != c.lone || ok != c.ok {
			t.Errorf("Unquote(%q) = %q, %#x, %v; want %q, %#x, %v", c.in, got, lone, ok, want, c.lone, c.ok)
		}
	}
}

func TestAppendString(t *testing.T) {
	in := "<&>\x00\x1f\b\f\n\r\t\"\\\u2028\u2029é\xe2\x80\xe2"
	want := `"<&>\u0000\u001f\b\f\n\r\t\"\\\u2028\u2029é` + "\xe2\x80\xe2" + `"`
	if got := AppendString([]byte("x"), []byte(in)); string(got) != "x"+want {
		t.Errorf("AppendString(%q) = %s, want %s", in, got[1:], want)
	}
}

// walk checks the JSON value at b[i:] as a caller of the package reads it:
// a container member by member, with SkipSpace, SkipString and SkipValue
// (b is valid JSON). Each value it skips must be valid JSON on its own. It
// returns where the value ends. Below depth 32 it only skips (a check of
// every level would take time quadratic in the nesting).
func walk(t *testing.T, b []byte, i, depth int) int {
	t.Helper()
	end, ok := SkipValue(b, i)
	if !ok || !json.Valid(b[i:end]) {
		t.Fatalf("SkipValue(%q, %d) = %d, %v: %q is not one value", b, i, end, ok, b[i:end])
	}
	switch b[i] {
	case '{', '[':
		if depth >= 32 {
			return end
		}
		close := byte('}')
		if b[i] == '[' {
			close = ']'
		}
		j := SkipSpace(b, i+1)
		if b[j] == close {
			return end
		}
		for {
			if close == '}' {
				k, ok := SkipString(b, j)
				if !ok {
					t.Fatalf("SkipString(%q, %d) = %d, false", b, j, k)
				}
				j = SkipSpace(b, k)
				if b[j] != ':' {
					t.Fatalf("%q: no ':' at %d after a key", b, j)
				}
				j = SkipSpace(b, j+1)
			}
			j = SkipSpace(b, walk(t, b, j, depth+1))
			if b[j] == close {
				if j+1 != end {
					t.Fatalf("%q: the container at %d closes at %d, SkipValue said %d", b, i, j+1, end)
				}
				return end
			}
			if b[j] != ',' {
				t.Fatalf("%q: no ',' at %d", b, j)
			}
			j = SkipSpace(b, j+1)
		}
	}
	return end
}

// FuzzScan holds the scanner to encoding/json (see checkScan). Its seeds
// are a few lines and the small files of the JSONTestSuite corpus;
// TestScanJSONTestSuite takes the large ones.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,"x\"y",{}],"b":null}}`,
		` [ true , false , -1.5e+3 , "\u00e9\ud83d\ude00" ] `, `"\\"`, `"a\\\"b"`, `{"a":1}x`, `1 2`,
		`"ab\`, `{"a":[`, `{"a":"}`, "\"\xff\x00\"", `"\ud800"`, `{}`, `[]`, `1`, ``, `nul`, "\"\u2028\"",
	} {
		f.Add([]byte(s))
	}
	for _, b := range jsonTestSuite(f) {
		if len(b) <= 4096 { // mutating the large ones only slows the fuzzer
			f.Add(b)
		}
	}
	f.Fuzz(checkScan)
}

func TestScanJSONTestSuite(t *testing.T) {
	files := jsonTestSuite(t)
	if files == nil {
		t.Skip("no JSONTestSuite corpus beside the repository (../shared/corpora)")
	}
	for _, b := range files {
		checkScan(t, b)
	}
}

// checkScan holds the scanner to encoding/json: on valid JSON, SkipValue
// ends each value (and each member of a container) where the value ends; on
// any text, it ends the first value where json.Decoder does, whenever the
// decoder finds a whole value the scanner can tell from what follows it;
// nothing panics or returns an index out of range; Unquote decodes a valid
// string as json.Unmarshal does; and AppendString round-trips any bytes.
func checkScan(t *testing.T, b []byte) {
	// In range, from every start.
	for i := 0; i <= len(b) && i < 64; i++ {
		if j := SkipSpace(b, i); j < i || j > len(b) {
			t.Fatalf("SkipSpace(%q, %d) = %d", b, i, j)
		}
		if j, ok := SkipString(b, i); j < i || j > len(b) || ok && (j < i+2 || b[j-1] != '"') {
			t.Fatalf("SkipString(%q, %d) = %d, %v", b, i, j, ok)
		}
		if j, ok := SkipValue(b, i); j < i || j > len(b) || ok && j == i {
			t.Fatalf("SkipValue(%q, %d) = %d, %v", b, i, j, ok)
		}
	}
	start := SkipSpace(b, 0)
	if json.Valid(b) {
		if end := walk(t, b, start, 0); SkipSpace(b, end) != len(b) {
			t.Fatalf("SkipValue(%q) ends at %d, before the end of the text", b, end)
		}
	}
	// The first value's end, as the decoder finds it.
	dec := json.NewDecoder(bytes.NewReader(b))
	var v json.RawMessage
	if dec.Decode(&v) == nil {
		off := int(dec.InputOffset())
		end, ok := SkipValue(b, start)
		delimited := off == len(b) || strings.IndexByte(" \t\r\n,:}]", b[off]) >= 0
		if (b[start] == '"' || b[start] == '{' || b[start] == '[' || delimited) && (!ok || end != off) {
			t.Fatalf("SkipValue(%q, %d) = %d, %v; the decoder's value ends at %d", b, start, end, ok, off)
		}
	}
	// Strings.
	got, _, ok := Unquote(nil, b)
	if end, whole := SkipString(b, 0); whole && end == len(b) && json.Valid(b) {
		var want string
		if err := json.Unmarshal(b, &want); err != nil || !ok {
			t.Fatalf("Unquote(%q) ok %v, json.Unmarshal: %v", b, ok, err)
		}
		if utf8.Valid(b) && string(got) != want {
			t.Fatalf("Unquote(%q) = %q, json.Unmarshal %q", b, got, want)
		}
	}
	q := AppendString(nil, b)
	if !json.Valid(q) {
		t.Fatalf("AppendString(%q) = %s, not JSON", b, q)
	}
	if end, ok := SkipValue(q, 0); !ok || end != len(q) {
		t.Fatalf("SkipValue(AppendString(%q)) = %d, %v; want %d", b, end, ok, len(q))
	}
	if back, lone, ok := Unquote(nil, q); !ok || lone != 0 || !bytes.Equal(back, b) {
		t.Fatalf("Unquote(AppendString(%q)) = %q, %#x, %v", b, back, lone, ok)
	}
	if utf8.Valid(b) {
		var s string
		if err := json.Unmarshal(q, &s); err != nil || s != string(b) {
			t.Fatalf("AppendString(%q) = %s, which decodes to %q (%v)", b, q, s, err)
		}
	}
}

// jsonTestSuite is the files of the JSONTestSuite corpus, when it is there
// (../shared/corpora beside the repository); none when it is not.
func jsonTestSuite(tb testing.TB) [][]byte {
	dir := filepath.Join("..", "..", "..", "shared", "corpora", "JSONTestSuite", "test_parsing")
	files, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		tb.Fatalf("read the JSONTestSuite corpus: %v", err)
	}
	var out [][]byte
	for _, fi := range files {
		b, err := os.ReadFile(filepath.Join(dir, fi.Name()))
		if err != nil {
			tb.Fatalf("read the JSONTestSuite corpus: %v", err)
		}
		out = append(out, b)
	}
	return out
}

func BenchmarkSkipValue(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"tick","params":{"n":4211,"text":"the plugin says the same thing back"}}`)
	b.ReportAllocs()
	for b.Loop() {
		for i := SkipSpace(line, 1); line[i] != '}'; {
			end, _ := SkipString(line, i)
			i = SkipSpace(line, end)
			i = SkipSpace(line, i+1)
			end, _ = SkipValue(line, i)
			i = SkipSpace(line, end)
			if line[i] == ',' {
				i = SkipSpace(line, i+1)
			}
		}
	}
}
