package screen

import (
	"bytes"
	"strings"
	"testing"
)

func TestTableAlignsByDisplayWidth(t *testing.T) {
	var tb Table
	tb.Row("ID", "NAME", "STATUS")
	tb.Row("1", "plain", "ok")
	tb.Row("2", "名前テスト", "ok")
	tb.Row("3", "🎉 party", "ok")
	var b bytes.Buffer
	tb.WriteTo(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := StringWidth(lines[0][:strings.Index(lines[0], "STATUS")])
	for _, l := range lines[1:] {
		i := strings.LastIndex(l, "ok")
		if got := StringWidth(l[:i]); got != want {
			t.Errorf("%q: STATUS starts at cell %d, want %d", l, got, want)
		}
	}
}

func TestTableFit(t *testing.T) {
	var tb Table
	tb.Row("ID", "NAME", "END")
	tb.Row("1", strings.Repeat("名", 30), "x")
	tb.Fit(30, 4, 1)
	var b bytes.Buffer
	tb.WriteTo(&b)
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if w := StringWidth(l); w > 30 {
			t.Errorf("%q is %d cells wide, want at most 30", l, w)
		}
	}
	if !strings.Contains(b.String(), "…") {
		t.Errorf("no cut marked in %q", b.String())
	}
}

func TestTruncateAndPad(t *testing.T) {
	cases := []struct {
		in    string
		width int
		want  string
	}{
		{"hello", 10, "hello"},
		{"hello world", 6, "hello…"},
		{"名前名前名前", 7, "名前名…"},
	}
	for _, c := range cases {
		if got := Truncate(c.in, c.width); got != c.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
	if got := Pad("名前", 6); got != "名前  " {
		t.Errorf("Pad(名前, 6) = %q", got)
	}
}

func TestColor(t *testing.T) {
	var b bytes.Buffer
	t.Setenv("NO_COLOR", "")
	if Color(&b) {
		t.Error("Color(a buffer) = true")
	}
}
