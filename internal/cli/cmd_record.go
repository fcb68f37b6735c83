package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/capture"
	"github.com/tapedeck/tapedeck/internal/filter"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/internal/wire"
)

func (e *env) recordCommand() *cli.Command {
	red := &redactValues{}
	redFlags := red.flags()
	return &cli.Command{
		Name:      "record",
		Usage:     "run a plugin and record everything it says and hears",
		ArgsUsage: "[--name N] [--tag k=v]… [--host SCRIPT] -- COMMAND [ARGS…]",
		Description: "A transparent shim: stdin, stdout and stderr pass through byte for byte,\n" +
			"every line is stored with its time, and the plugin's exit status is ours.\n" +
			"Nothing but the plugin's own output ever reaches stdout.\n" +
			"With --host SCRIPT, tapedeck plays the host from a script instead (each\n" +
			"line sent once the plugin has said what the line waits for) and the\n" +
			"session is recorded as it happens; stdout stays empty.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "a name for the session"},
			&cli.StringSliceFlag{Name: "tag", Usage: "a `key=value` tag (repeatable)"},
			&cli.IntFlag{Name: "max-frame", Value: capture.DefaultMaxLine, Usage: "store at most this many `bytes` of a line; longer lines pass whole and are stored cut"},
			&cli.BoolFlag{Name: "no-record", EnvVars: []string{"TAPEDECK_NO_RECORD"}, Usage: "relay only: record nothing and leave the store alone (to measure what recording costs, or to run a wrapped plugin unrecorded)"},
			redFlags[0],
			redFlags[1],
			&cli.StringFlag{Name: "lint", Usage: "check the traffic as it happens and append findings to `FILE` (JSON lines); they are stored with the session too"},
			&cli.StringFlag{Name: "host", Usage: "play the host from `SCRIPT` (JSON lines of host frames; see the README) instead of stdin and stdout"},
			&cli.DurationFlag{Name: "step-timeout", Value: 30 * time.Second, Usage: "with --host: longest wait for what a script line waits for"},
			&cli.BoolFlag{Name: "pin-clock", Usage: "start a Node or Python plugin with its wall clock pinned to the session's start plus the real elapsed time and its random numbers seeded; replays pin it the same way"},
			&cli.BoolFlag{Name: "pin-children", Usage: "with --pin-clock: pin the plugin's own child processes too (by default only the plugin's process is pinned)"},
			&cli.BoolFlag{Name: "no-fingerprint", Usage: "do not store the environment fingerprint (OS, interpreter, manifest, SHA-256 of the plugin's files)"},
			&cli.StringFlag{Name: "profile", Usage: "the host the session belongs to: " + strings.Join(profile.Names(), ", ") + " (default: found from the host's first request)"},
			&cli.StringFlag{Name: "framing", Usage: "how stdin and stdout are framed: lines or headers (Content-Length, as language servers speak; default: found from the first bytes, or the profile's)"},
			&cli.StringSliceFlag{Name: "env", Usage: "keep environment variable `NAME` with the session; a replay sets it again (repeatable; the \"env\" list of tapedeck.json in the current folder is kept too)"},
		},
		Action: func(c *cli.Context) error { return e.record(c, red) },
	}
}

// record runs the plugin through capture.Run and exits with its status
// (the plugin's, or 127/126 with one line when it could not start).
func (e *env) record(c *cli.Context, red *redactValues) error {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return fail(2, "record: no command given: tapedeck record -- COMMAND [ARGS…]")
	}
	// The variables to keep: --env's, and those the tapedeck.json of the
	// folder it runs in lists (where the tapes and their rules are kept).
	keepEnv := c.StringSlice("env")
	if more, err := filter.ConfigEnv("."); err != nil {
		return fail(2, "record: %v", err)
	} else {
		keepEnv = append(keepEnv, more...)
	}
	opt := &capture.Options{
		Command:       argv,
		Name:          c.String("name"),
		StoreDir:      c.String("store"),
		NoRecord:      c.Bool("no-record"),
		MaxLine:       c.Int("max-frame"),
		Lint:          c.String("lint"),
		StepTimeout:   c.Duration("step-timeout"),
		PinClock:      c.Bool("pin-clock") || c.Bool("pin-children"),
		PinChildren:   c.Bool("pin-children"),
		NoFingerprint: c.Bool("no-fingerprint"),
		Env:           e.environ,
		Profile:       c.String("profile"),
		Framing:       c.String("framing"),
		KeepEnv:       keepEnv,
		Stdin:         e.stdin,
		Stdout:        e.stdout,
		Stderr:        e.stderr,
		Log:           e.stderr,
		Version:       version(),
	}
	if opt.Profile != "" {
		if _, err := profile.Get(opt.Profile); err != nil {
			return fail(2, "record: --profile: %v", err)
		}
	}
	if _, err := wire.Parse(opt.Framing); err != nil {
		return fail(2, "record: --framing: %v", err)
	}
	if path := c.String("host"); path != "" {
		var err error
		if opt.Host, err = capture.ReadHostScript(path); err != nil {
			return fail(2, "record: %v", err)
		}
	}
	for _, t := range c.StringSlice("tag") {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			return fail(2, "record: --tag %q is not key=value", t)
		}
		if opt.Tags == nil {
			opt.Tags = map[string]string{}
		}
		opt.Tags[k] = v
	}
	// Bad redaction flags are refused before the plugin starts; relay-only
	// mode stores nothing and reads none.
	if !opt.NoRecord {
		var err error
		if opt.Redact, err = red.config("record", false); err != nil {
			return err
		}
		opt.RedactKey = e.redactKey()
	}
	res, err := capture.Run(c.Context, opt)
	if err != nil {
		return fail(2, "record: %v", err)
	}
	if res.StartFailure != "" {
		return fail(res.Code, "%s", res.StartFailure)
	}
	if res.Recorded && screen.IsTerminal(e.stderr) {
		e.recordedNews(opt.StoreDir, res.Session)
	}
	if opt.Host != nil && opt.Host.Failure() != "" {
		return fail(max(res.Code, 1), "record --host: %s", opt.Host.Failure())
	}
	return &exitError{code: res.Code}
}

// recordedNews is the one line a person at a terminal reads once a
// session is recorded: which, how many frames, which store (stdout is the
// plugin's alone).
func (e *env) recordedNews(storeDir, id string) {
	// Ready takes the spool in, as the next command would.
	st, warning, err := store.Ready(storeDir, &store.Options{MustExist: true})
	if err != nil || errors.Is(warning, store.ErrEmpty) {
		return // a damaged or empty database: record has said so, and nothing goes into it
	}
	if meta, err := st.Session(id); err == nil && meta != nil {
		fmt.Fprintln(e.stderr, present.RecordedLine(meta, storeDir))
	}
}
