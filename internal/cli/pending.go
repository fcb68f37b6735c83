package cli

// Pending changes (NAME.jsonl.new beside NAME.jsonl), as review shows them
// (internal/pending refuses, compares and sums them up): the refusal's advice, the
// list, each one's differences and its pretty diff through the pager, and
// the keys that answer.

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/pending"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/internal/smallfile"
)

// pendingHint is the line that says how many changes are pending and the
// review command that walks them (review takes the paths given), escaped
// for the terminal.
func pendingHint(changes int, paths []string) string {
	return escape.Text(fmt.Sprintf("tapedeck: %s pending: look at each and accept or reject it with: %s",
		present.Count(int64(changes), "change", "changes"), strings.Join(append([]string{"tapedeck review"}, paths...), " ")))
}

// checkPendingFiles refuses pending changes that are not regular files
// (pending.Check), with what to do about it.
func checkPendingFiles(changes []string) error {
	var bad *pending.NotAFile
	switch err := pending.Check(changes); {
	case errors.As(err, &bad) && bad.Link:
		return fmt.Errorf("%s: remove it (rm %s) and run test --update again", escape.Text(bad.Error()), present.ShellJoin([]string{escape.Text(bad.Path)}))
	case errors.As(err, &bad):
		return fmt.Errorf("%s: remove it and run test --update again", escape.Text(bad.Error()))
	default:
		return err
	}
}

// showPending prints what accepting the pending change p of tapePath would
// change, as replay prints a difference.
func showPending(w io.Writer, tapePath, p string) error {
	o, err := pending.Compare(tapePath, p)
	if err != nil {
		return err
	}
	if o == nil {
		fmt.Fprintf(w, "%s: a new tape\n", escape.Text(tapePath))
		return nil
	}
	fmt.Fprintf(w, "%s: %s pending\n", escape.Text(tapePath), present.Count(int64(o.Diff.Count()), "difference", "differences"))
	return present.Differences(w, o)
}

