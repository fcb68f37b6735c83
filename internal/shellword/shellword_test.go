package shellword

import (
	"os/exec"
	"testing"
)

func TestQuote(t *testing.T) {
	cases := map[string]string{
		"":     `''`,
		"a b":  `'a b'`,
		"it's": `'it'\''s'`,
		"''":   `''\'''\'''`,
	}
	for in, want := range cases {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestQuoteUnderSh: sh reads every quoted word back as the string.
func TestQuoteUnderSh(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skipf("no sh: %v", err)
	}
	for _, s := range []string{"", "a b", "it's", "''", "$HOME `id` \\ \"x\"", "new\nline", "-dash", "ünïcødé 🎉", "*?[~#;&|<>(){}"} {
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh read %s as %q (%v), want %q", Quote(s), out, err, s)
		}
	}
}
