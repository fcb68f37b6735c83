package cli

// One replay, compared: the flags replay, test and shrink share, their
// settings, and the run itself.

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/cli/internal/escape"
	"github.com/tapedeck/tapedeck/clock"
	"github.com/tapedeck/tapedeck/diff"
	"github.com/tapedeck/tapedeck/fingerprint"
	"github.com/tapedeck/tapedeck/replay"
	"github.com/urfave/cli/v2"
)

// replayFlags are shared by replay, test and shrink: how to compare, then
// how to run the plugin.
func replayFlags() []cli.Flag {
	return append(compareFlags("the tape"),
		&cli.DurationFlag{Name: "step-timeout", Value: 30 * time.Second, Usage: "longest wait for a frame the plugin said before a host frame in the recording; a frame that never comes costs this once"},
		&cli.DurationFlag{Name: "timeout", Value: 3 * time.Minute, Usage: "longest a whole replay may take; past it the plugin is killed and the replay fails"},
		&cli.DurationFlag{Name: "quiet", Usage: "also wait, before each host frame, until the plugin has said nothing for this long (default off: frames are waited for, never silence)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say what runs: the command, its folder and the variables added"},
		&cli.StringFlag{Name: "pace", Value: "asap", Usage: "asap, realtime, or xN (the recorded gaps divided by N)"},
		&cli.DurationFlag{Name: "max-gap", Value: 2 * time.Second, Usage: "clamp each paced gap to this"},
		&cli.BoolFlag{Name: "pin-clock", Usage: "pin the plugin's clock as recorded (the default when the tape was recorded with --pin-clock); --pin-clock=false runs it on the real clock; on a tape recorded without it, pins the clock to the recorded start"},
	)
}

// outcome is one replay, compared.
type outcome struct {
	src     *source
	run     *replay.Result
	diff    diff.Result
	notes   []string
	cfgPath string
	dopts   diff.Options // how it was compared
	err     error        // could not run
	// against is what src was compared with when nothing ran (tapedeck
	// diff A B); run is nil then.
	against *source
	// drift is what changed in the plugin's surroundings since the
	// recording, taken when the replay differs (or with -v).
	drift *fingerprint.Drift
}

func (o *outcome) same() bool {
	return o.err == nil && o.diff.Same() && (o.run == nil || !o.run.TimedOut)
}

// replaySettings are the knobs of one replay, read from flags.
type replaySettings struct {
	opts    replay.Options
	diff    diff.Options
	ignores []string
	argv    []string
	cwd     string
	verbose io.Writer // -v: where to say what runs; nil says nothing
	key     keySource // the redaction key of this machine, for redacted tapes
	// pinSet and pin are --pin-clock: whether it was given, and its value.
	pinSet, pin bool
}

func settingsFrom(c *cli.Context, argv []string) (*replaySettings, error) {
	pace, err := parsePace(c.String("pace"))
	if err != nil {
		return nil, err
	}
	s := &replaySettings{
		opts: replay.Options{
			StepTimeout: c.Duration("step-timeout"),
			Timeout:     c.Duration("timeout"),
			Quiet:       c.Duration("quiet"),
			Pace:        pace,
			MaxGap:      c.Duration("max-gap"),
		},
		diff:    diff.Options{Strict: c.Bool("strict"), CompareStderr: c.Bool("compare-stderr")},
		ignores: c.StringSlice("ignore"),
		argv:    argv,
	}
	if c.IsSet("cwd") {
		s.cwd = c.String("cwd")
	}
	s.key = keySource{storeDir: c.String("store")}
	s.pinSet, s.pin = c.IsSet("pin-clock"), c.Bool("pin-clock")
	return s, nil
}

func parsePace(s string) (float64, error) {
	switch s {
	case "asap", "":
		return 0, nil
	case "realtime":
		return 1, nil
	}
	if strings.HasPrefix(s, "x") {
		if n, err := strconv.ParseFloat(s[1:], 64); err == nil && n > 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("--pace %q: want asap, realtime or xN (for example x10)", s)
}

// replayOnce replays src and compares.
func replayOnce(c *cli.Context, src *source, s *replaySettings) *outcome {
	o := &outcome{src: src}
	cfg := &config{}
	if src.tapePath != "" {
		o.cfgPath = filepath.Join(filepath.Dir(src.tapePath), configName)
		var err error
		if cfg, err = readConfig(o.cfgPath); err != nil {
			o.err = err
			return o
		}
	}
	rules, err := ignoreRules(s.ignores, cfg, o.cfgPath)
	if err != nil {
		o.err = err
		return o
	}
	cmd, dir, notes, err := src.command(s.argv, s.cwd)
	if err != nil {
		o.err = err
		return o
	}
	o.notes = notes
	env, added, ignored := src.env()
	if len(ignored) > 0 {
		o.notes = append(o.notes, fmt.Sprintf("the recording's environment also sets %s: not applied (a replay adds only AGENTTY_* variables)", strings.Join(ignored, ", ")))
	}
	clk := replayClock(src.meta, s.pinSet, s.pin)
	env, preload, err := pinClock(env, clk)
	if err != nil {
		o.err = fmt.Errorf("%s: %w", src.name, err)
		return o
	}
	if preload != nil {
		defer preload.Close()
	}
	if s.verbose != nil {
		fmt.Fprintf(s.verbose, "tapedeck: %s: runs %s\n  in      %s\n  adding  %s\n",
			escape.Text(src.name), escape.Text(shellQuote(cmd)), escape.Text(dir), escape.Text(orNone(strings.Join(added, " "))))
		if clk != nil {
			fmt.Fprintf(s.verbose, "  clock   %s (NODE_OPTIONS --require, PYTHONPATH sitecustomize)\n", clock.Describe(clk))
		}
	}
	red, mask, err := s.key.redactor(src.meta.Redaction)
	if err != nil {
		o.err = fmt.Errorf("%s: %w", src.name, err)
		return o
	}
	opts := s.opts
	opts.Command, opts.Dir, opts.Env = cmd, dir, env
	o.run, err = replay.Run(c.Context, src.frames, opts)
	if err != nil {
		o.err = err
		return o
	}
	if red != nil {
		redactLive(red, o.run.Live)
	}
	dopts := s.diff
	dopts.Ignore = ignoreFunc(rules)
	dopts.Mask = mask
	pairs := o.run.Pairs
	dopts.Pair = func(seq uint64) (uint64, bool) { r, ok := pairs[seq]; return r, ok }
	o.diff = diff.Frames(src.frames, o.run.Live, dopts)
	o.dopts = dopts
	if src.meta.Fingerprint != nil && (!o.same() || s.verbose != nil) {
		live, err := fingerprint.Take(c.Context, fingerprint.Options{Command: cmd, Dir: dir, Env: env})
		if err == nil {
			o.drift = fingerprint.Compare(src.meta.Fingerprint, live)
		}
	}
	return o
}
