package cli

// The plugin folder argument of wrap, unwrap and doctor.

import "github.com/urfave/cli/v2"

// pluginDir is the one optional DIR argument of wrap, unwrap and doctor.
func pluginDir(c *cli.Context) (string, error) {
	switch c.NArg() {
	case 0:
		return ".", nil
	case 1:
		return c.Args().First(), nil
	}
	return "", fail(2, "%s takes one plugin folder, got %d arguments (flags go before the folder)", c.Command.Name, c.NArg())
}