// listPending prints each pending change, its tape and its differences:
// a line each, or with asJSON a JSON object each (JSON lines).
func listPending(w io.Writer, changes []string, asJSON bool) error {
	summaries, err := pending.Summarise(changes)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range summaries {
		if asJSON {
			b, err := json.Marshal(pendingLine{s, bytes64(s.Tape), bytes64(s.Pending)})
			if err != nil {
				return err
			}
			if _, err := w.Write(append(escape.JSON(nil, b), '\n')); err != nil {
				return err
			}
			continue
		}
		what := "a new tape"
		if s.Outcome != nil {
			what = present.Count(int64(s.Differences), "difference", "differences")
			if s.Differences > 0 {
				what += " (" + present.CountDifferences(s.Outcome.Diff) + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", escape.Text(s.Tape), what, escape.Text(s.Pending))
	}
	return tw.Flush()
}

// pendingLine is one line of review --list --json: the summary, and for a
// path that is not UTF-8 (JSON strings hold only UTF-8: "tape" and
// "pending" then read U+FFFD where the bytes were), its exact bytes in
// base64.
type pendingLine struct {
	pending.Summary
	TapeB64    string `json:"tapeB64,omitempty"`
	PendingB64 string `json:"pendingB64,omitempty"`
}

// bytes64 is name's bytes in base64 when it is not UTF-8, else "".
func bytes64(name string) string {
	if utf8.ValidString(name) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(name))
}

// reviewed counts what a review did.
type reviewed struct{ accepted, rejected, skipped int }

// walkPending shows each pending change and accepts, rejects or skips it:
// all accepted or all rejected when asked, else as the keys read from
// stdin answer, with the pretty diff through the pager on d.
func (e *env) walkPending(changes []string, accept, reject bool) error {
	keys := newKeyReader(e.stdin)
	var n reviewed
	for i, p := range changes {
		tapePath := pending.Tape(p)
		if !accept && !reject {
			fmt.Fprintf(e.stdout, "\n[%d/%d] ", i+1, len(changes))
		}
		if err := showPending(e.stdout, tapePath, p); err != nil {
			return fail(1, "review: %s", escape.Text(err.Error()))
		}
		choice := byte('a')
		switch {
		case reject:
			choice = 'r'
		case !accept:
			var err error
			if choice, err = e.askPending(keys, tapePath, p); err != nil {
				return fail(1, "review: %s", escape.Text(err.Error()))
			}
		}
		if quit, err := e.settlePending(choice, p, tapePath, &n); err != nil || quit {
			if quit {
				fmt.Fprintf(e.stdout, "accepted %d, rejected %d, skipped %d, %d left pending\n", n.accepted, n.rejected, n.skipped, len(changes)-i)
			}
			return err
		}
	}
	fmt.Fprintf(e.stdout, "accepted %d, rejected %d, skipped %d\n", n.accepted, n.rejected, n.skipped)
	return nil
}

// askPending asks what to do with the pending change p of tapePath until
// a key answers (0: stdin ended), paging its pretty diff on d.
func (e *env) askPending(keys *keyReader, tapePath, p string) (byte, error) {
	for {
		fmt.Fprint(e.stdout, "a accept, r reject, s skip, d diff, q quit: ")
		choice := keys.next()
		fmt.Fprintln(e.stdout)
		if choice == 'd' {
			text, err := prettyDiff(tapePath, p)
			if err == nil {
				err = page(e.stdout, e.stderr, e.getenv("PAGER"), text)
			}
			if err != nil {
				return 0, err
			}
			continue
		}
		if strings.IndexByte("arsq\x00", choice) >= 0 {
			return choice, nil
		}
	}
}

// settlePending does what choice says with the pending change p of
// tapePath, counting it in n; quit reports q (or the end of stdin).
func (e *env) settlePending(choice byte, p, tapePath string, n *reviewed) (quit bool, err error) {
	switch choice {
	case 'a':
		if _, err := pending.Accept(p); err != nil {
			return false, fail(1, "review: %s", escape.Text(err.Error()))
		}
		n.accepted++
		fmt.Fprintf(e.stdout, "accepted %s\n", escape.Text(tapePath))
	case 'r':
		if err := pending.Reject(p); err != nil {
			return false, fail(1, "review: %s", escape.Text(err.Error()))
		}
		n.rejected++
		fmt.Fprintf(e.stdout, "rejected %s\n", escape.Text(tapePath))
	case 'q', 0:
		return true, nil
	default:
		n.skipped++
		fmt.Fprintf(e.stdout, "skipped %s\n", escape.Text(tapePath))
	}
	return false, nil
}

// prettyDiff is the line diff of the tape and its pending change as
// tapedeck textconv prints them (a frame per block), escaped.
func prettyDiff(tapePath, p string) (string, error) {
	golden, err := smallfile.ReadRegular(tapePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err // a new tape has none: all of it is added
	}
	next, err := smallfile.ReadRegular(p)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := present.TapeDiff(&b, golden, next, tapePath, p); err != nil {
		return "", err
	}
	return b.String(), nil
}

// page shows text to the person at stdout: on a terminal through $PAGER
// (run by sh, as git and man do), or less -R when PAGER is unset and less
// is installed, else written out; elsewhere written out as it is.
func page(stdout, stderr io.Writer, pager, text string) error {
	if screen.IsTerminal(stdout) {
		if pager == "" {
			if _, err := exec.LookPath("less"); err == nil {
				pager = "less -R"
			}
		}
		if pager != "" && pager != "cat" {
			cmd := exec.Command("/bin/sh", "-c", pager)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(text), stdout, stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("pager %q: %w", pager, err)
			}
			return nil
		}
	}
	_, err := io.WriteString(stdout, text)
	return err
}

// keyReader reads one answer at a time: a key press on a terminal (in raw
// mode while it waits), else the first letter of a line. It returns 0 at
// the end of the input.
type keyReader struct {
	f  *os.File
	br *bufio.Reader
}

func newKeyReader(f *os.File) *keyReader {
	return &keyReader{f: f, br: bufio.NewReader(f)}
}

func (k *keyReader) next() byte {
	if k.f != nil && term.IsTerminal(int(k.f.Fd())) {
		if state, err := term.MakeRaw(int(k.f.Fd())); err == nil {
			defer term.Restore(int(k.f.Fd()), state)
			b, err := k.br.ReadByte()
			if err != nil || b == 3 || b == 4 { // Ctrl-C, Ctrl-D
				return 0
			}
			return lower(b)
		}
	}
	for {
		line, err := k.br.ReadString('\n')
		if s := strings.TrimSpace(line); s != "" {
			return lower(s[0])
		}
		if err != nil {
			return 0
		}
	}
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
