package diff

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
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

// Render prints each difference for a person, each change once: its kind,
// what it is, the seqs of its frames in each run (and of the other
// differences that are the same change), the changed paths with old → new
// values (a word diff for a long string), and the unified diff of the
// pretty-printed JSON.
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
	words := WordsOptions{Escape: esc}
	if o.Color {
		words.Del = [2]string{red + "[-", "-]" + reset}
		words.Ins = [2]string{green + "{+", "+}" + reset}
	}
	var b strings.Builder
	for _, g := range r.Groups() {
		d := r.Differences[g.Differences[0]]
		if d.Kind == Exit {
			fmt.Fprintf(&b, "%s  %s\n", paint(yellow, "exit    "), esc(strings.TrimPrefix(d.What, "exit: ")))
			continue
		}
		colour := map[Kind]string{Changed: yellow, Missing: red, Extra: green, Moved: yellow}[d.Kind]
		fmt.Fprintf(&b, "%s  %s  %s\n", paint(colour, fmt.Sprintf("%-8s", d.Kind)), paint(bold, esc(d.What)), esc(Where(d, names)))
		if g.Count > 1 {
			fmt.Fprintf(&b, "    and %d more like it: %s\n", g.Count-1, esc(seqList(g, names)))
		}
		for _, c := range d.Changes {
			if c.Words != nil {
				fmt.Fprintf(&b, "    %s: %s\n", esc(c.Path), Words(c.Words, words))
				continue
			}
			old, nw := c.Old, c.New
			if old == "" {
				old = "(absent)"
			}
			if nw == "" {
				nw = "(absent)"
			}
			fmt.Fprintf(&b, "    %s: %s → %s\n", esc(c.Path), esc(old), esc(nw))
		}
		if d.MoreChanges > 0 {
			fmt.Fprintf(&b, "    … and %d more changes\n", d.MoreChanges)
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
	if s := r.NotKept(); s != "" {
		fmt.Fprintf(&b, "%s\n", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// NotKept says how many differences were found past those kept, as the
// text and HTML reports say it; "" when none was.
func (r *Result) NotKept() string {
	if r.More == 0 {
		return ""
	}
	return fmt.Sprintf("differences not kept: %d more (tapedeck keeps the first %d of a comparison)", r.More, len(r.Differences))
}

// Where says where a difference stands, by the seqs of its frames (the
// SEQ column of tapedeck show): "recorded seq 4, replayed seq 5". names
// are the two sides ("recorded" and "replayed" when empty).
func Where(d Difference, names [2]string) string {
	if names[0] == "" || names[1] == "" {
		names = [2]string{"recorded", "replayed"}
	}
	var parts []string
	if d.Recorded != nil {
		parts = append(parts, fmt.Sprintf("%s seq %d", names[0], d.Recorded.Seq))
	}
	if d.Live != nil {
		parts = append(parts, fmt.Sprintf("%s seq %d", names[1], d.Live.Seq))
	}
	return strings.Join(parts, ", ")
}

// maxSeqs is how many seqs of a side "and N more like it" lists.
const maxSeqs = 10

// seqList lists the seqs of a group but its first: "recorded seq 9, 14;
// replayed seq 9, 15".
func seqList(g Group, names [2]string) string {
	list := func(name string, seqs []uint64) string {
		if len(seqs) < 2 {
			return ""
		}
		seqs = seqs[1:]
		var s []string
		for i, q := range seqs {
			if i == maxSeqs {
				s = append(s, fmt.Sprintf("… (%d in all)", len(seqs)))
				break
			}
			s = append(s, strconv.FormatUint(q, 10))
		}
		return name + " seq " + strings.Join(s, ", ")
	}
	var parts []string
	for _, p := range []string{list(names[0], g.RecordedSeqs), list(names[1], g.LiveSeqs)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "; ")
}

func oneLine(s string) string {
	const max = 300
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}
