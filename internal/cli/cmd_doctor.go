package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/wrap"
)

func (e *env) doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check a wrapped plugin (or MCP client configuration): launcher, tapedeck, store, interpreter; say what the host will run",
		ArgsUsage: "[DIR] | --mcp CONFIG",
		Description: "Checks without starting the plugin. Exits 1 and names each problem on its\n" +
			"own line when the host could not start the plugin through tapedeck. With\n" +
			"--mcp CONFIG it checks each server wrap --mcp wrapped: the tapedeck it\n" +
			"runs, the store, the server's own command.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "mcp", Usage: "check the MCP client configuration `CONFIG` that wrap --mcp edited"},
		},
		Action: e.doctor,
	}
}

func (e *env) doctor(c *cli.Context) error {
	if path := c.String("mcp"); path != "" {
		if c.NArg() > 0 {
			return fail(2, "doctor --mcp takes no folder (got %q)", c.Args().First())
		}
		return doctorMCP(c.Context, e.stdout, e.stderr, path)
	}
	dir, err := pluginDir(c.Command.Name, c.Args().Slice())
	if err != nil {
		return err
	}
	r, err := wrap.Doctor(c.Context, dir, nil)
	if err != nil {
		return fail(1, "%v", err)
	}
	printChecks(e.stdout, r.Checks)
	fmt.Fprintf(e.stdout, "the host will run: %s\n", present.ShellJoin(r.HostArgv))
	fmt.Fprintf(e.stdout, "  in the folder:   %s\n", present.ShellJoin([]string{r.Cwd}))
	if r.Launch != nil {
		fmt.Fprintf(e.stdout, "  which execs:     %s\n", present.ShellJoin(r.Launch.Argv()))
		if r.Launch.PathFirst != "" {
			fmt.Fprintf(e.stdout, "  with PATH:       %s first, then the host's PATH\n", present.ShellJoin([]string{r.Launch.PathFirst}))
		}
	}
	problems := r.Problems()
	if len(problems) == 0 {
		return nil
	}
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "tapedeck: doctor: %s\n", p)
	}
	return fail(1, "doctor %s: %d problem(s): the host cannot record this plugin as it is", r.Dir, len(problems))
}
