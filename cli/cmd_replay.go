package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/cli/internal/escape"
	"github.com/tapedeck/tapedeck/diff"
	"github.com/tapedeck/tapedeck/frame"
)

func (e *env) replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "play the host to a plugin and diff what it says against the recording",
		ArgsUsage: "SESSION|TAPE… [-- COMMAND [ARGS…]]",
		Description: "Sends the recorded host frames, answers the plugin's own requests from the\n" +
			"recording, and compares the plugin's output with what it said then.\n" +
			"Each host frame waits until the plugin has said again what it said before\n" +
			"that frame in the recording (replies by id, requests and notifications by\n" +
			"method and count), however long it takes, up to --step-timeout.\n" +
			"The command after -- replaces the recorded one and runs in the current\n" +
			"folder (or --cwd). Several recordings are replayed one after the other.\n" +
			"--update writes a tape's change beside it as NAME.jsonl.new for\n" +
			"tapedeck review (a session's live run is stored as a new session).\n" +
			"Exit status: 0 same, 1 differs, 2 could not run.",
		Flags: append(replayFlags(),
			&cli.StringFlag{Name: "cwd", Usage: "working directory for the plugin"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.BoolFlag{Name: "update", Usage: "write each tape's live run beside it as NAME.jsonl.new, for tapedeck review (a session's, as a new session)"},
			&cli.BoolFlag{Name: "force", Usage: "allow --update when CI is set"},
			&cli.IntFlag{Name: "runs", Value: 1, Usage: "replay `N` times and propose ignore rules for what differs between runs"},
			&cli.BoolFlag{Name: "write-config", Usage: "with --runs: add the proposed rules to tapedeck.json"},
			&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML report of the replay to `FILE`"},
		),
		BashComplete: e.complete(completeSessions),
		Action:       e.replay,
	}
}

func (e *env) replay(c *cli.Context) error {
	args := c.Args().Slice()
	refs, argv := args, []string(nil)
	for i, a := range args {
		if a == "--" {
			refs, argv = args[:i], args[i+1:]
			break
		}
	}
	if len(refs) == 0 {
		return fail(2, "replay needs a SESSION or TAPE: tapedeck replay SESSION|TAPE… [-- COMMAND [ARGS…]]")
	}
	if len(refs) > 1 {
		for _, name := range []string{"json", "html", "runs", "write-config"} {
			if c.IsSet(name) {
				return fail(2, "replay --%s takes one recording, not %d (tapedeck test replays many and has --json, --html and --junit)", name, len(refs))
			}
		}
	}
	s, err := settingsFrom(c, argv)
	if err != nil {
		return fail(2, "%v", err)
	}
	if c.Bool("verbose") {
		s.verbose = e.stderr
	}
	if c.Bool("update") && os.Getenv("CI") != "" && !c.Bool("force") {
		return fail(2, "refusing --update while CI is set: golden tapes change only on purpose (add --force to override)")
	}
	srcs := make([]*source, len(refs))
	for i, ref := range refs {
		srcs[i], err = e.loadSource(c, ref)
		if _, statErr := os.Stat(ref); err != nil && i > 0 && statErr != nil {
			return fail(2, "replay: %q is neither a tape file nor a session; a command to run instead of the recorded one goes after --: tapedeck replay SESSION|TAPE -- COMMAND [ARGS…]", ref)
		}
		if err != nil {
			return fail(2, "%v", err)
		}
	}
	// One recording after the other, each reported as if alone; the exit
	// status is the worst of them.
	code := 0
	var pending []string
	for _, src := range srcs {
		err := e.replayOne(c, src, s, &pending)
		var ee *exitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			if ee.msg != "" {
				fmt.Fprintf(e.stderr, "tapedeck: %s\n", ee.msg)
			}
			code = max(code, ee.code)
		default:
			return err
		}
	}
	if len(pending) > 0 {
		fmt.Fprintln(e.stderr, pendingHint(len(pending), pending))
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// replayOne replays one recording and reports it; with --update, the tape
// it wrote a pending change for is added to pending.
func (e *env) replayOne(c *cli.Context, src *source, s *replaySettings, pending *[]string) error {
	runs := max(c.Int("runs"), 1)
	o := replayOnce(c, src, s)
	if o.err != nil {
		return fail(2, "replay %s: %v", src.name, o.err)
	}
	if path := c.String("html"); path != "" {
		if err := writeReplayHTML(path, o); err != nil {
			return fail(2, "replay %s: %v", src.name, err)
		}
	}
	var nr *noiseReport
	var err error
	if runs > 1 {
		nr, err = noise(c, src, s, o, runs)
		if err != nil {
			return fail(2, "%v", err)
		}
	}
	if c.Bool("json") {
		if err := writeOutcomeJSON(e.stdout, o, nr); err != nil {
			return err
		}
	} else {
		e.printOutcome(o)
		if nr != nil {
			e.printNoise(nr)
		}
	}
	if c.Bool("write-config") && nr != nil && len(nr.Rules) > 0 {
		if err := addToConfig(o, nr.Rules); err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(e.stderr, "tapedeck: added %d ignore rules to %s\n", len(nr.Rules), o.cfgPath)
	}
	if c.Bool("update") {
		wrote, err := e.update(c, o)
		if err != nil {
			return fail(2, "update %s: %v", src.name, err)
		}
		if wrote {
			*pending = append(*pending, src.tapePath)
		}
		return nil
	}
	if !o.same() {
		return &exitError{code: 1}
	}
	return nil
}

// noise replays runs-1 more times and proposes ignore rules for the paths
// that differ between runs of the same plugin; what differs from the
// recording in the same way in every run is reported apart.
func noise(c *cli.Context, src *source, s *replaySettings, first *outcome, runs int) (*noiseReport, error) {
	nr := &noiseReport{Runs: runs}
	type varied struct{ method, path string }
	seen := map[varied]bool{}
	var paths []pathChange
	for i := 1; i < runs; i++ {
		o := replayOnce(c, src, s)
		if o.err != nil {
			return nil, fmt.Errorf("replay %s (run %d): %v", src.name, i+1, o.err)
		}
		between := diff.Frames(first.run.Live, o.run.Live, diff.Options{Mask: first.dopts.Mask})
		for _, d := range between.Differences {
			for _, ch := range d.Changes {
				v := varied{d.Method, ch.Path}
				if !seen[v] {
					seen[v] = true
					paths = append(paths, pathChange{method: d.Method, segs: ch.Segments})
				}
			}
		}
	}
	nr.Rules = proposeRules(paths)
	for _, d := range first.diff.Differences {
		for _, ch := range d.Changes {
			if !seen[varied{d.Method, ch.Path}] {
				nr.Stable = append(nr.Stable, stableChange{Method: d.Method, Path: ch.Path, Old: ch.Old, New: ch.New})
			}
		}
	}
	return nr, nil
}

func (e *env) printNoise(nr *noiseReport) {
	if len(nr.Rules) == 0 {
		fmt.Fprintf(e.stdout, "%d runs agree with each other: no noise to ignore\n", nr.Runs)
	} else {
		fmt.Fprintf(e.stdout, "%d runs differ from each other at these paths; proposed ignore rules:\n", nr.Runs)
		for _, r := range nr.Rules {
			fmt.Fprintf(e.stdout, "  %s\n", escape.Text(r))
		}
		fmt.Fprintln(e.stdout, "(--write-config adds them to tapedeck.json)")
	}
	if len(nr.Stable) > 0 {
		fmt.Fprintf(e.stdout, "all %d runs agree with each other but differ from the recording at these paths\n", nr.Runs)
		fmt.Fprintln(e.stdout, "(not noise between runs; time-relative text such as \"5 minutes ago\" is the usual cause):")
		for _, st := range nr.Stable {
			fmt.Fprintf(e.stdout, "  %s:%s  %s → %s\n", escape.Text(orAny(st.Method)), escape.Text(st.Path), escape.Text(orAbsent(st.Old)), escape.Text(orAbsent(st.New)))
		}
	}
}

func addToConfig(o *outcome, rules []string) error {
	if o.cfgPath == "" {
		return errors.New("--write-config needs a tape: tapedeck.json lives beside it")
	}
	cfg, err := readConfig(o.cfgPath)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, r := range cfg.Ignore {
		have[r] = true
	}
	for _, r := range rules {
		if !have[r] {
			cfg.Ignore = append(cfg.Ignore, r)
		}
	}
	return writeFileAtomic(o.cfgPath, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cfg)
	})
}

