package escape

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a":"plain"}`, `{"a":"plain"}`},
		{"{\"a\":\"x\u202ey\"}", `{"a":"x\u202ey"}`},
		{"[\"\u009b31m\",\"\u2066\u2069\u200e\u200f\u061c\u2028\u2029\ufeff\u007f\"]", `["\u009b31m","\u2066\u2069\u200e\u200f\u061c\u2028\u2029\ufeff\u007f"]`},
		{"{\"k\u202a\":\"é 🎉 \\u202e\"}\n", "{\"k\\u202a\":\"é 🎉 \\u202e\"}\n"},
		{"\"\xff\u0085\"", "\"\xff\\u0085\""}, // not UTF-8: copied as it is
	}
	for _, c := range cases {
		if got := string(JSON(nil, []byte(c.in))); got != c.want {
			t.Errorf("JSON(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"é 🎉 名前", "é 🎉 名前"},
		{"a\x1b[31mb", `a\x1b[31mb`},
		{"tab\there\r\n", `tab\there\r\n`},
		{"x\u202ey\u0085", `x\u202ey\u0085`},
		{"bad \xff", `bad \xff`},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got, want := Lines("a\x1b\nb\u202e"), "a\\x1b\nb\\u202e"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"a":"x` + "\u202e" + `"}`, "[\"\u009b\",1,null]", `"\u202e"`, "{}", "\"\u2028\x7f\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := JSON(nil, in)
		if !json.Valid(in) {
			return
		}
		var a, b any
		if err := json.Unmarshal(in, &a); err != nil {
			t.Skip()
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("JSON(%q) = %q: not JSON: %v", in, out, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("JSON(%q) = %q: a different value", in, out)
		}
		for s := string(out); s != ""; {
			r, size := utf8.DecodeRuneInString(s)
			if hides(r) && size > 1 || r == 0x7f {
				t.Fatalf("JSON(%q) = %q keeps %U", in, out, r)
			}
			s = s[size:]
		}
	})
}
