package present

import "testing"

func TestListCapsWithACount(t *testing.T) {
	for _, c := range []struct {
		items []string
		more  int
		want  string
	}{
		{[]string{"a", "b"}, 0, "a, b"},
		{[]string{"a"}, 249990, "a, … and 249,990 more"},
		{nil, 0, ""},
	} {
		if got := List(c.items, c.more); got != c.want {
			t.Errorf("List(%q, %d) = %q, want %q", c.items, c.more, got, c.want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45000: "-45,000"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
