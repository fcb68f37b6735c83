package wrap

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tapedeck/tapedeck/internal/shellword"
)

// launcherHead is how every launcher starts; Doctor and ParseLauncher rely
// on it. The host runs an executable main with no shell and no arguments,
// so the interpreter line must name sh by its absolute path.
const launcherHead = "#!/bin/sh\n"

// Launch is what a launcher runs: Tapedeck (absolute) with the store Store,
// recording under the session name Name, around Command, the argv the host
// would have spawned for the plugin itself.
type Launch struct {
	Tapedeck string
	Store    string
	Name     string
	Command  []string
	// PathFirst, when not "", is put first on PATH before the exec: for a
	// node plugin the host puts node's folder there, and a wrapped plugin
	// (runtime executable to the host) must still see it.
	PathFirst string
	// PinClock records with --pin-clock (tapedeck wrap --pin-clock).
	PinClock bool
}

// pathTail follows the quoted PathFirst on the launcher's PATH line: the
// host's PATH after a colon, and no empty entry (the current folder) when
// the host gave none.
const pathTail = "${PATH:+:$PATH}\nexport PATH\n"

// Argv is the full command line the launcher execs.
func (l *Launch) Argv() []string {
	argv := []string{l.Tapedeck, "--store", l.Store, "record", "--name", l.Name}
	if l.PinClock {
		argv = append(argv, "--pin-clock")
	}
	return append(append(argv, "--"), l.Command...)
}

// Script is the launcher: a POSIX sh script that execs Argv, every word
// that comes from outside (paths, the name, the command) single-quoted, so
// it needs no PATH and survives any byte in a path except NUL.
func (l *Launch) Script() []byte {
	var b bytes.Buffer
	b.WriteString(launcherHead)
	b.WriteString("# Written by `tapedeck wrap`: the Agentty host runs this instead of the\n")
	b.WriteString("# plugin, and tapedeck records the session. `tapedeck unwrap` undoes it;\n")
	b.WriteString("# `tapedeck doctor` checks it.\n")
	if l.PathFirst != "" {
		b.WriteString("PATH=" + shellword.Quote(l.PathFirst) + pathTail)
	}
	fmt.Fprintf(&b, "exec %s --store %s record --name %s", shellword.Quote(l.Tapedeck), shellword.Quote(l.Store), shellword.Quote(l.Name))
	if l.PinClock {
		b.WriteString(" --pin-clock")
	}
	b.WriteString(" --")
	for _, w := range l.Command {
		b.WriteByte(' ')
		b.WriteString(shellword.Quote(w))
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// ParseLauncher reads a launcher that Script wrote. It understands the
// quoting Script uses (single quotes, backslash escapes, plain words) and
// nothing that would need a shell to evaluate; anything else fails with
// ErrLauncher.
func ParseLauncher(script []byte) (*Launch, error) {
	if !bytes.HasPrefix(script, []byte(launcherHead)) {
		return nil, fmt.Errorf("%w: does not start with %q", ErrLauncher, strings.TrimSpace(launcherHead))
	}
	l := &Launch{}
	pos := skipComments(script, len(launcherHead))
	if bytes.HasPrefix(script[pos:], []byte("PATH=")) {
		w, next, err := scanWord(script, pos+len("PATH="))
		if err != nil {
			return nil, fmt.Errorf("%w: PATH line: %w", ErrLauncher, err)
		}
		if !bytes.HasPrefix(script[next:], []byte(pathTail)) || w == "" {
			return nil, fmt.Errorf("%w: the PATH line is not PATH=DIR%s", ErrLauncher, strings.TrimSuffix(strings.ReplaceAll(pathTail, "\n", "; "), "; "))
		}
		l.PathFirst = w
		pos = skipComments(script, next+len(pathTail))
	}
	if !bytes.HasPrefix(script[pos:], []byte("exec ")) {
		return nil, fmt.Errorf("%w: no exec line", ErrLauncher)
	}
	words, err := shellWords(script[pos+len("exec "):])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLauncher, err)
	}
	if len(words) > 7 && words[6] == "--pin-clock" {
		l.PinClock = true
		words = append(words[:6:6], words[7:]...)
	}
	if len(words) < 8 || words[1] != "--store" || words[3] != "record" || words[4] != "--name" || words[6] != "--" {
		return nil, fmt.Errorf("%w: the exec line is not `TAPEDECK --store STORE record --name NAME -- COMMAND…`", ErrLauncher)
	}
	l.Tapedeck, l.Store, l.Name, l.Command = words[0], words[2], words[5], words[7:]
	return l, nil
}

// skipComments returns the index of the first line at or after i that is
// neither a comment nor blank.
func skipComments(b []byte, i int) int {
	for i < len(b) && (b[i] == '#' || b[i] == '\n') {
		if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
			i += j + 1
		} else {
			i = len(b)
		}
	}
	return i
}

// shellWords splits one sh command line into words, stopping at the first
// unquoted newline. It accepts single-quoted text, backslash escapes and
// plain characters, and refuses what it cannot evaluate without a shell.
func shellWords(b []byte) ([]string, error) {
	var words []string
	i := 0
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i >= len(b) || b[i] == '\n' {
			return words, nil
		}
		if b[i] == '\\' && i+1 < len(b) && b[i+1] == '\n' { // a line continued
			i += 2
			continue
		}
		w, next, err := scanWord(b, i)
		if err != nil {
			return nil, err
		}
		if next == i { // stopped at once: a '$'
			return nil, fmt.Errorf("%q needs a shell to evaluate", b[i])
		}
		words = append(words, w)
		i = next
	}
}

// scanWord reads the sh word starting at b[i] and returns it with the index
// of the byte that ended it: a blank, a newline, a '$' or the end.
func scanWord(b []byte, i int) (string, int, error) {
	var w strings.Builder
	for i < len(b) {
		c := b[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '$':
			return w.String(), i, nil
		case c == '\'':
			j := bytes.IndexByte(b[i+1:], '\'')
			if j < 0 {
				return "", i, fmt.Errorf("unterminated single quote")
			}
			w.Write(b[i+1 : i+1+j])
			i += j + 2
		case c == '\\':
			if i+1 >= len(b) {
				return "", i, fmt.Errorf("backslash at the end")
			}
			if b[i+1] != '\n' { // backslash-newline joins lines
				w.WriteByte(b[i+1])
			}
			i += 2
		case bytes.IndexByte([]byte("\"`;&|<>(){}#*?[~"), c) >= 0:
			return "", i, fmt.Errorf("%q needs a shell to evaluate", c)
		default:
			w.WriteByte(c)
			i++
		}
	}
	return w.String(), i, nil
}
