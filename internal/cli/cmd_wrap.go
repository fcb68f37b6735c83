package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/wrap"
)

func (e *env) wrapCommand() *cli.Command {
	return &cli.Command{
		Name:      "wrap",
		Usage:     "make tapedeck a plugin's main (or an MCP server's command), so that sessions with it are recorded",
		ArgsUsage: "[DIR] | --mcp CONFIG [--server NAME]…",
		Description: "Reads DIR/agentty-plugin.json (DIR defaults to the current folder), writes the\n" +
			"launcher " + wrap.LauncherFile + " that execs `tapedeck record` around the command the\n" +
			"host would run (node found as the host finds it, python3, or the executable\n" +
			"main), and points the manifest's runtime and main at it. No other byte of\n" +
			"the manifest changes; the original is kept in " + wrap.OrigFile + "\n" +
			"for `tapedeck unwrap`. Sessions go to the store given by --store (made\n" +
			"absolute) and are named after the plugin id. wasm plugins cannot be wrapped.\n\n" +
			"With --mcp CONFIG, wrap edits an MCP client's configuration instead (Claude\n" +
			"Desktop's claude_desktop_config.json, .vscode/mcp.json, .cursor/mcp.json, or\n" +
			"any file with \"mcpServers\" or \"servers\"): each server named with --server\n" +
			"(or its one local server) gets tapedeck as its command, and `record --profile\n" +
			"mcp --name SERVER --env NAME… -- COMMAND ARGS…` as its args, the names those of\n" +
			"its env, which stays as it is. The original is kept in .tapedeck/ beside it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print what wrap would do and change nothing"},
			&cli.BoolFlag{Name: "pin-clock", Usage: "record with a pinned clock and seeded randomness (record --pin-clock)"},
			&cli.StringFlag{Name: "mcp", Usage: "wrap servers of the MCP client configuration `CONFIG` instead of a plugin folder"},
			&cli.StringSliceFlag{Name: "server", Usage: "with --mcp: the server `NAME` to wrap (repeatable; default: its one local server)"},
		},
		Action: e.wrap,
	}
}

func (e *env) wrap(c *cli.Context) error {
	store, err := filepath.Abs(c.String("store"))
	if err != nil {
		return fail(1, "wrap: store %s: %v", c.String("store"), err)
	}
	if path := c.String("mcp"); path != "" {
		if c.NArg() > 0 {
			return fail(2, "wrap --mcp takes no folder (got %q): name servers with --server NAME", c.Args().First())
		}
		self, err := tapedeckPath()
		if err != nil {
			return fail(1, "wrap: %v", err)
		}
		return wrapMCP(e.stdout, mcpWrap{path: path, servers: c.StringSlice("server"), tapedeck: self, store: store, pinClock: c.Bool("pin-clock"), dryRun: c.Bool("dry-run")})
	}
	if c.IsSet("server") {
		return fail(2, "wrap: --server names a server of an MCP client's configuration: give it with --mcp CONFIG")
	}
	dir, err := pluginDir(c.Command.Name, c.Args().Slice())
	if err != nil {
		return err
	}
	self, err := tapedeckPath()
	if err != nil {
		return fail(1, "wrap: %v", err)
	}
	plan, err := wrap.Prepare(c.Context, dir, wrap.Options{Tapedeck: self, Store: store, PinClock: c.Bool("pin-clock")})
	if err != nil {
		return fail(1, "%v", err)
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(e.stderr, "tapedeck: warning: %s\n", w)
	}
	m := plan.Manifest
	runtime := fmt.Sprintf("runtime %q → %q", m.Runtime, wrap.RuntimeExecutable)
	if !m.HasRuntime {
		runtime = fmt.Sprintf("runtime %q added (there was none: node)", wrap.RuntimeExecutable)
	}
	edit := fmt.Sprintf("%s, main %q → %q", runtime, m.Main, wrap.LauncherFile)

	if c.Bool("dry-run") {
		fmt.Fprintf(e.stdout, "wrap %s in %s would:\n", m.ID, plan.Dir)
		fmt.Fprintf(e.stdout, "  keep    %s as %s\n", wrap.ManifestFile, wrap.OrigFile)
		fmt.Fprintf(e.stdout, "  write   %s (mode 0755):\n", wrap.LauncherFile)
		for _, line := range strings.SplitAfter(string(plan.Launch.Script()), "\n") {
			if line != "" {
				fmt.Fprintf(e.stdout, "            %s", line)
			}
		}
		fmt.Fprintf(e.stdout, "  edit    %s: %s\n", wrap.ManifestFile, edit)
		if plan.Node != nil {
			fmt.Fprintf(e.stdout, "  node    %s (%s)\n", plan.Node.Path, plan.Node.Where)
		}
		fmt.Fprintln(e.stdout, "dry run: nothing changed")
		return nil
	}
	if err := plan.Apply(); err != nil {
		return fail(1, "%v", err)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "wrapped %s in %s\n", m.ID, plan.Dir)
	fmt.Fprintf(tw, "  manifest\t%s\n", edit)
	fmt.Fprintf(tw, "  the host runs\t%s\n", present.ShellJoin([]string{plan.LauncherPath()}))
	fmt.Fprintf(tw, "  which records\t%s\n", present.ShellJoin(plan.Launch.Command))
	if plan.Node != nil {
		fmt.Fprintf(tw, "  node\tfound in %s; its folder goes first on PATH, as the host does\n", plan.Node.Where)
	}
	fmt.Fprintf(tw, "  into\t%s, sessions named %s\n", store, m.ID)
	tw.Flush()
	fmt.Fprintf(e.stdout, "If Agentty has the plugin loaded, reload it (or restart Agentty) so it reads the new manifest.\n")
	fmt.Fprintf(e.stdout, "Check with: tapedeck doctor %s    Undo with: tapedeck unwrap %s\n", present.ShellJoin([]string{plan.Dir}), present.ShellJoin([]string{plan.Dir}))
	return nil
}

// tapedeckPath is the absolute path of this tapedeck, for the launcher.
// When the name it was run by (argv[0], or its PATH lookup) is the same
// file as the running executable, that name wins: it keeps a stable
// symlink such as Homebrew's bin/tapedeck instead of the versioned file
// it points to, which an upgrade removes.
func tapedeckPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the tapedeck binary: %w", err)
	}
	exeInfo, err := os.Stat(exe)
	if err != nil {
		return "", fmt.Errorf("find the tapedeck binary: %w", err)
	}
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			if fi, err := os.Stat(abs); err == nil && os.SameFile(fi, exeInfo) {
				return abs, nil
			}
		}
	}
	return filepath.Abs(exe)
}
