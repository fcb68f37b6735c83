package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/clock"
	"github.com/tapedeck/tapedeck/diff"
	"github.com/tapedeck/tapedeck/fingerprint"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/golden"
	"github.com/tapedeck/tapedeck/replay"
)

// replayFlags are shared by replay and test.
func replayFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "ignore", Usage: "leave out `METHOD:PATH` when comparing (repeatable; also read from tapedeck.json beside the tape)"},
		&cli.BoolFlag{Name: "strict", Usage: "compare bytes: member order and white space matter"},
		&cli.BoolFlag{Name: "compare-stderr", Usage: "compare the plugin's stderr lines too"},
		&cli.DurationFlag{Name: "step-timeout", Value: 30 * time.Second, Usage: "longest wait for a frame the plugin said before a host frame in the recording; a frame that never comes costs this once"},
		&cli.DurationFlag{Name: "timeout", Value: 3 * time.Minute, Usage: "longest a whole replay may take; past it the plugin is killed and the replay fails"},
		&cli.DurationFlag{Name: "quiet", Usage: "also wait, before each host frame, until the plugin has said nothing for this long (default off: frames are waited for, never silence)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say what runs: the command, its folder and the variables added"},
		&cli.StringFlag{Name: "pace", Value: "asap", Usage: "asap, realtime, or xN (the recorded gaps divided by N)"},
		&cli.DurationFlag{Name: "max-gap", Value: 2 * time.Second, Usage: "clamp each paced gap to this"},
		&cli.BoolFlag{Name: "pin-clock", Usage: "pin the plugin's clock as recorded (the default when the tape was recorded with --pin-clock); --pin-clock=false runs it on the real clock; on a tape recorded without it, pins the clock to the recorded start"},
	}
}

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
			sanitize(src.name), sanitize(shellQuote(cmd)), sanitize(dir), sanitize(orNone(strings.Join(added, " "))))
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

func orNone(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

// shellQuote spells argv as a shell would read it back.
func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func (e *env) replay(c *cli.Context) error {
	if c.NArg() < 1 {
		return fail(2, "replay needs a SESSION or TAPE")
	}
	args := c.Args().Slice()
	argv := args[1:]
	if len(argv) > 0 && argv[0] == "--" {
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

// noiseReport is what --runs found.
type noiseReport struct {
	Runs int
	// Rules are the narrowest ignore rules that cover what varied between
	// runs of the same plugin.
	Rules []string
	// Stable are the changes from the recording that every run agrees on:
	// not noise between runs, but (often) time-relative text.
	Stable []stableChange
}

type stableChange struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Old    string `json:"old"`
	New    string `json:"new"`
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
			fmt.Fprintf(e.stdout, "  %s\n", sanitize(r))
		}
		fmt.Fprintln(e.stdout, "(--write-config adds them to tapedeck.json)")
	}
	if len(nr.Stable) > 0 {
		fmt.Fprintf(e.stdout, "all %d runs agree with each other but differ from the recording at these paths\n", nr.Runs)
		fmt.Fprintln(e.stdout, "(not noise between runs; time-relative text such as \"5 minutes ago\" is the usual cause):")
		for _, st := range nr.Stable {
			fmt.Fprintf(e.stdout, "  %s:%s  %s → %s\n", sanitize(orAny(st.Method)), sanitize(st.Path), sanitize(orAbsent(st.Old)), sanitize(orAbsent(st.New)))
		}
	}
}

func orAny(method string) string {
	if method == "" {
		return "*"
	}
	return method
}

func orAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
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
	if o.run != nil {
		for _, n := range o.run.Notes {
			fmt.Fprintf(w, "note: %s\n", sanitize(n))
		}
		for _, u := range o.run.Unmatched {
			fmt.Fprintf(w, "unanswered: the plugin asked %s, which the recording never answered; it got an error\n", sanitize(u))
		}
	}
	n := len(o.diff.Differences)
	verdict := "same"
	if n > 0 {
		verdict = fmt.Sprintf("%d difference", n)
		if n > 1 {
			verdict += "s"
		}
	}
	timedOut := o.run != nil && o.run.TimedOut
	if timedOut {
		verdict = "timed out, " + verdict
	}
	var live []frame.Frame
	if o.run != nil {
		live = o.run.Live
		fmt.Fprintf(w, "%s: %s (compared %d recorded and %d replayed frames, %s)\n",
			sanitize(o.src.name), verdict, o.diff.Compared[0], o.diff.Compared[1], formatDuration(o.run.Elapsed))
	} else {
		live = o.against.frames
		fmt.Fprintf(w, "%s vs %s: %s (compared %d and %d frames)\n",
			sanitize(o.src.name), sanitize(o.against.name), verdict, o.diff.Compared[0], o.diff.Compared[1])
	}
	if l := driftLine(o.drift); l != "" {
		fmt.Fprintln(w, sanitize(l))
	}
	if n == 0 && !timedOut {
		return
	}
	diff.Render(w, &o.diff, diff.RenderOptions{Color: useColor(w), Escape: sanitizeKeepNewlines})
	if tail := stderrTail(live, 10); len(tail) > 0 {
		if o.run == nil {
			fmt.Fprintf(w, "stderr of %s (last lines):\n", sanitize(o.against.name))
		} else {
			fmt.Fprintln(w, "plugin stderr (last lines):")
		}
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
	Stable      []stableChange    `json:"stableChanges,omitempty"`
	TimedOut    bool              `json:"timedOut,omitempty"`
	Error       string            `json:"error,omitempty"`
	Drift       *drift            `json:"drift,omitempty"`
}

func toJSON(o *outcome, nr *noiseReport) outcomeJSON {
	j := outcomeJSON{Source: o.src.name, Same: o.same(), Differences: o.diff.Differences, Compared: o.diff.Compared, Drift: o.drift}
	if nr != nil {
		j.Proposed, j.Stable = nr.Rules, nr.Stable
	}
	if o.err != nil {
		j.Error = o.err.Error()
	}
	if o.run != nil {
		j.Unmatched, j.Notes, j.ElapsedMS = o.run.Unmatched, append(o.notes, o.run.Notes...), o.run.Elapsed.Milliseconds()
		j.TimedOut = o.run.TimedOut
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

func writeOutcomeJSON(w io.Writer, o *outcome, nr *noiseReport) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(toJSON(o, nr)); err != nil {
		return err
	}
	_, err := w.Write(jsonSafe(nil, b.Bytes()))
	return err
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
