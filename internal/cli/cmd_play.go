package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/playground"
)

func (e *env) playCommand() *cli.Command {
	return &cli.Command{
		Name:      "play",
		Usage:     "be Agentty in a browser: click through the plugin's panel and keep the session as a golden tape",
		ArgsUsage: "[--open] [--watch] [--tapes DIR] [--fresh-dir NAME]… [--pin-clock=false] [-- COMMAND [ARGS…]]",
		Description: "Starts the plugin in the current folder (from its agentty-plugin.json, or the\n" +
			"COMMAND given) under the recorder, and serves a page on 127.0.0.1 (a free\n" +
			"port, a random token in the URL) that is the host: the panel as Agentty draws\n" +
			"it, live, with its toasts and badge; clicks, typing and choices sent as the\n" +
			"host sends them; panel/open and close, context/changed, commands, url/open,\n" +
			"shutdown and restart at hand; the plugin's requests answered as the host\n" +
			"answers them (editable); the timeline with check's findings. \"Keep it\"\n" +
			"writes NAME.host.jsonl (a host script), NAME.jsonl (the golden tape) and\n" +
			"NAME.data/ (the plugin's data folder, and each --fresh-dir folder, as the\n" +
			"session started) into the tapes folder, for tapedeck test: every replay\n" +
			"starts from a copy of them. The plugin runs with its clock pinned and its\n" +
			"random numbers seeded (Node and Python), so that the tape passes at once. In\n" +
			"a folder tapedeck wrap wrapped, the plugin's own command runs, not the\n" +
			"launcher. It drives Agentty plugins only: without a manifest, a command that\n" +
			"runs an MCP or a language server is refused (exit 2) with the host script\n" +
			"that drives it instead (tapedeck record --host SCRIPT --profile mcp -- SERVER).\n" +
			"Ctrl-C ends it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "open", Usage: "open the page in the browser ($BROWSER, else xdg-open or open)"},
			&cli.BoolFlag{Name: "watch", Usage: "when the plugin's files change, start it again, play the actions so far and show what changed"},
			&cli.StringFlag{Name: "tapes", Value: "tapes", Usage: "where \"Keep it\" writes, from the plugin's folder (`DIR`)"},
			&cli.StringFlag{Name: "name", Usage: "name the sessions `NAME`-1, NAME-2, … (default play-PLUGIN)"},
			&cli.StringSliceFlag{Name: "fresh-dir", Usage: "the plugin reads a folder of its state from the variable `NAME` (say MYPLUGIN_HOME): give it a copy of that folder (empty when NAME is not set) that \"Keep it\" carries beside the tape, so that no session writes the real one and every replay starts where the session did (repeatable)"},
			&cli.BoolFlag{Name: "pin-clock", Value: true, Usage: "pin the plugin's clock and seed its random numbers, as a golden tape needs (--pin-clock=false: the real clock)"},
		},
		Action: e.play,
	}
}

// play serves the playground until Ctrl-C (or the page's Quit).
func (e *env) play(c *cli.Context) error {
	why, err := playRefusal(".", c.Args().Slice())
	if err != nil {
		return fail(2, "play: %v", err)
	}
	if why != "" {
		return fail(2, "play: %s", why)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	opt := &playground.Options{
		Command:   c.Args().Slice(),
		Env:       e.environ,
		StoreDir:  c.String("store"),
		Name:      c.String("name"),
		TapesDir:  c.String("tapes"),
		Watch:     c.Bool("watch"),
		PinClock:  c.Bool("pin-clock"),
		FreshDirs: c.StringSlice("fresh-dir"),
		Log:       e.stderr,
		Version:   version(),
		Ready: func(url string) {
			fmt.Fprintf(e.stdout, "tapedeck play: the plugin's panel is at %s\n", url)
			fmt.Fprintln(e.stdout, "(this machine only; \"Keep it\" writes the session into the tapes folder; Ctrl-C ends the playground)")
		},
	}
	if c.Bool("open") {
		opt.Browser = playground.BrowserCommand(e.getenv)
	}
	if err := playground.Run(ctx, opt); err != nil {
		return fail(2, "play: %v", err)
	}
	return nil
}