// update makes the live run the golden, to be reviewed: a tape's change is
// written beside it as NAME.jsonl.new (every line of a frame that did not
// change kept byte for byte), which review accepts or rejects; a stored
// session gets a new sibling session.
func (e *env) update(c *cli.Context, o *outcome) (pending bool, err error) {
	if o.src.tapePath != "" {
		path, err := writePending(o)
		if err != nil {
			return false, err
		}
		if path == "" {
			fmt.Fprintf(e.stderr, "tapedeck: %s has no difference: nothing to update\n", o.src.tapePath)
			return false, nil
		}
		fmt.Fprintf(e.stderr, "tapedeck: wrote %s (%s)\n", path, describeDifferences(o.diff))
		return true, nil
	}
	meta := *o.src.meta
	meta.Frames, meta.Bytes = frame.Counts{}, frame.Counts{}
	for _, f := range o.run.Live {
		if f.IsEvent() {
			if f.Event == frame.EventExit {
				meta.Exit = frame.Exit{Code: f.Code, Signal: f.Signal}
			}
			continue
		}
		meta.Frames.Add(f.Dir, 1)
		meta.Bytes.Add(f.Dir, int64(len(f.Raw)))
	}
	st, err := e.openStore(c)
	if err != nil {
		return false, err
	}
	now := time.Now()
	meta.ID = frame.NewID(now)
	meta.Started, meta.Ended = now.Add(-o.run.Elapsed), &now
	meta.Status = frame.StatusComplete
	meta.Tags = map[string]string{"replay-of": o.src.meta.ID}
	i := 0
	err = st.Put(meta, func() (*frame.Frame, error) {
		if i == len(o.run.Live) {
			return nil, io.EOF
		}
		i++
		return &o.run.Live[i-1], nil
	})
	if err != nil {
		return false, err
	}
	fmt.Fprintf(e.stderr, "tapedeck: stored the live run as session %s\n", meta.ID)
	return false, nil
}

// describeDifferences counts differences by kind: "1 changed, 1 extra".
func describeDifferences(r diff.Result) string {
	n := map[diff.Kind]int{}
	for _, d := range r.Differences {
		n[d.Kind]++
	}
	var parts []string
	for _, k := range []diff.Kind{diff.Changed, diff.Missing, diff.Extra, diff.Moved, diff.Exit} {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
