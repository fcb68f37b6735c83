package cli

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/cli/internal/escape"
	"github.com/tapedeck/tapedeck/cli/internal/screen"
	"github.com/tapedeck/tapedeck/diff"
	"github.com/tapedeck/tapedeck/report"
)

func (e *env) testCommand() *cli.Command {
	return &cli.Command{
		Name:      "test",
		Usage:     "replay every tape under the paths (default testdata/) and report",
		ArgsUsage: "[PATH…]",
		Description: "Finds tapes (*.jsonl files that start as tapes), replays them in parallel\n" +
			"and prints one line per tape and a closing \"N passed, N failed\".\n" +
			"A tape whose plugin's program is not installed here is skipped.",
		Flags: append(replayFlags(),
			&cli.StringFlag{Name: "cwd", Usage: "run every tape's plugin in `DIR` instead of its recorded working directory"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "replay `N` tapes at once"},
			&cli.StringFlag{Name: "junit", Usage: "write JUnit XML to `FILE`"},
			&cli.StringFlag{Name: "html", Usage: "write an HTML report per tape and an index.html into `DIR`"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per tape (JSON lines) instead of text"},
			&cli.BoolFlag{Name: "update", Usage: "write each failing tape's live run beside it as NAME.jsonl.new, for tapedeck review"},
			&cli.BoolFlag{Name: "force", Usage: "allow --update when CI is set"},
			&cli.BoolFlag{Name: "fail-on-skip", Usage: "a tape whose plugin's program is not installed fails instead of being skipped"},
			&cli.StringFlag{Name: "shard", Usage: "run only shard `K/N` of the tapes (1 ≤ K ≤ N; stable by path), to split a corpus across CI jobs"},
		),
		Action: e.test,
	}
}

type testResult struct {
	tape    string
	outcome *outcome
	skip    string
	elapsed time.Duration
}

func (e *env) test(c *cli.Context) error {
	paths := c.Args().Slice()
	if len(paths) == 0 {
		paths = []string{"testdata"}
	}
	if c.Bool("update") && os.Getenv("CI") != "" && !c.Bool("force") {
		return fail(2, "refusing --update while CI is set: golden tapes change only on purpose (add --force to override)")
	}
	k, n, err := parseShard(c.String("shard"))
	if err != nil {
		return fail(2, "%v", err)
	}
	tapes, err := findTapes(paths)
	if err != nil {
		return fail(2, "%v", err)
	}
	if len(tapes) == 0 {
		return fail(2, "no tapes under %s (a tape is a .jsonl file from tapedeck export)", strings.Join(paths, ", "))
	}
	tapes = shardOf(tapes, k, n)
	s, err := settingsFrom(c, nil)
	if err != nil {
		return fail(2, "%v", err)
	}
	if c.Bool("verbose") {
		s.verbose = e.stderr
	}
	if pending, err := findPending(paths); err == nil && len(pending) > 0 && !c.Bool("update") {
		fmt.Fprintf(e.stderr, "tapedeck: %s awaiting review (%s): %s\n",
			nounCount(int64(len(pending)), "pending change", "pending changes"), strings.Join(pending, ", "), strings.TrimSpace("tapedeck review "+strings.Join(c.Args().Slice(), " ")))
	}
	asJSON := c.Bool("json")
	jobs := max(c.Int("jobs"), 1)
	results := make([]testResult, len(tapes))
	done := make([]chan struct{}, len(tapes))
	for i := range done {
		done[i] = make(chan struct{})
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, len(tapes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] = runTape(c, tapes[i], s)
				close(done[i])
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range tapes {
			work <- i
		}
		close(work)
	}()

	progress := screen.Color(e.stderr) && len(tapes) > 1
	passed, failed, skipped, updated := 0, 0, 0, 0
	differed := 0 // failures that ran and differed: an update can take them
	for i := range tapes {
		if progress {
			fmt.Fprintf(e.stderr, "\r\x1b[K[%d/%d] %s", i, len(tapes), filepath.Base(tapes[i]))
		}
		<-done[i]
		if progress {
			fmt.Fprint(e.stderr, "\r\x1b[K")
		}
		r := &results[i]
		if r.skip != "" && c.Bool("fail-on-skip") {
			r.outcome = &outcome{src: &source{name: r.tape}, err: errors.New(r.skip + " (--fail-on-skip)")}
			r.skip = ""
		}
		if asJSON {
			if err := writeTestJSON(e.stdout, r); err != nil {
				return err
			}
		}
		switch {
		case r.skip != "":
			skipped++
			if !asJSON {
				fmt.Fprintf(e.stdout, "skip  %s  (%s)\n", r.tape, escape.Text(r.skip))
			}
		case r.outcome.same():
			passed++
			if !asJSON {
				fmt.Fprintf(e.stdout, "ok    %s  %s\n", r.tape, formatDuration(r.elapsed))
			}
		default:
			failed++
			if r.outcome.err == nil {
				differed++
			}
			if !asJSON {
				fmt.Fprintf(e.stdout, "FAIL  %s  %s\n", r.tape, formatDuration(r.elapsed))
				if r.outcome.err != nil {
					fmt.Fprintf(e.stdout, "    could not run: %s\n", escape.Text(r.outcome.err.Error()))
				} else {
					e.printOutcome(r.outcome)
				}
			}
			if c.Bool("update") && r.outcome.err == nil && r.outcome.run != nil && !r.outcome.run.TimedOut {
				path, err := writePending(r.outcome)
				if err != nil {
					return fail(1, "update %s: %v", r.tape, err)
				}
				if path != "" {
					updated++
					fmt.Fprintf(e.stderr, "tapedeck: wrote %s\n", path)
				}
			}
		}
	}
	wg.Wait()
	summary := fmt.Sprintf("%d passed, %d failed", passed, failed)
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", skipped)
	}
	if !asJSON {
		fmt.Fprintln(e.stdout, summary)
	}
	switch {
	case updated > 0:
		fmt.Fprintln(e.stderr, pendingHint(updated, c.Args().Slice()))
	case differed > 0 && !asJSON && !c.Bool("update"):
		args := strings.Join(c.Args().Slice(), " ")
		fmt.Fprintf(e.stdout, "to accept these changes: %s && %s\n", strings.TrimSpace("tapedeck test --update "+args), strings.TrimSpace("tapedeck review "+args))
	}
	if dir := c.String("html"); dir != "" {
		if err := writeTestHTML(dir, results, summary); err != nil {
			return fail(1, "write HTML reports: %v", err)
		}
	}
	if path := c.String("junit"); path != "" {
		if err := writeFileAtomic(path, func(w io.Writer) error { return writeJUnit(w, results) }); err != nil {
			return fail(1, "write JUnit: %v", err)
		}
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// parseShard reads --shard K/N; 1/1 when empty.
func parseShard(s string) (k, n int, err error) {
	if s == "" {
		return 1, 1, nil
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &k, &n); err != nil || n < 1 || k < 1 || k > n || fmt.Sprintf("%d/%d", k, n) != s {
		return 0, 0, fmt.Errorf("--shard %q: want K/N with 1 ≤ K ≤ N, for example 2/4", s)
	}
	return k, n, nil
}

// shardOf keeps the tapes of shard k of n: a tape's shard follows from its
// path alone (FNV-1a), so adding a tape never moves the others.
func shardOf(tapes []string, k, n int) []string {
	if n == 1 {
		return tapes
	}
	var out []string
	for _, t := range tapes {
		h := fnv.New32a()
		h.Write([]byte(filepath.ToSlash(filepath.Clean(t))))
		if int(h.Sum32()%uint32(n)) == k-1 {
			out = append(out, t)
		}
	}
	return out
}

// testJSON is one tape's result in test --json.
type testJSON struct {
	Tape   string `json:"tape"`
	Status string `json:"status"` // pass, fail, skip
	Skip   string `json:"skip,omitempty"`
	outcomeJSON
}

func writeTestJSON(w io.Writer, r *testResult) error {
	j := testJSON{Tape: r.tape, Status: "skip", Skip: r.skip}
	if r.skip == "" {
		j.outcomeJSON = toJSON(r.outcome, nil)
		j.Status = "fail"
		if r.outcome.same() {
			j.Status = "pass"
		}
	}
	j.outcomeJSON.Source = ""
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = w.Write(append(escape.JSON(nil, b), '\n'))
	return err
}

// runTape replays one tape, or says why it is skipped.
func runTape(c *cli.Context, path string, s *replaySettings) testResult {
	start := time.Now()
	r := testResult{tape: path}
	src, err := readTapeFile(path)
	if err != nil {
		r.outcome = &outcome{src: &source{name: path}, err: err}
		return r
	}
	if len(src.meta.Command) > 0 {
		prog := src.meta.Command[0]
		if _, err := exec.LookPath(prog); err != nil {
			if _, err := exec.LookPath(filepath.Base(prog)); err != nil && !errors.Is(err, exec.ErrDot) {
				r.skip = fmt.Sprintf("%s is not installed here", filepath.Base(prog))
				return r
			}
		}
	}
	r.outcome = replayOnce(c, src, s)
	r.elapsed = time.Since(start)
	return r
}

// JUnit XML, as CI systems read it.
type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Class   string        `xml:"classname,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitMessage `xml:"failure,omitempty"`
	Skipped *junitMessage `xml:"skipped,omitempty"`
	// SystemErr is the plugin's stderr (its last lines) for a failure.
	SystemErr *junitText `xml:"system-err,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitText struct {
	Text string `xml:",chardata"`
}

func writeJUnit(w io.Writer, results []testResult) error {
	suite := junitSuite{Name: "tapedeck", Tests: len(results)}
	var total time.Duration
	for _, r := range results {
		total += r.elapsed
		jc := junitCase{Name: r.tape, Class: "tapedeck", Time: fmt.Sprintf("%.3f", r.elapsed.Seconds())}
		switch {
		case r.skip != "":
			suite.Skipped++
			jc.Skipped = &junitMessage{Message: escape.Text(r.skip)}
		case !r.outcome.same():
			suite.Failures++
			var b strings.Builder
			msg := ""
			if r.outcome.err != nil {
				msg = r.outcome.err.Error()
			} else {
				msg = fmt.Sprintf("%d differences", len(r.outcome.diff.Differences))
				diff.Render(&b, &r.outcome.diff, diff.RenderOptions{Escape: escape.Lines})
			}
			jc.Failure = &junitMessage{Message: escape.Text(msg), Text: strings.ToValidUTF8(b.String(), "\uFFFD")}
			if r.outcome.run != nil {
				if tail := stderrTail(r.outcome.run.Live, 40); len(tail) > 0 {
					for i, l := range tail {
						tail[i] = escape.Text(l)
					}
					jc.SystemErr = &junitText{Text: strings.Join(tail, "\n") + "\n"}
				}
			}
		}
		suite.Cases = append(suite.Cases, jc)
	}
	suite.Time = fmt.Sprintf("%.3f", total.Seconds())
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suite); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// writeTestHTML writes into dir one replay report per tape that ran (named
// after the tape) and an index.html that links them under the heading
// summary.
func writeTestHTML(dir string, results []testResult, summary string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	taken := map[string]bool{"index.html": true}
	entries := make([]report.IndexEntry, 0, len(results))
	for _, r := range results {
		e := report.IndexEntry{Name: r.tape}
		switch {
		case r.skip != "":
			e.Status, e.Detail = "skip", r.skip
		case r.outcome.err != nil:
			e.Status, e.Detail = "error", "could not run: "+r.outcome.err.Error()
		case r.outcome.same():
			e.Status, e.Detail = "ok", "same ("+formatDuration(r.elapsed)+")"
		default:
			n, word := len(r.outcome.diff.Differences), "differences"
			if n == 1 {
				word = "difference"
			}
			e.Status, e.Detail = "fail", fmt.Sprintf("%d %s (%s)", n, word, formatDuration(r.elapsed))
		}
		if r.outcome != nil {
			name := reportName(r.tape, taken)
			if err := writeReplayHTML(filepath.Join(dir, name), r.outcome); err != nil {
				return err
			}
			e.Href = (&url.URL{Path: name}).String()
		}
		entries = append(entries, e)
	}
	return writeFileAtomic(filepath.Join(dir, "index.html"), func(w io.Writer) error {
		return report.Index(w, "tapedeck test: "+summary, entries)
	})
}

// reportName names the report of a tape after it (hello.jsonl → hello.html),
// with -2, -3 … when tapes in different folders share a name.
func reportName(tape string, taken map[string]bool) string {
	base := strings.TrimSuffix(filepath.Base(tape), ".jsonl")
	name := base + ".html"
	for n := 2; taken[name]; n++ {
		name = base + "-" + strconv.Itoa(n) + ".html"
	}
	taken[name] = true
	return name
}
