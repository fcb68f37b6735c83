package cli

import (
	"fmt"

	"github.com/tapedeck/tapedeck/internal/wrap"
	"github.com/urfave/cli/v2"
)

func (e *env) unwrapCommand() *cli.Command {
	return &cli.Command{
		Name:      "unwrap",
		Usage:     "undo wrap: restore the plugin's manifest (or the MCP client's configuration) byte for byte",
		ArgsUsage: "[DIR] | --mcp CONFIG",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "restore the original manifest even if it was edited since wrap (the edits are lost)"},
			&cli.StringFlag{Name: "mcp", Usage: "restore the MCP client configuration `CONFIG` that wrap --mcp edited"},
		},
		Action: e.unwrap,
	}
}

func (e *env) unwrap(c *cli.Context) error {
	if path := c.String("mcp"); path != "" {
		if c.NArg() > 0 {
			return fail(2, "unwrap --mcp takes no folder (got %q)", c.Args().First())
		}
		return unwrapMCP(e.stdout, path, c.Bool("force"))
	}
	dir, err := pluginDir(c.Command.Name, c.Args().Slice())
	if err != nil {
		return err
	}
	u, err := wrap.Unwrap(dir, c.Bool("force"))
	if err != nil {
		return fail(1, "%v", err)
	}
	switch {
	case u.Overwrote:
		fmt.Fprintf(e.stdout, "unwrapped %s: %s put back as it was before wrap (--force: the edits made since are gone)\n", u.Dir, wrap.ManifestFile)
	case u.Restored:
		fmt.Fprintf(e.stdout, "unwrapped %s: %s restored byte for byte\n", u.Dir, wrap.ManifestFile)
	default:
		fmt.Fprintf(e.stdout, "unwrapped %s: %s was already the original\n", u.Dir, wrap.ManifestFile)
	}
	if u.StateKept {
		fmt.Fprintf(e.stdout, "%s/ is kept: it holds files tapedeck did not write\n", wrap.StateDir)
	}
	return nil
}
