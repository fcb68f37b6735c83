package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/store"
)

// maxProblems bounds the damage verify prints one line each for.
const maxProblems = 100

func (e *env) verifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "read the whole database and check it: bbolt's consistency check and every frame's checksum",
		Description: "Reads every page, session, frame and chunk of the store's database and prints\n" +
			"one line per piece of damage (at most 100), then a summary. Frames stored\n" +
			"before checksums (by an older tapedeck) are decoded but cannot be checked.\n" +
			"Exit status: 0 no damage, 1 damage found, 2 could not run.",
		Action: e.verify,
	}
}

func (e *env) verify(c *cli.Context) error {
	if c.NArg() > 0 {
		return fail(2, "verify takes no arguments (got %q); it checks the whole store (--store DIR)", c.Args().First())
	}
	st, err := store.Open(c.String("store"), &store.Options{MustExist: true})
	if err != nil {
		return fail(2, "verify: %v", err)
	}
	v, err := st.Verify()
	if err != nil {
		return fail(2, "%v", err)
	}
	for i, p := range v.Problems {
		if i == maxProblems {
			fmt.Fprintf(e.stdout, "… and %d more\n", len(v.Problems)-maxProblems)
			break
		}
		fmt.Fprintf(e.stdout, "damaged: %s\n", escape.Text(p))
	}
	unsummed := ""
	if v.Unsummed > 0 {
		unsummed = fmt.Sprintf(" (%d stored before checksums: decoded, not checked)", v.Unsummed)
	}
	fmt.Fprintf(e.stdout, "%s: %s, %s%s\n", st.Dir(), present.Count(v.Sessions, "session", "sessions"), present.Count(v.Frames, "frame", "frames"), unsummed)
	if len(v.Problems) > 0 {
		return fail(1, "verify: %s in the database: move it aside; sessions not yet ingested stay in their spools",
			present.Count(int64(len(v.Problems)), "problem", "problems"))
	}
	fmt.Fprintln(e.stdout, "no damage")
	return nil
}
