package cli

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/smallfile"
)

func (e *env) textconvCommand() *cli.Command {
	return &cli.Command{
		Name:      "textconv",
		Usage:     "print a tape as a reviewer reads it: one indented frame per block (a git diff driver)",
		ArgsUsage: "TAPE",
		Description: "The session's lasting metadata, then each frame in tape order, its JSON\n" +
			"indented with sorted members; ids, times and seq numbers are left out, so a\n" +
			"changed label is one -/+ pair. For git, in the repository of the tapes:\n" +
			"  echo '*.jsonl diff=tapedeck' >> .gitattributes\n" +
			"  git config diff.tapedeck.textconv \"tapedeck textconv\"\n" +
			"A file that is not a tape is printed as it is (git diff keeps working).",
		Action: e.textconv,
	}
}

func (e *env) textconv(c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(2, "textconv takes one tape, not %d (see tapedeck textconv --help)", c.NArg())
	}
	path := c.Args().First()
	// A regular file ends; a pipe or /dev/zero may not. It is read twice,
	// a frame at a time: once to see that it is a tape (else it is shown
	// as it is), once to print it.
	f, err := smallfile.OpenRegular(path)
	if err != nil {
		return fail(1, "textconv: %v", err)
	}
	defer f.Close()
	if err := present.TextconvFrom(io.Discard, f); err != nil {
		fmt.Fprintf(e.stderr, "tapedeck: textconv %s: %v: shown as it is\n", escape.Text(path), err)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fail(1, "textconv: %v", err)
		}
		_, err = io.Copy(e.stdout, f)
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(1, "textconv: %v", err)
	}
	return present.TextconvFrom(e.stdout, f)
}
