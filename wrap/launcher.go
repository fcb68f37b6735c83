package wrap

import (
	"bytes"
	"fmt"
	"strings"
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
}

// Argv is the full command line the launcher execs.
func (l *Launch) Argv() []string {
	return append([]string{l.Tapedeck, "--store", l.Store, "record", "--name", l.Name, "--"}, l.Command...)
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
	fmt.Fprintf(&b, "exec %s --store %s record --name %s --", Quote(l.Tapedeck), Quote(l.Store), Quote(l.Name))
	for _, w := range l.Command {
		b.WriteByte(' ')
		b.WriteString(Quote(w))
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// Quote quotes s as one sh word. Inside single quotes every byte is
// literal; a single quote in s becomes close quote, escaped quote, open
// quote:
//
//	it's  →  'it'\''s'
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ParseLauncher reads a launcher that Script wrote. It understands the
// quoting Script uses (single quotes, backslash escapes, plain words) and
// nothing that would need a shell to evaluate; anything else fails with
// ErrLauncher.
func ParseLauncher(script []byte) (*Launch, error) {
	if !bytes.HasPrefix(script, []byte(launcherHead)) {
		return nil, fmt.Errorf("%w: does not start with %q", ErrLauncher, strings.TrimSpace(launcherHead))
	}
	var rest []byte
	off := 0
	for line := range bytes.Lines(script) {
		if bytes.HasPrefix(line, []byte("exec ")) {
			rest = script[off+len("exec "):] // a quoted word may span lines
			break
		}
		off += len(line)
	}
	if rest == nil {
		return nil, fmt.Errorf("%w: no exec line", ErrLauncher)
	}
	words, err := shellWords(rest)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLauncher, err)
	}
	if len(words) < 8 || words[1] != "--store" || words[3] != "record" || words[4] != "--name" || words[6] != "--" {
		return nil, fmt.Errorf("%w: the exec line is not `TAPEDECK --store STORE record --name NAME -- COMMAND…`", ErrLauncher)
	}
	return &Launch{Tapedeck: words[0], Store: words[2], Name: words[5], Command: words[7:]}, nil
}

// shellWords splits one sh command line into words, stopping at the first
// unquoted newline. It accepts single-quoted text, backslash escapes and
// plain characters, and refuses what it cannot evaluate without a shell.
func shellWords(b []byte) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\n':
			if inWord {
				words = append(words, w.String())
			}
			return words, nil
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := bytes.IndexByte(b[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote")
			}
			w.Write(b[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '\\':
			if i+1 >= len(b) {
				return nil, fmt.Errorf("backslash at the end")
			}
			i++
			if b[i] != '\n' { // backslash-newline joins lines
				w.WriteByte(b[i])
				inWord = true
			}
		case bytes.IndexByte([]byte("\"$`;&|<>(){}#*?[~"), c) >= 0:
			return nil, fmt.Errorf("%q needs a shell to evaluate", c)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
