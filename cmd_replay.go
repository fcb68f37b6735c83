package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/diff"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/replay"
	"github.com/tapedeck/tapedeck/tape"
)

// replayFlags are shared by replay and test.
func replayFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "ignore", Usage: "leave out `METHOD:PATH` when comparing (repeatable; also read from tapedeck.json beside the tape)"},
		&cli.BoolFlag{Name: "strict", Usage: "compare bytes: member order and white space matter"},
		&cli.BoolFlag{Name: "compare-stderr", Usage: "compare the plugin's stderr lines too"},
		&cli.DurationFlag{Name: "step-timeout", Value: 5 * time.Second, Usage: "longest wait for the plugin before each host frame"},
		&cli.DurationFlag{Name: "quiet", Value: 200 * time.Millisecond, Usage: "silence (with the plugin off the CPU) that counts as having gone quiet"},
		&cli.StringFlag{Name: "pace", Value: "asap", Usage: "asap, realtime, or xN (the recorded gaps divided by N)"},
		&cli.DurationFlag{Name: "max-gap", Value: 2 * time.Second, Usage: "clamp each paced gap to this"},
	}
}

func (e *env) replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "play the host to a plugin and diff what it says against the recording",
		ArgsUsage: "SESSION|TAPE [-- COMMAND [ARGS…]]",
		Description: "Sends the recorded host frames, answers the plugin's own requests from the\n" +
			"recording, and compares the plugin's output with what it said then.\n" +
			"Exit status: 0 same, 1 differs, 2 could not run.",
		Flags: append(replayFlags(),
			&cli.StringFlag{Name: "cwd", Usage: "working directory for the plugin"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.BoolFlag{Name: "update", Usage: "write the live run as the new golden tape (or a new session)"},
			&cli.BoolFlag{Name: "force", Usage: "allow --update when CI is set"},
			&cli.IntFlag{Name: "runs", Value: 1, Usage: "replay `N` times and propose ignore rules for what differs between runs"},
			&cli.BoolFlag{Name: "write-config", Usage: "with --runs: add the proposed rules to tapedeck.json"},
			&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML report of the replay to `FILE`"},
		),
		Action: e.replay,
	}
}

// outcome is one replay, compared.
type outcome struct {
	src     *source
	run     *replay.Result
	diff    diff.Result
	notes   []string
	cfgPath string
	err     error // could not run
}

func (o *outcome) same() bool { return o.err == nil && o.diff.Same() }

// replaySettings are the knobs of one replay, read from flags.
type replaySettings struct {
	opts    replay.Options
	diff    diff.Options
	ignores []string
	argv    []string
	cwd     string
}

