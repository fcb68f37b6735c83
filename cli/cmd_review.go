package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/tapedeck/tapedeck/playback"
	"github.com/tapedeck/tapedeck/render"
)

func (e *env) reviewCommand() *cli.Command {
	return &cli.Command{
		Name:      "review",
		Usage:     "accept or reject, tape by tape, the changes test --update left pending",
		ArgsUsage: "[PATH…]",
		Description: "Walks every pending change (NAME.jsonl.new beside NAME.jsonl) under the\n" +
			"paths (default testdata/), shows its differences as replay does, and asks:\n" +
			"a accept (the change replaces the tape), r reject (the change is deleted),\n" +
			"s skip (it stays pending), d the full diff of the two files, q quit.\n" +
			"--accept or --reject does it for all without asking.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "accept", Usage: "accept every pending change"},
			&cli.BoolFlag{Name: "reject", Usage: "reject every pending change"},
			&cli.BoolFlag{Name: "force", Usage: "allow accepting when CI is set"},
		},
		Action: e.review,
	}
}

func (e *env) review(c *cli.Context) error {
	accept, reject := c.Bool("accept"), c.Bool("reject")
	if accept && reject {
		return fail(2, "review: --accept and --reject together: choose one")
	}
	if e.getenv("CI") != "" && !reject && !c.Bool("force") {
		return fail(2, "review: refusing while CI is set: golden tapes change only on purpose (add --force to override)")
	}
	paths := c.Args().Slice()
	if len(paths) == 0 {
		paths = []string{"testdata"}
	}
	pending, err := playback.FindPending(paths)
	if err != nil {
		return fail(2, "review: %v", err)
	}
	if len(pending) == 0 {
		fmt.Fprintf(e.stdout, "no pending changes under %s\n", strings.Join(paths, ", "))
		return nil
	}
	keys := newKeyReader(e.stdin)
	var accepted, rejected, skipped int
	for i, p := range pending {
		tapePath := strings.TrimSuffix(p, playback.PendingSuffix)
		if !accept && !reject {
			fmt.Fprintf(e.stdout, "\n[%d/%d] ", i+1, len(pending))
		}
		if err := e.showPending(tapePath, p); err != nil {
			return fail(1, "review: %v", err)
		}
		choice := byte('a')
		switch {
		case reject:
			choice = 'r'
		case !accept:
			for {
				fmt.Fprint(e.stdout, "a accept, r reject, s skip, d full diff, q quit: ")
				choice = keys.next()
				fmt.Fprintln(e.stdout)
				if choice == 'd' {
					if err := e.fullDiff(tapePath, p); err != nil {
						return fail(1, "review: %v", err)
					}
					continue
				}
				if strings.IndexByte("arsq\x00", choice) >= 0 {
					break
				}
			}
		}
		switch choice {
		case 'a':
			if err := os.Rename(p, tapePath); err != nil {
				return fail(1, "review: accept %s: %v", p, err)
			}
			accepted++
			fmt.Fprintf(e.stdout, "accepted %s\n", tapePath)
		case 'r':
			if err := os.Remove(p); err != nil {
				return fail(1, "review: reject %s: %v", p, err)
			}
			rejected++
			fmt.Fprintf(e.stdout, "rejected %s\n", tapePath)
		case 'q', 0:
			fmt.Fprintf(e.stdout, "accepted %d, rejected %d, skipped %d, %d left pending\n", accepted, rejected, skipped, len(pending)-i)
			return nil
		default:
			skipped++
			fmt.Fprintf(e.stdout, "skipped %s\n", tapePath)
		}
	}
	fmt.Fprintf(e.stdout, "accepted %d, rejected %d, skipped %d\n", accepted, rejected, skipped)
	return nil
}

// showPending prints what accepting the pending change p of tapePath would
// change, as replay prints a difference.
func (e *env) showPending(tapePath, p string) error {
	golden, err := playback.ReadTape(tapePath)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stdout, "%s: a new tape\n", tapePath)
		return nil
	}
	if err != nil {
		return err
	}
	next, err := playback.ReadTape(p)
	if err != nil {
		return err
	}
	o, err := playback.Compare(golden, next, &playback.CompareOptions{CompareStderr: true, Names: [2]string{"golden", "pending"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: %s pending\n", tapePath, render.Count(int64(len(o.Diff.Differences)), "difference", "differences"))
	return render.Differences(e.stdout, o)
}

// fullDiff prints the line diff of the tape and its pending change.
func (e *env) fullDiff(tapePath, p string) error {
	a, err := os.ReadFile(tapePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	return render.Unified(e.stdout, string(a), string(b), tapePath, p)
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
