package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/filter"
	"github.com/tapedeck/tapedeck/internal/noise"
	"github.com/tapedeck/tapedeck/internal/pending"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

func (e *env) replayCommand() *cli.Command {
	v := &replayValues{}
	return &cli.Command{
		Name:      "replay",
		Usage:     "play the host to a plugin and diff what it says against the recording",
		ArgsUsage: "SESSION|TAPE… [-- COMMAND [ARGS…]]",
		Description: "Sends the recorded host frames, answers the plugin's own requests from the\n" +
			"recording, and compares the plugin's output with what it said then.\n" +
			"Each host frame waits until the plugin has said again what it said before\n" +
			"that frame in the recording (replies by id, requests and notifications by\n" +
			"method and count), up to 10 × as long as it took in the recording (at least\n" +
			"--min-wait, at most --step-timeout); a plugin that exited ends every wait.\n" +
			"The command after -- replaces the recorded one and runs in the current\n" +
			"folder (or --cwd). Several recordings are replayed one after the other.\n" +
			"--update writes a tape's change beside it as NAME.jsonl.new for\n" +
			"tapedeck review (a session's live run is stored as a new session).\n" +
			"--runs N replays N times, the runs after the first -j at a time, and\n" +
			"proposes ignore rules and filters for what differed between them.\n" +
			"Exit status: 0 same, 1 differs, 2 could not run.",
		Flags: append(v.flags(),
			v.cwdFlag("working directory for the plugin"),
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.BoolFlag{Name: "update", Usage: "write each tape's live run beside it as NAME.jsonl.new, for tapedeck review (a session's, as a new session)"},
			&cli.BoolFlag{Name: "force", Usage: "allow --update when CI is set"},
			&cli.IntFlag{Name: "runs", Value: 1, Usage: "replay `N` times and propose ignore rules for what differs between runs"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runsAtOnce(), DefaultText: fmt.Sprintf("%d, one more than the CPUs", runsAtOnce()), Usage: "with --runs: run `N` replays at once"},
			&cli.BoolFlag{Name: "write-config", Usage: "with --runs: add the proposed rules and filters to tapedeck.json"},
			&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML report of the replay to `FILE`"},
		),
		BashComplete: e.complete(completeSessions),
		Action:       func(c *cli.Context) error { return e.replay(c, v) },
	}
}

// replayRun is what one replay command does to each recording it names.
type replayRun struct {
	opts        *playback.Options
	runs        int
	jobs        int // with runs: replays at once
	html        string
	json        bool
	writeConfig bool
	update      bool
	verbose     bool // -v: every note, not the grouped lines
	open        func() (*store.Store, error)
}

func (e *env) replay(c *cli.Context, v *replayValues) error {
	refs, argv := splitCommand(c.Args().Slice())
	if len(refs) == 0 {
		return fail(2, "replay needs a SESSION or TAPE: tapedeck replay SESSION|TAPE… [-- COMMAND [ARGS…]]")
	}
	if len(refs) > 1 {
		for _, name := range []string{"json", "html", "runs", "jobs", "write-config"} {
			if c.IsSet(name) {
				return fail(2, "replay --%s takes one recording, not %d (tapedeck test replays many and has --json, --html and --junit)", name, len(refs))
			}
		}
	}
	opts, err := v.options(argv, e.environ, c.String("store"), e.redactKey(), e.stderr, true)
	if err != nil {
		return fail(2, "%v", err)
	}
	if c.Bool("update") && e.getenv("CI") != "" && !c.Bool("force") {
		return fail(2, "refusing --update while CI is set: golden tapes change only on purpose (add --force to override)")
	}
	open := func() (*store.Store, error) { return e.openStore(c.String("store")) }
	recs := make([]*playback.Recording, len(refs))
	for i, ref := range refs {
		recs[i], err = playback.Load(ref, &playback.LoadOptions{Store: open})
		if _, statErr := os.Stat(ref); err != nil && i > 0 && statErr != nil {
			return fail(2, "replay: %q is neither a tape file nor a session; a command to run instead of the recorded one goes after --: tapedeck replay SESSION|TAPE -- COMMAND [ARGS…]", ref)
		}
		if err != nil {
			return fail(2, "%v", err)
		}
	}
	run := &replayRun{opts: opts, runs: max(c.Int("runs"), 1), jobs: max(c.Int("jobs"), 1), html: c.String("html"), json: c.Bool("json"),
		writeConfig: c.Bool("write-config"), update: c.Bool("update"), verbose: v.verbose, open: open}
	defer e.limitMemory(replaysHold(recs, run.runs, run.jobs))()
	// One recording after the other, each reported as if alone; the exit
	// status is the worst of them.
	code := 0
	var pending []string
	for _, rec := range recs {
		wrote, status := e.replayOne(c.Context, rec, run)
		code = max(code, status)
		if wrote != "" {
			pending = append(pending, rec.TapePath)
		}
	}
	if len(pending) > 0 {
		fmt.Fprintln(e.stderr, pendingHint(len(pending), pending))
	}
	return &exitError{code: code}
}