func settingsFrom(c *cli.Context, argv []string) (*replaySettings, error) {
	pace, err := parsePace(c.String("pace"))
	if err != nil {
		return nil, err
	}
	s := &replaySettings{
		opts: replay.Options{
			StepTimeout: c.Duration("step-timeout"),
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
	opts := s.opts
	opts.Command, opts.Dir, opts.Env = cmd, dir, src.env()
	o.run, err = replay.Run(c.Context, src.frames, opts)
	if err != nil {
		o.err = err
		return o
	}
	dopts := s.diff
	dopts.Ignore = ignoreFunc(rules)
	o.diff = diff.Frames(src.frames, o.run.Live, dopts)
	return o
}

func (e *env) replay(c *cli.Context) error {
	if c.NArg() < 1 {
		return fail(2, "replay needs a SESSION or TAPE")
	}
	args := c.Args().Slice()
	s, err := settingsFrom(c, args[1:])
	if err != nil {
		return fail(2, "%v", err)
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
	var proposals []string
	if runs > 1 {
		proposals, err = noise(c, src, s, o, runs)
		if err != nil {
			return fail(2, "%v", err)
		}
	}
	if c.Bool("json") {
		if err := writeOutcomeJSON(e.stdout, o, proposals); err != nil {
			return err
		}
	} else {
		e.printOutcome(o)
		if runs > 1 {
			e.printProposals(proposals, runs)
		}
	}
	if c.Bool("write-config") && len(proposals) > 0 {
		if err := addToConfig(o, proposals); err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(e.stderr, "tapedeck: added %d ignore rules to %s\n", len(proposals), o.cfgPath)
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
// that differ between runs of the same plugin.
func noise(c *cli.Context, src *source, s *replaySettings, first *outcome, runs int) ([]string, error) {
	seen := map[string]bool{}
	var rules []string
	for i := 1; i < runs; i++ {
		o := replayOnce(c, src, s)
		if o.err != nil {
			return nil, fmt.Errorf("replay %s (run %d): %v", src.name, i+1, o.err)
		}
		between := diff.Frames(first.run.Live, o.run.Live, diff.Options{})
		for _, d := range between.Differences {
			for _, ch := range d.Changes {
				r := ruleFor(d.Method, ch.Segments)
				if !seen[r] {
					seen[r] = true
					rules = append(rules, r)
				}
			}
		}
	}
	sort.Strings(rules)
	return rules, nil
}

func (e *env) printProposals(rules []string, runs int) {
	if len(rules) == 0 {
		fmt.Fprintf(e.stdout, "%d runs agree with each other: no noise to ignore\n", runs)
		return
	}
	fmt.Fprintf(e.stdout, "%d runs differ from each other at these paths; proposed ignore rules:\n", runs)
	for _, r := range rules {
		fmt.Fprintf(e.stdout, "  %s\n", sanitize(r))
	}
	fmt.Fprintln(e.stdout, "(--write-config adds them to tapedeck.json)")
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

// printOutcome prints a replay's result for a person.
func (e *env) printOutcome(o *outcome) {
	w := e.stdout
	for _, n := range o.notes {
		fmt.Fprintf(w, "note: %s\n", sanitize(n))
	}
	for _, n := range o.run.Notes {
		fmt.Fprintf(w, "note: %s\n", sanitize(n))
	}
	for _, u := range o.run.Unmatched {
		fmt.Fprintf(w, "unanswered: the plugin asked %s, which the recording never answered; it got an error\n", sanitize(u))
	}
	n := len(o.diff.Differences)
	verdict := "same"
	if n > 0 {
		verdict = fmt.Sprintf("%d difference", n)
		if n > 1 {
			verdict += "s"
		}
	}
	fmt.Fprintf(w, "%s: %s (compared %d recorded and %d replayed frames, %s)\n",
		sanitize(o.src.name), verdict, o.diff.Compared[0], o.diff.Compared[1], formatDuration(o.run.Elapsed))
	if n == 0 {
		return
	}
	diff.Render(w, &o.diff, diff.RenderOptions{Color: useColor(w), Escape: sanitizeKeepNewlines})
	if tail := stderrTail(o.run.Live, 10); len(tail) > 0 {
		fmt.Fprintln(w, "plugin stderr (last lines):")
		for _, l := range tail {
			fmt.Fprintf(w, "    %s\n", sanitize(l))
		}
	}
}

// sanitizeKeepNewlines escapes control characters but keeps line breaks.
func sanitizeKeepNewlines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = sanitize(l)
	}
	return strings.Join(lines, "\n")
}

func stderrTail(live []frame.Frame, n int) []string {
	var lines []string
	for _, f := range live {
		if !f.IsEvent() && f.Dir == frame.Err {
			lines = append(lines, string(f.Raw))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// outcomeJSON is replay --json.
type outcomeJSON struct {
	Source      string            `json:"source"`
	Same        bool              `json:"same"`
	Differences []diff.Difference `json:"differences"`
	Compared    [2]int            `json:"compared"`
	Unmatched   []string          `json:"unmatched"`
	Notes       []string          `json:"notes"`
	Exit        *frame.Frame      `json:"-"`
	ElapsedMS   int64             `json:"elapsedMs"`
	Proposed    []string          `json:"proposedIgnores,omitempty"`
	Error       string            `json:"error,omitempty"`
}

func toJSON(o *outcome, proposals []string) outcomeJSON {
	j := outcomeJSON{Source: o.src.name, Same: o.same(), Differences: o.diff.Differences, Compared: o.diff.Compared, Proposed: proposals}
	if o.err != nil {
		j.Error = o.err.Error()
	}
	if o.run != nil {
		j.Unmatched, j.Notes, j.ElapsedMS = o.run.Unmatched, append(o.notes, o.run.Notes...), o.run.Elapsed.Milliseconds()
	}
	if j.Differences == nil {
		j.Differences = []diff.Difference{}
	}
	if j.Unmatched == nil {
		j.Unmatched = []string{}
	}
	if j.Notes == nil {
		j.Notes = []string{}
	}
	return j
}

func writeOutcomeJSON(w io.Writer, o *outcome, proposals []string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(toJSON(o, proposals))
}

// update writes the live run as the golden: the tape is rewritten
// atomically (its header kept, but for how the run ended), or a stored
// session gets a new sibling.
func (e *env) update(c *cli.Context, o *outcome) error {
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
	if o.src.tapePath != "" {
		err := writeFileAtomic(o.src.tapePath, func(w io.Writer) error {
			tw, err := tape.NewWriter(w, &meta)
			if err != nil {
				return err
			}
			for i := range o.run.Live {
				if err := tw.Write(&o.run.Live[i]); err != nil {
					return err
				}
			}
			return tw.Flush()
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "tapedeck: updated %s with the live run\n", o.src.tapePath)
		return nil
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
