package cli

import "github.com/urfave/cli/v2"

func (e *env) gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "compact the database into a new file and swap it in",
		Description: "bbolt files never shrink; gc copies the live data into a new file, checks\n" +
			"it, and renames it over the old one. It refuses while a session records.",
		Action: e.gc,
	}
}

func (e *env) gc(c *cli.Context) error {
	if c.NArg() > 0 {
		return fail(2, "gc takes no arguments (got %q)", c.Args().First())
	}
	st, err := e.openStore(c.String("store"))
	if err != nil {
		return err
	}
	return e.compact(st)
}
