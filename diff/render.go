package diff

import (
	"fmt"
	"io"
	"strings"
)

// RenderOptions tunes Render.
type RenderOptions struct {
	Color bool // ANSI colours (only on a terminal, never with NO_COLOR)
	// Escape makes text from frames safe for a terminal. Nil leaves it.
	Escape func(string) string
}

const (
	red, green, yellow, bold, reset = "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[1m", "\x1b[0m"
)

// Render prints each difference for a person: its kind, what it is, where it
// stands in each run, the changed paths with old → new values, and the
// unified diff of the pretty-printed JSON.
func Render(w io.Writer, r *Result, o RenderOptions) error {
	esc := o.Escape
	if esc == nil {
		esc = func(s string) string { return s }
	}
	paint := func(c, s string) string {
		if !o.Color {
			return s
		}
		return c + s + reset
	}
	names := r.Names
	if names[0] == "" {
		names = [2]string{"recorded", "replayed"}
	}
	var b strings.Builder
	for _, d := range r.Differences {
		switch d.Kind {
		case Exit:
			fmt.Fprintf(&b, "%s  %s\n", paint(yellow, "exit    "), d.What)
			continue
		}
		where := ""
		switch {
		case d.Recorded != nil && d.Live != nil:
			where = fmt.Sprintf("%s #%d (seq %d), %s #%d (seq %d)", names[0], d.Recorded.Index, d.Recorded.Seq, names[1], d.Live.Index, d.Live.Seq)
		case d.Recorded != nil:
			where = fmt.Sprintf("%s #%d (seq %d)", names[0], d.Recorded.Index, d.Recorded.Seq)
		default:
			where = fmt.Sprintf("%s #%d (seq %d)", names[1], d.Live.Index, d.Live.Seq)
		}
		colour := map[Kind]string{Changed: yellow, Missing: red, Extra: green, Moved: yellow}[d.Kind]
		fmt.Fprintf(&b, "%s  %s  %s\n", paint(colour, fmt.Sprintf("%-8s", d.Kind)), paint(bold, esc(d.What)), where)
		for _, c := range d.Changes {
			old, nw := c.Old, c.New
			if old == "" {
				old = "(absent)"
			}
			if nw == "" {
				nw = "(absent)"
			}
			fmt.Fprintf(&b, "    %s: %s → %s\n", esc(c.Path), esc(old), esc(nw))
		}
		for _, n := range d.Nodes {
			fmt.Fprintf(&b, "    changed node %s\n", esc(n))
		}
		switch d.Kind {
		case Changed:
			for _, line := range strings.Split(strings.TrimSuffix(d.Unified, "\n"), "\n") {
				c := ""
				switch {
				case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
					c = bold
				case strings.HasPrefix(line, "-"):
					c = red
				case strings.HasPrefix(line, "+"):
					c = green
				}
				fmt.Fprintf(&b, "    %s\n", paint(c, esc(line)))
			}
		case Missing:
			fmt.Fprintf(&b, "    %s\n", paint(red, "- "+esc(oneLine(d.Recorded.Raw))))
		case Extra:
			fmt.Fprintf(&b, "    %s\n", paint(green, "+ "+esc(oneLine(d.Live.Raw))))
		case Moved:
			fmt.Fprintf(&b, "    %s\n", esc(oneLine(d.Recorded.Raw)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func oneLine(s string) string {
	const max = 300
	if len(s) > max {
		return s[:max] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}
