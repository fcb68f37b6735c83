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
	"github.com/tapedeck/tapedeck/golden"
)

func (e *env) replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "play the host to a plugin and diff what it says against the recording",
		ArgsUsage: "SESSION|TAPE [-- COMMAND [ARGS…]]",
		Description: "Sends the recorded host frames, answers the plugin's own requests from the\n" +
			"recording, and compares the plugin's output with what it said then.\n" +
			"Each host frame waits until the plugin has said again what it said before\n" +
			"that frame in the recording (replies by id, requests and notifications by\n" +
			"method and count), however long it takes, up to --step-timeout.\n" +
			"The command after -- replaces the recorded one and runs in the current\n" +
			"folder (or --cwd). Exit status: 0 same, 1 differs, 2 could not run.",
		Flags: append(replayFlags(),
			&cli.StringFlag{Name: "cwd", Usage: "working directory for the plugin"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.BoolFlag{Name: "update", Usage: "write the live run as the new golden tape (or a new session)"},
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
	if c.NArg() < 1 {
		return fail(2, "replay needs a SESSION or TAPE")
	}
	args := c.Args().Slice()
	argv := args[1:]
	if len(argv) > 0 && argv[0] != "--" {
		return fail(2, "replay: extra argument %q: a command to run instead of the recorded one goes after --: tapedeck replay SESSION|TAPE -- COMMAND [ARGS…]", argv[0])
	}
	if len(argv) > 0 {
		argv = argv[1:]
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
	src, err := e.loadSource(c, args[0])
	if err != nil {
		return fail(2, "%v", err)
	}
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
		if err := e.update(c, o); err != nil {
			return fail(2, "update %s: %v", src.name, err)
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

// update makes the live run the golden. A tape keeps every line of a
// frame that did not change and is rewritten atomically only when the
// replay differed; a stored session gets a new sibling session.
func (e *env) update(c *cli.Context, o *outcome) error {
	if o.src.tapePath != "" {
		data, err := golden.Update(o.src.tape, golden.Replay{Live: o.run.Live, Pairs: o.run.Pairs, Sent: o.run.Sent}, o.diff, golden.Options{Stderr: o.dopts.CompareStderr})
		if err != nil {
			return err
		}
		if data == nil {
			fmt.Fprintf(e.stderr, "tapedeck: %s has no difference: left as it is\n", o.src.tapePath)
			return nil
		}
		if err := writeFileAtomic(o.src.tapePath, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "tapedeck: updated %s: %s\n", o.src.tapePath, describeDifferences(o.diff))
		return nil
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
		return err
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
		return err
	}
	fmt.Fprintf(e.stderr, "tapedeck: stored the live run as session %s\n", meta.ID)
	return nil
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
