package recent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNameAndKey(t *testing.T) {
	t.Parallel()
	if got := Name("ui/setPanel"); got != "ui/setPanel" {
		t.Errorf("Name(ui/setPanel) = %q", got)
	}
	long := strings.Repeat("a", MaxName-1) + "é" + strings.Repeat("b", 100)
	if got := Name(long); !utf8.ValidString(got) || got != strings.Repeat("a", MaxName-1)+"…" {
		t.Errorf("Name(long) = %q: want it cut before the é that straddles %d bytes, with …", got, MaxName)
	}
	if got := Key("42"); got != "42" {
		t.Errorf("Key(42) = %q", got)
	}
	a, b := Key(strings.Repeat("x", 1000)), Key(strings.Repeat("x", 999)+"y")
	if a == b || len(a) > MaxName || !strings.HasPrefix(a, "#") || Key(strings.Repeat("x", 1000)) != a {
		t.Errorf("Key of long ids: %q and %q: want distinct, stable, short hashes", a, b)
	}
}

func TestPair(t *testing.T) {
	t.Parallel()
	a, b := Pair(1, "7"), Pair(1, "7")
	if a == Pair(2, "7") || a == Pair(1, "8") || a != b {
		t.Error("Pair does not tell sides and ids apart, or is not stable")
	}
	long := strings.Repeat("x", 1000)
	if p, q := Pair(1, long), Pair(1, long); len(p) > 2*MaxName || p != q {
		t.Errorf("Pair of a long id = %q: want it short (hashed) and stable", p)
	}
}
