package present

// What tapedeck test writes beside its lines: JUnit XML and a folder of
// HTML reports with an index.

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/htmlreport"
	"github.com/tapedeck/tapedeck/playback"
)

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

// JUnitSuite gathers a suite's JUnit XML a tape at a time: what it keeps
// of a tape is its case (the rendered differences, themselves bounded:
// diff.MaxKept), never the tape's frames.
type JUnitSuite struct {
	suite junitSuite
	total time.Duration
}

// Add takes one tape's result as it ends.
func (s *JUnitSuite) Add(r *playback.TapeResult) {
	s.suite.Tests++
	s.total += r.Elapsed
	jc := junitCase{Name: escape.Text(r.Tape), Class: "tapedeck", Time: fmt.Sprintf("%.3f", r.Elapsed.Seconds())}
	switch {
	case r.Skip != "":
		s.suite.Skipped++
		jc.Skipped = &junitMessage{Message: escape.Text(r.Skip)}
	case !r.Outcome.Same():
		s.suite.Failures++
		var b strings.Builder
		msg := ""
		if r.Outcome.Err != nil {
			msg = r.Outcome.Err.Error()
		} else {
			msg = fmt.Sprintf("%d differences", r.Outcome.Diff.Count())
			diff.Render(&b, &r.Outcome.Diff, diff.RenderOptions{Escape: escape.Lines})
		}
		jc.Failure = &junitMessage{Message: escape.Text(msg), Text: strings.ToValidUTF8(b.String(), "\uFFFD")}
		if r.Outcome.Run != nil {
			if tail := StderrTail(r.Outcome.Run.Live, 40); len(tail) > 0 {
				for i, l := range tail {
					tail[i] = escape.Text(l)
				}
				jc.SystemErr = &junitText{Text: strings.Join(tail, "\n") + "\n"}
			}
		}
	}
	s.suite.Cases = append(s.suite.Cases, jc)
}

// Write writes the JUnit XML of the tapes added.
func (s *JUnitSuite) Write(w io.Writer) error {
	suite := s.suite
	suite.Name = "tapedeck"
	suite.Time = fmt.Sprintf("%.3f", s.total.Seconds())
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

// WriteFile writes the JUnit XML of the tapes added to path, atomically.
func (s *JUnitSuite) WriteFile(path string) error {
	return atomicfile.Write(path, s.Write)
}

// HTMLSuite writes a folder of HTML reports a tape at a time (each page as
// its tape ends, so no tape's frames are kept for the end) and their
// index at the end.
type HTMLSuite struct {
	dir     string
	taken   map[string]bool
	entries []htmlreport.IndexEntry
}

// NewHTMLSuite makes the folder dir (less the umask) for a suite's
// reports.
func NewHTMLSuite(dir string) (*HTMLSuite, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	return &HTMLSuite{dir: dir, taken: map[string]bool{"index.html": true}}, nil
}

// Add writes one tape's report as it ends and keeps its index line.
func (s *HTMLSuite) Add(r *playback.TapeResult) error {
	e := htmlreport.IndexEntry{Name: escape.Text(r.Tape)}
	switch {
	case r.Skip != "":
		e.Status, e.Detail = "skip", escape.Text(r.Skip)
	case r.Outcome.Err != nil:
		e.Status, e.Detail = "error", "could not run: "+escape.Text(r.Outcome.Err.Error())
	case r.Outcome.Same():
		e.Status, e.Detail = "ok", "same ("+Duration(r.Elapsed)+")"
	default:
		e.Status, e.Detail = "fail", Count(int64(r.Outcome.Diff.Count()), "difference", "differences")+" ("+Duration(r.Elapsed)+")"
	}
	if r.Outcome != nil {
		name := reportName(r.Tape, s.taken)
		if err := ReplayHTML(filepath.Join(s.dir, name), r.Outcome); err != nil {
			return err
		}
		e.Href = (&url.URL{Path: name}).String()
	}
	s.entries = append(s.entries, e)
	return nil
}

// Finish writes the index of the reports, headed by summary.
func (s *HTMLSuite) Finish(summary string) error {
	return atomicfile.Write(filepath.Join(s.dir, "index.html"), func(w io.Writer) error {
		return htmlreport.Index(w, "tapedeck test: "+summary, s.entries)
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

// TapeLine prints one tape's result of a test run as text: "skip  TAPE
// (why)", "ok    TAPE  TIME", or "FAIL  TAPE  TIME" with why it could not
// run or what differed.
func TapeLine(w io.Writer, r *playback.TapeResult, opt OutcomeOptions) {
	name := escape.Text(r.Tape)
	switch {
	case r.Skip != "":
		fmt.Fprintf(w, "skip  %s  (%s)\n", name, escape.Text(r.Skip))
	case r.Outcome.Same():
		fmt.Fprintf(w, "ok    %s  %s\n", name, Duration(r.Elapsed))
	default:
		fmt.Fprintf(w, "FAIL  %s  %s\n", name, Duration(r.Elapsed))
		if r.Outcome.Err != nil {
			fmt.Fprintf(w, "    could not run: %s\n", escape.Text(r.Outcome.Err.Error()))
		} else {
			OutcomeWith(w, r.Outcome, opt)
		}
	}
}
