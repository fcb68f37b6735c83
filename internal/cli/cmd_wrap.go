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
		Usage:     "make tapedeck a plugin's main, so that Agentty's sessions with it are recorded",
		ArgsUsage: "[DIR]",
		Description: "Reads DIR/agentty-plugin.json (DIR defaults to the current folder), writes the\n" +
			"launcher " + wrap.LauncherFile + " that execs `tapedeck record` around the command the\n" +
			"host would run (node found as the host finds it, python3, or the executable\n" +
			"main), and points the manifest's runtime and main at it. No other byte of\n" +
			"the manifest changes; the original is kept in " + wrap.OrigFile + "\n" +
			"for `tapedeck unwrap`. Sessions go to the store given by --store (made\n" +
			"absolute) and are named after the plugin id. wasm plugins cannot be wrapped.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print what wrap would do and change nothing"},
			&cli.BoolFlag{Name: "pin-clock", Usage: "record with a pinned clock and seeded randomness (record --pin-clock)"},
		},
		Action: e.wrap,
	}
}

func (e *env) wrap(c *cli.Context) error {
	dir, err := pluginDir(c.Command.Name, c.Args().Slice())
	if err != nil {
		return err
	}
	store, err := filepath.Abs(c.String("store"))
	if err != nil {
		return fail(1, "wrap: store %s: %v", c.String("store"), err)
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
