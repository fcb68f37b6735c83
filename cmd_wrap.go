package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/wrap"
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

func (e *env) unwrapCommand() *cli.Command {
	return &cli.Command{
		Name:      "unwrap",
		Usage:     "undo wrap: restore the plugin's manifest byte for byte and remove the launcher",
		ArgsUsage: "[DIR]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "restore the original manifest even if it was edited since wrap (the edits are lost)"},
		},
		Action: e.unwrap,
	}
}

func (e *env) doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check a wrapped plugin: launcher, tapedeck, store, interpreter; say what the host will run",
		ArgsUsage: "[DIR]",
		Description: "Checks without starting the plugin. Exits 1 and names each problem on its\n" +
			"own line when the host could not start the plugin through tapedeck.",
		Action: e.doctor,
	}
}

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

func (e *env) wrap(c *cli.Context) error {
	dir, err := pluginDir(c)
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
	fmt.Fprintf(tw, "  the host runs\t%s\n", shellJoin([]string{plan.LauncherPath()}))
	fmt.Fprintf(tw, "  which records\t%s\n", shellJoin(plan.Launch.Command))
	if plan.Node != nil {
		fmt.Fprintf(tw, "  node\tfound in %s; its folder goes first on PATH, as the host does\n", plan.Node.Where)
	}
	fmt.Fprintf(tw, "  into\t%s, sessions named %s\n", store, m.ID)
	tw.Flush()
	fmt.Fprintf(e.stdout, "If Agentty has the plugin loaded, reload it (or restart Agentty) so it reads the new manifest.\n")
	fmt.Fprintf(e.stdout, "Check with: tapedeck doctor %s    Undo with: tapedeck unwrap %s\n", shellJoin([]string{plan.Dir}), shellJoin([]string{plan.Dir}))
	return nil
}

func (e *env) unwrap(c *cli.Context) error {
	dir, err := pluginDir(c)
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

func (e *env) doctor(c *cli.Context) error {
	dir, err := pluginDir(c)
	if err != nil {
		return err
	}
	r, err := wrap.Doctor(c.Context, dir, nil)
	if err != nil {
		return fail(1, "%v", err)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, ch := range r.Checks {
		status := "ok"
		if ch.Problem != "" {
			status = "PROBLEM"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", status, ch.What, ch.Detail)
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "the host will run: %s\n", shellJoin(r.HostArgv))
	fmt.Fprintf(e.stdout, "  in the folder:   %s\n", shellJoin([]string{r.Cwd}))
	if r.Launch != nil {
		fmt.Fprintf(e.stdout, "  which execs:     %s\n", shellJoin(r.Launch.Argv()))
		if r.Launch.PathFirst != "" {
			fmt.Fprintf(e.stdout, "  with PATH:       %s first, then the host's PATH\n", shellJoin([]string{r.Launch.PathFirst}))
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

// plainWord says whether w needs no quoting in sh.
func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
			return false
		}
	}
	return true
}

// shellJoin writes argv as a shell would need it: plain words bare, the
// rest single-quoted.
func shellJoin(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		if plainWord(w) {
			words[i] = w
		} else {
			words[i] = wrap.Quote(w)
		}
	}
	return sanitize(strings.Join(words, " "))
}
