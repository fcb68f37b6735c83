package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/check"
	"github.com/tapedeck/tapedeck/clock"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/proxy"
	"github.com/tapedeck/tapedeck/recorder"
	"github.com/tapedeck/tapedeck/redact"
	"github.com/tapedeck/tapedeck/replay"
	"github.com/tapedeck/tapedeck/store"
)

// ingestWait bounds how long a finished shim waits for the database; past
// it the spool stays and the next tapedeck command ingests it.
const ingestWait = time.Second

// ingestInlineMax is the largest spool a finishing shim ingests itself
// (about a quarter of a second of work); larger ones wait for the next
// command.
const ingestInlineMax = 32 << 20

func (e *env) recordCommand() *cli.Command {
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
			&cli.IntFlag{Name: "max-frame", Value: recorder.DefaultMaxLine, Usage: "store at most this many `bytes` of a line; longer lines pass whole and are stored cut"},
			&cli.BoolFlag{Name: "no-record", EnvVars: []string{"TAPEDECK_NO_RECORD"}, Usage: "relay only: record nothing and leave the store alone (to measure what recording costs, or to run a wrapped plugin unrecorded)"},
			redactFlags()[0],
			redactFlags()[1],
			&cli.StringFlag{Name: "lint", Usage: "check the traffic as it happens and append findings to `FILE` (JSON lines); they are stored with the session too"},
			&cli.StringFlag{Name: "host", Usage: "play the host from `SCRIPT` (JSON lines of host frames; see the README) instead of stdin and stdout"},
			&cli.DurationFlag{Name: "step-timeout", Value: 30 * time.Second, Usage: "with --host: longest wait for what a script line waits for"},
			&cli.BoolFlag{Name: "pin-clock", Usage: "start a Node or Python plugin with its wall clock pinned to the session's start plus the real elapsed time and its random numbers seeded; replays pin it the same way"},
			&cli.BoolFlag{Name: "no-fingerprint", Usage: "do not store the environment fingerprint (OS, interpreter, manifest, SHA-256 of the plugin's files)"},
		},
		Action: e.record,
	}
}

