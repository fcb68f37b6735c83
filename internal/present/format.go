// Package present owns how tapedeck shows things to a person and to a
// machine: the spelling of values (labels, durations, counted nouns,
// quoted command lines), the timeline of show, a replay's or a diff's
// outcome (text and --json), the HTML reports and the JUnit file of test.
// Every front-end (the command line, a Go program) renders through it; it
// never runs anything.
package present

import (
	"fmt"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/shellword"
)

func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return escape.Text(s)
}

func PluginLabel(p frame.Plugin) string {
	if p.ID == "" {
		return ""
	}
	if p.Version != "" {
		return p.ID + "@" + p.Version
	}
	return p.ID
}

func ExitLabel(e frame.Exit) string {
	switch {
	case e.Signal != "":
		return escape.Text(e.Signal)
	case e.Code != nil:
		return fmt.Sprint(*e.Code)
	}
	return "-"
}

// RecordedLine is the line record ends with on a terminal: the session
// (its name and id), its frames, the store it is in.
func RecordedLine(s *frame.Session, storeDir string) string {
	who := s.ID
	if s.Name != "" {
		who = escape.Text(s.Name) + " (" + s.ID + ")"
	}
	n := s.Frames.In + s.Frames.Out + s.Frames.Err
	return fmt.Sprintf("tapedeck: recorded %s: %s (%d in, %d out, %d err) in %s", who, Count(n, "frame", "frames"),
		s.Frames.In, s.Frames.Out, s.Frames.Err, escape.Text(storeDir))
}

// SessionStatus is a session's status as ls and show print it: the status,
// and what the recording lost when it lost anything (a session whose
// spool filled the disk ends complete, but without those frames).
func SessionStatus(status string, lost *frame.Lost) string {
	s := escape.Text(status)
	if lost == nil {
		return s
	}
	if lost.Frames == 0 {
		return s + ", not all recorded"
	}
	return s + ", " + Count(lost.Frames, "frame", "frames") + " lost"
}

// LostLine is the line show prints under a session's header line about
// what the recording lost, with its reason, or "" when it lost nothing.
func LostLine(lost *frame.Lost) string {
	if lost == nil {
		return ""
	}
	why := ""
	if lost.Reason != "" {
		why = ": " + escape.Text(lost.Reason)
	}
	if lost.Frames == 0 {
		return "lost         the end of the recording" + why
	}
	return fmt.Sprintf("lost         %s, %s, not recorded%s", Count(lost.Frames, "frame", "frames"), Count(lost.Bytes, "byte", "bytes"), why)
}

func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func Count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func OrNone(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

// ShellQuote spells argv as a shell would read it back.
func ShellQuote(argv []string) string {
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

func OrAny(method string) string {
	if method == "" {
		return "*"
	}
	return method
}

func OrAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

// PlainWord says whether w needs no quoting in sh: such a name can also be
// offered for completion as it is.
func PlainWord(w string) bool {
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

// ShellJoin writes argv as a shell would need it: plain words bare, the
// rest single-quoted.
func ShellJoin(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		if PlainWord(w) {
			words[i] = w
		} else {
			words[i] = shellword.Quote(w)
		}
	}
	return escape.Text(strings.Join(words, " "))
}