// replayOne replays one recording and reports it; it returns the pending
// file it wrote (with --update) and its exit status, having said why on
// stderr when it could not run.
func (e *env) replayOne(ctx context.Context, rec *playback.Recording, run *replayRun) (string, int) {
	say := func(code int, format string, args ...any) (string, int) {
		fmt.Fprintf(e.stderr, "tapedeck: "+format+"\n", args...)
		return "", code
	}
	o := playback.Replay(ctx, rec, run.opts)
	if o.Err != nil {
		return say(2, "replay %s: %v", rec.Name, o.Err)
	}
	if run.html != "" {
		if err := present.ReplayHTML(run.html, o); err != nil {
			return say(2, "replay %s: %v", rec.Name, err)
		}
		fmt.Fprintf(e.stderr, "tapedeck: wrote %s\n", escape.Text(run.html))
	}
	var nr *noise.Report
	if run.runs > 1 {
		var err error
		if nr, err = noise.Find(ctx, o, run.opts, run.runs, run.jobs); err != nil {
			return say(2, "%v", err)
		}
	}
	if run.json {
		if err := present.OutcomeJSON(e.stdout, o, nr); err != nil {
			return say(1, "%v", err)
		}
	} else {
		present.OutcomeWith(e.stdout, o, present.OutcomeOptions{Verbose: run.verbose})
		if nr != nil {
			present.Noise(e.stdout, nr)
		}
	}
	if run.writeConfig && nr != nil && len(nr.Rules)+len(nr.Filters) > 0 {
		if err := filter.AddToConfig(o.ConfigPath, nr.Rules, nr.Filters); err != nil {
			return say(1, "%v", err)
		}
		fmt.Fprintf(e.stderr, "tapedeck: added %s to %s\n", present.Proposals(nr), o.ConfigPath)
	}
	if run.update {
		return e.update(o, run.open)
	}
	if !o.Same() {
		return "", 1
	}
	return "", 0
}

// update makes the live run the golden, to be reviewed (pending.Update)
// and says what it wrote.
func (e *env) update(o *playback.Outcome, open func() (*store.Store, error)) (string, int) {
	u, err := pending.Update(o, open)
	switch {
	case err != nil:
		fmt.Fprintf(e.stderr, "tapedeck: update %s: %v\n", o.Recording.Name, err)
		return "", 2
	case u.Stored != nil:
		fmt.Fprintf(e.stderr, "tapedeck: stored the live run as session %s\n", u.Stored.ID)
	case u.Pending != "":
		fmt.Fprintf(e.stderr, "tapedeck: wrote %s (%s)\n", escape.Text(u.Pending), present.CountDifferences(o.Diff))
	case o.Run.TimedOut:
		fmt.Fprintf(e.stderr, "tapedeck: %s timed out: a killed plugin's run is no golden; nothing to update\n", o.Recording.Name)
	default:
		fmt.Fprintf(e.stderr, "tapedeck: %s has no difference: nothing to update\n", o.Recording.Name)
	}
	return u.Pending, 0
}

// splitCommand splits arguments at "--": what comes before, and the
// command after it.
func splitCommand(args []string) (before, argv []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}