func (e *env) record(c *cli.Context) error {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return fail(2, "record: no command given: tapedeck record -- COMMAND [ARGS…]")
	}
	var script *replay.Script
	if path := c.String("host"); path != "" {
		var err error
		if script, err = readScript(path); err != nil {
			return fail(2, "record: %v", err)
		}
	}
	tags := map[string]string{}
	for _, t := range c.StringSlice("tag") {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			return fail(2, "record: --tag %q is not key=value", t)
		}
		tags[k] = v
	}
	cwd, _ := os.Getwd()
	started := time.Now()
	meta := &frame.Session{
		ID:       frame.NewID(started),
		Name:     c.String("name"),
		Command:  argv,
		Cwd:      cwd,
		Env:      agenttyEnv(),
		Started:  started,
		Status:   frame.StatusRecording,
		Tapedeck: version(),
	}
	if len(tags) > 0 {
		meta.Tags = tags
	}
	// The pinned clock changes only the plugin's environment, never a byte
	// relayed.
	var env []string
	if c.Bool("pin-clock") {
		pin := clock.New(started)
		e2, preload, err := pinClock(nil, &pin)
		if err != nil {
			fmt.Fprintf(e.stderr, "tapedeck: --pin-clock: %v; the plugin runs with the real clock\n", err)
		} else {
			defer preload.Close()
			env, meta.Clock = e2, &pin
		}
	}

	// Signals for the child (and from a host script's grace periods);
	// SIGPIPE and SIGXFSZ are caught (not ignored,
	// which the child would inherit) so that a closed stdout or a file size
	// limit turns into an error we handle instead of killing the shim.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	quiet := make(chan os.Signal, 1)
	signal.Notify(quiet, syscall.SIGPIPE, syscall.SIGXFSZ)
	defer signal.Stop(sigs)
	defer signal.Stop(quiet)

	if c.Bool("no-record") {
		return e.relayOnly(c, argv, env, script, sigs)
	}

	// Redaction keeps values out of the store; what is forwarded is never
	// changed. Bad rules are refused before the plugin starts; a store that
	// cannot give the placeholder key (read-only, full, not ours) is a
	// recording problem: the plugin runs, and nothing is recorded, so that
	// nothing is kept unredacted.
	redCfg, err := redactConfig(c, "record", false)
	if err != nil {
		return err
	}
	var rec *recorder.Recorder
	var red *redact.Redactor
	st, err := store.Open(c.String("store"), nil)
	if err == nil && wantsRedaction(redCfg) {
		if red, err = newRedactor(redCfg, st); err != nil {
			err = fmt.Errorf("--redact needs the store's redaction key: %w", err)
		} else {
			red.Session(meta) // the header is stored too: name, tags, command, environment
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tapedeck: cannot record (%v); the plugin runs unrecorded\n", err)
	} else {
		if red != nil {
			meta.Redaction = red.Description()
		}
		rec, _ = recorder.Start(st.SpoolPath(meta.ID), meta, e.stderr)
		rec.SetMaxLine(c.Int("max-frame"))
		if red != nil {
			rec.SetBeforeSave(red.Line)
		}
	}
	// Live checking never writes to the plugin's stderr: that is the host's
	// log, and its lines count toward the host's rate limit.
	var lint *check.Lint
	if path := c.String("lint"); path != "" && rec != nil {
		var lerr error
		if lint, lerr = check.OpenLint(path, meta.ID, check.OptionsFor(cwd)); lerr != nil {
			fmt.Fprintf(e.stderr, "tapedeck: --lint: %v; recording without it\n", lerr)
		} else {
			rec.SetObserver(lint.Frame)
		}
	}
	var sink proxy.Sink
	var fp *fingerprinter
	if rec != nil {
		sink = rec
		if !c.Bool("no-fingerprint") {
			fp = startFingerprint(c.Context, argv, cwd, env)
			sink = fp.sink(rec)
		}
	}

	relay := proxy.Config{
		Command: argv,
		Env:     env,
		Stdin:   e.stdin,
		Stdout:  e.stdout,
		Stderr:  e.stderr,
		Sink:    sink,
		Signals: sigs,
	}
	res, runErr := e.runRelay(c, script, relay, sigs)

	end := frame.End{Ended: time.Now(), Status: frame.StatusComplete}
	code, msg := startFailure(argv[0], runErr)
	switch {
	case runErr != nil:
	case res.Signal != 0:
		code = res.Code
		end.Exit.Signal = frame.SignalName(int(res.Signal))
	default:
		code = res.Code
		c := res.Code
		end.Exit.Code = &c
	}
	if runErr != nil {
		end.Status, end.Error = frame.StatusFailedToStart, msg
	}
	if lint != nil {
		if err := lint.Close(); err != nil {
			fmt.Fprintf(e.stderr, "tapedeck: --lint: %v\n", err)
		}
	}
	if fp != nil {
		end.Fingerprint = fp.wait()
	}
	if rec != nil && rec.Spool() != nil {
		w := rec.Spool()
		if lint != nil {
			if js, err := json.Marshal(sessionNotes{Findings: lint.Findings()}); err == nil {
				rec.Notes(js)
			}
		}
		end.Lost = rec.Lost()
		// A finished spool is complete on its own: a large one is left for
		// the next tapedeck command to ingest, so that the host sees the
		// plugin's exit at once. One whose end record could not be written
		// is ingested now, with the end handed over in memory.
		finished := rec.Finish(end) == nil
		if !finished || w.Size() <= ingestInlineMax {
			err := st.Ingest(w.Path(), ingestWait, &end)
			switch {
			case err == nil, errors.Is(err, store.ErrBusy):
			case errors.Is(err, store.ErrSpoolDamaged):
				fmt.Fprintf(e.stderr, "tapedeck: %v\n", err)
			case rec.Warned():
				// The line that said recording failed named the session;
				// the same cause (a full disk) keeps the store from taking
				// it now, and the next command will.
			default:
				fmt.Fprintf(e.stderr, "tapedeck: session %s stays in %s until the store can take it: %v\n", meta.ID, w.Path(), err)
			}
		}
		w.Close()
	}
	if msg != "" {
		return fail(code, "%s", msg)
	}
	return &exitError{code: code}
}

// relayOnly runs the plugin through the relay with nothing recorded: the
// store is not opened, no spool is made. It exists to measure what
// recording costs (bench/run.sh) and to run a wrapped plugin unrecorded.
func (e *env) relayOnly(c *cli.Context, argv, env []string, script *replay.Script, sigs chan os.Signal) error {
	res, err := e.runRelay(c, script, proxy.Config{
		Command: argv,
		Env:     env,
		Stdin:   e.stdin,
		Stdout:  e.stdout,
		Stderr:  e.stderr,
		Signals: sigs,
	}, sigs)
	if code, msg := startFailure(argv[0], err); err != nil {
		return fail(code, "%s", msg)
	}
	return &exitError{code: res.Code}
}

// runRelay runs the relay of cfg, with the host script on its host side
// when there is one.
func (e *env) runRelay(c *cli.Context, script *replay.Script, cfg proxy.Config, sigs chan os.Signal) (proxy.Result, error) {
	if script != nil {
		return e.playHost(c, script, cfg, sigs)
	}
	return proxy.Run(c.Context, cfg)
}

// startFailure maps proxy.Run's error to the shim's exit code and its one
// line, as a shell does: 127 not found, 126 not executable (or another
// reason it could not start). A nil error gives 0 and "".
func startFailure(name string, err error) (code int, msg string) {
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, proxy.ErrNotFound):
		return 127, fmt.Sprintf("%s: command not found", name)
	case errors.Is(err, proxy.ErrNotExecutable):
		return 126, fmt.Sprintf("%s: permission denied (not executable)", name)
	}
	return 126, err.Error()
}

// agenttyEnv collects the AGENTTY_* variables the host set.
func agenttyEnv() map[string]string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "AGENTTY_") {
			m[k] = v
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
