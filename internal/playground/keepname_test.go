package playground

import (
	"regexp"
	"strings"
	"testing"
)

// TestKeepNameIsTheFileNameRule: isKeepName accepts exactly what the rule
// it replaced did (a letter or digit, then at most 80 of letters, digits,
// ".", "_", "-"), over names of every length around the limit and every
// byte in every place.
func TestKeepNameIsTheFileNameRule(t *testing.T) {
	t.Parallel()
	rule := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$`)
	names := []string{"", "a", "clicks", "a.b_c-d", ".hidden", "-x", "_x", "a b", "a/b", "é", "a\n", "ok.host"}
	for n := 78; n <= 83; n++ {
		names = append(names, strings.Repeat("a", n))
	}
	for c := 0; c < 256; c++ {
		names = append(names, string(rune(c))+"x", "x"+string([]byte{byte(c)}), string([]byte{byte(c)}))
	}
	for _, name := range names {
		if got, want := isKeepName(name), rule.MatchString(name); got != want {
			t.Errorf("isKeepName(%q) = %v, the rule says %v", name, got, want)
		}
	}
}
