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
		ArgsUsage: "[--open] [--watch] [--tapes DIR] [-- COMMAND [ARGS…]]",
		Description: "Starts the plugin in the current folder (from its agentty-plugin.json, or the\n" +
			"COMMAND given) under the recorder, and serves a page on 127.0.0.1 (a free\n" +
			"port, a random token in the URL) that is the host: the panel as Agentty draws\n" +
			"it, live, with its toasts and badge; clicks, typing and choices sent as the\n" +
			"host sends them; panel/open and close, context/changed, commands, url/open,\n" +
			"shutdown and restart at hand; the plugin's requests answered as the host\n" +
			"answers them (editable); the timeline with check's findings. \"Keep it\"\n" +
			"writes NAME.host.jsonl (a host script) and NAME.jsonl (the golden tape) into\n" +
			"the tapes folder, for tapedeck test. Ctrl-C ends it. It drives Agentty\n" +
			"plugins only: without a manifest, a command that runs an MCP or a language\n" +
			"server is refused (exit 2) with the host script that drives it instead\n" +
			"(tapedeck record --host SCRIPT --profile mcp -- SERVER).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "open", Usage: "open the page in the browser ($BROWSER, else xdg-open or open)"},
			&cli.BoolFlag{Name: "watch", Usage: "when the plugin's files change, start it again, play the actions so far and show what changed"},
			&cli.StringFlag{Name: "tapes", Value: "tapes", Usage: "where \"Keep it\" writes, from the plugin's folder (`DIR`)"},
			&cli.StringFlag{Name: "name", Usage: "name the sessions `NAME`-1, NAME-2, … (default play-PLUGIN)"},
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
		Command:  c.Args().Slice(),
		Env:      e.environ,
		StoreDir: c.String("store"),
		Name:     c.String("name"),
		TapesDir: c.String("tapes"),
		Watch:    c.Bool("watch"),
		Log:      e.stderr,
		Version:  version(),
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
