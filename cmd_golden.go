package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/diff"
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
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "replay `N` tapes at once"},
			&cli.StringFlag{Name: "junit", Usage: "write JUnit XML to `FILE`"},
			&cli.StringFlag{Name: "html", Usage: "write an HTML report per tape and an index.html into `DIR`"},
		),
		Action: e.test,
	}
}

// findTapes lists the tapes under paths, sorted.
func findTapes(paths []string) ([]string, error) {
	var tapes []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !fi.IsDir() {
			tapes = append(tapes, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != p) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".jsonl") && isTape(path) {
				tapes = append(tapes, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("find tapes in %s: %w", p, err)
		}
	}
	sort.Strings(tapes)
	return tapes, nil
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
	tapes, err := findTapes(paths)
	if err != nil {
		return fail(2, "%v", err)
	}
	if len(tapes) == 0 {
		return fail(2, "no tapes under %s (a tape is a .jsonl file from tapedeck export)", strings.Join(paths, ", "))
	}
	s, err := settingsFrom(c, nil)
	if err != nil {
		return fail(2, "%v", err)
	}
	if c.Bool("verbose") {
		s.verbose = e.stderr
	}
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

	progress := useColor(e.stderr) && len(tapes) > 1
	passed, failed, skipped := 0, 0, 0
	for i := range tapes {
		if progress {
			fmt.Fprintf(e.stderr, "\r\x1b[K[%d/%d] %s", i, len(tapes), filepath.Base(tapes[i]))
		}
		<-done[i]
		if progress {
			fmt.Fprint(e.stderr, "\r\x1b[K")
		}
		r := results[i]
		switch {
		case r.skip != "":
			skipped++
			fmt.Fprintf(e.stdout, "skip  %s  (%s)\n", r.tape, sanitize(r.skip))
		case r.outcome.same():
			passed++
			fmt.Fprintf(e.stdout, "ok    %s  %s\n", r.tape, formatDuration(r.elapsed))
		default:
			failed++
			fmt.Fprintf(e.stdout, "FAIL  %s  %s\n", r.tape, formatDuration(r.elapsed))
			if r.outcome.err != nil {
				fmt.Fprintf(e.stdout, "    could not run: %s\n", sanitize(r.outcome.err.Error()))
			} else {
				e.printOutcome(r.outcome)
			}
		}
	}
	wg.Wait()
	summary := fmt.Sprintf("%d passed, %d failed", passed, failed)
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", skipped)
	}
	fmt.Fprintln(e.stdout, summary)
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
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
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
			jc.Skipped = &junitMessage{Message: r.skip}
		case !r.outcome.same():
			suite.Failures++
			var b strings.Builder
			msg := ""
			if r.outcome.err != nil {
				msg = r.outcome.err.Error()
			} else {
				msg = fmt.Sprintf("%d differences", len(r.outcome.diff.Differences))
				diff.Render(&b, &r.outcome.diff, diff.RenderOptions{})
			}
			jc.Failure = &junitMessage{Message: msg, Text: strings.ToValidUTF8(b.String(), "\uFFFD")}
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
