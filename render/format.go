package cli

// How values are spelled for a person: labels, durations, sizes, counted
// nouns, quoted command lines.

import (
	"fmt"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/cli/internal/escape"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/wrap"
)

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return escape.Text(s)
}

func pluginLabel(p frame.Plugin) string {
	if p.ID == "" {
		return ""
	}
	if p.Version != "" {
		return p.ID + "@" + p.Version
	}
	return p.ID
}

func exitLabel(e frame.Exit) string {
	switch {
	case e.Signal != "":
		return escape.Text(e.Signal)
	case e.Code != nil:
		return fmt.Sprint(*e.Code)
	}
	return "-"
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func nounCount(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func orNone(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

// shellQuote spells argv as a shell would read it back.
func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func orAny(method string) string {
	if method == "" {
		return "*"
	}
	return method
}

func orAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

// plainWord says whether w needs no quoting in sh.
func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
			return false
		}
	}
	return true
}

// shellJoin writes argv as a shell would need it: plain words bare, the
// rest single-quoted.
func shellJoin(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		if plainWord(w) {
			words[i] = w
		} else {
			words[i] = wrap.Quote(w)
		}
	}
	return escape.Text(strings.Join(words, " "))
}
