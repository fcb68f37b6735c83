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
	checkStrings(t, b)
	checkCompact(t, b)
}

// checkStrings holds CheckString to encoding/json (a string is valid
// where json.Valid says so) and PartialString to Unquote: a valid string
// decoded piece by piece, each piece what PartialString says decodes,
// however the pieces are cut, reads as it does whole.
func checkStrings(t *testing.T, b []byte) {
	end, escaped, ok := CheckString(b, 0)
	if end > len(b) || ok && escaped != bytes.Contains(b[:end], []byte(`\`)) {
		t.Fatalf("CheckString(%q) = %d, %v, %v", b, end, escaped, ok)
	}
	if len(b) > 0 && b[0] == '"' && !IsSpace(b[len(b)-1]) && (ok && end == len(b)) != json.Valid(b) {
		t.Fatalf("CheckString(%q) = %d, %v; json.Valid says %v", b, end, ok, json.Valid(b))
	}
	if n, _ := PartialString(b); n > len(b) {
		t.Fatalf("PartialString(%q) = %d", b, n)
	}
	if !ok || end != len(b) {
		return
	}
	whole, _, _ := Unquote(nil, b)
	inside := b[1:] // up to and with the closing quote
	for _, cut := range []int{1, 2, 3, 5, 7, 13} {
		var got, pending []byte
		for i := 0; ; {
			pending = append(pending, inside[i:min(i+cut, len(inside))]...)
			i = min(i+cut, len(inside))
			n, closed := PartialString(pending)
			if n > len(pending) {
				t.Fatalf("PartialString(%q) = %d", pending, n)
			}
			piece, _, ok := Unquote(nil, append(append([]byte{'"'}, pending[:n]...), '"'))
			if !ok {
				t.Fatalf("the piece %q of %q does not decode", pending[:n], b)
			}
			got = append(got, piece...)
			pending = append(pending[:0], pending[n:]...)
			if closed {
				break
			}
			if i == len(inside) {
				t.Fatalf("PartialString never found the end of %q (cut %d): %q left", b, cut, pending)
			}
		}
		if !bytes.Equal(got, whole) {
			t.Fatalf("%q decoded in pieces of %d: %q; whole: %q", b, cut, got, whole)
		}
	}
}

// checkCompact holds Compact to json.Compact on valid JSON, and on any
// text to the byte-by-byte rule it replaced; a bound cuts the same bytes
// short.
func checkCompact(t *testing.T, b []byte) {
	got := Compact(nil, b, -1)
	if json.Valid(b) {
		var want bytes.Buffer
		if err := json.Compact(&want, b); err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("Compact(%q) = %q; json.Compact %q (%v)", b, got, want.Bytes(), err)
		}
	}
	if want := compactByteByByte(b); !bytes.Equal(got, want) {
		t.Fatalf("Compact(%q) = %q, want %q", b, got, want)
	}
	for _, max := range []int{0, 1, 2, 7, len(got) - 1} {
		if max < 0 {
			continue
		}
		if cut := Compact([]byte("x"), b, max); string(cut) != "x"+string(got[:min(max, len(got))]) {
			t.Fatalf("Compact(%q, %d) = %q, want the first %d bytes of %q", b, max, cut[1:], max, got)
		}
	}
}

// compactByteByByte is how present and redact left out white space before
// Compact: a quote outside a string opens one, a backslash in a string
// escapes the next byte.
func compactByteByByte(v []byte) []byte {
	out := []byte{}
	in := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case in && c == '\\' && i+1 < len(v):
			out = append(out, c, v[i+1])
			i++
			continue
		case c == '"':
			in = !in
		case !in && IsSpace(c):
			continue
		}
		out = append(out, c)
	}
	return out
}

func TestCheckString(t *testing.T) {
	for _, c := range []struct {
		in          string
		end         int
		escaped, ok bool
	}{
		{`"abc" `, 5, false, true},
		{`"a\"b\\c\/\b\f\n\r\t"`, 21, true, true},
		{`"\u00e9\uD83D\ude00"`, 20, true, true},
		{"\"\xff\xfe\"", 4, false, true},
		{`"a\x"`, 2, true, false},
		{`"a\u12"`, 2, true, false},
		{"\"a\tb\"", 2, false, false},
		{`"ab`, 3, false, false},
		{`"ab\`, 4, true, false},
		{`x"`, 0, false, false},
		{``, 0, false, false},
	} {
		end, escaped, ok := CheckString([]byte(c.in), 0)
		if end != c.end || escaped != c.escaped || ok != c.ok {
			t.Errorf("CheckString(%q) = %d, %v, %v; want %d, %v, %v", c.in, end, escaped, ok, c.end, c.escaped, c.ok)
		}
	}
}

func TestPartialString(t *testing.T) {
	for _, c := range []struct {
		in     string
		n      int
		closed bool
	}{
		{`abc`, 3, false},
		{`abc"def`, 3, true},
		{`ab\`, 2, false},
		{`ab\n`, 4, false},
		{`ab\u00`, 2, false},
		{`ab\u00e9`, 8, false},
		{`ab\ud83d`, 2, false},        // a low surrogate may follow
		{`ab\ud83dx`, 9, false},       // none follows
		{`ab\ud83d\`, 2, false},       // not yet known
		{`ab\ud83d\n`, 10, false},     // none follows
		{`ab\ud83d\ude`, 2, false},    // the pair is cut
		{`ab\ud83d\ude00`, 14, false}, // the pair
		{`ab\ud83d\ude00"`, 14, true},
		{`\ud83d\ud83d\ude00`, 18, false}, // a high one, then a pair
		{`\"`, 2, false},
	} {
		n, closed := PartialString([]byte(c.in))
		if n != c.n || closed != c.closed {
			t.Errorf("PartialString(%q) = %d, %v; want %d, %v", c.in, n, closed, c.n, c.closed)
		}
	}
}

func TestCompact(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{` { "a" : [ 1 , "b c" ] } `, -1, `{"a":[1,"b c"]}`},
		{` { "a" : [ 1 , "b c" ] } `, 9, `{"a":[1,"`},
		{"{\"a\\\" b\":\n1}", -1, "{\"a\\\" b\":1}"},
		{`"open  string`, -1, `"open  string`},
		{`x \ y`, -1, `x\y`},
		{` "a b" `, 3, `"a `},
		{``, 5, ``},
	} {
		if got := string(Compact(nil, []byte(c.in), c.max)); got != c.want {
			t.Errorf("Compact(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
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
