package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/pending"
)

func (e *env) reviewCommand() *cli.Command {
	return &cli.Command{
		Name:      "review",
		Usage:     "accept or reject, tape by tape, the changes test --update left pending",
		ArgsUsage: "[PATH…]",
		Description: "Walks every pending change (NAME.jsonl.new beside NAME.jsonl) under the\n" +
			"paths (" + defaultTapesUsage + "), shows its differences as replay does, and asks:\n" +
			"a accept (the change replaces the tape), r reject (the change is deleted),\n" +
			"s skip (it stays pending), d the diff of the two as tapedeck textconv prints\n" +
			"them (through $PAGER on a terminal, else less -R), q quit. --accept or\n" +
			"--reject does it for all without asking; --list lists what is pending (with\n" +
			"--json, one JSON object per change). A pending change that is a symbolic\n" +
			"link is refused.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "accept", Usage: "accept every pending change"},
			&cli.BoolFlag{Name: "reject", Usage: "reject every pending change"},
			&cli.BoolFlag{Name: "force", Usage: "allow accepting when CI is set"},
			&cli.BoolFlag{Name: "list", Usage: "list the pending changes (tape, differences, file) and change nothing"},
			&cli.BoolFlag{Name: "json", Usage: "with --list: one JSON object per pending change (JSON lines)"},
		},
		Action: e.review,
	}
}

func (e *env) review(c *cli.Context) error {
	accept, reject := c.Bool("accept"), c.Bool("reject")
	if accept && reject {
		return fail(2, "review: --accept and --reject together: choose one")
	}
	list := c.Bool("list")
	if list && (accept || reject) {
		return fail(2, "review: --list changes nothing: give it without --accept and --reject")
	}
	if c.Bool("json") && !list {
		return fail(2, "review: --json goes with --list")
	}
	if e.getenv("CI") != "" && !reject && !list && !c.Bool("force") {
		return fail(2, "review: refusing while CI is set: golden tapes change only on purpose (add --force to override)")
	}
	paths, err := tapePaths(c.Args().Slice(), "review")
	if err != nil {
		return err
	}
	pending, err := pending.Find(paths)
	if err != nil {
		return fail(2, "review: %s", escape.Text(err.Error()))
	}
	if err := checkPendingFiles(pending); err != nil {
		return fail(1, "review: %s", escape.Text(err.Error()))
	}
	if list {
		if err := listPending(e.stdout, pending, c.Bool("json")); err != nil {
			return fail(1, "review: %s", escape.Text(err.Error()))
		}
		return nil
	}
	if len(pending) == 0 {
		fmt.Fprintf(e.stdout, "no pending changes under %s\n", escape.Text(strings.Join(paths, ", ")))
		return nil
	}
	return e.walkPending(pending, accept, reject)
}
