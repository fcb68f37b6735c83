package host

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/note"
)

// timed is tl with times: each line starts with its time in milliseconds
// since the start.
func timed(lines ...string) []frame.Frame {
	plain := make([]string, len(lines))
	at := make([]int64, len(lines))
	for i, l := range lines {
		ms, rest, _ := strings.Cut(l, " ")
		n, err := strconv.ParseFloat(ms, 64)
		if err != nil {
			panic("timed: " + l)
		}
		at[i], plain[i] = int64(n*float64(time.Millisecond)), rest
	}
	fs := tl(plain...)
	for i := range fs {
		fs[i].At = at[i]
	}
	return fs
}

const (
	initialize = `> {"jsonrpc":"2.0","id":1,"method":"initialize"}`
	panelOpen  = `> {"jsonrpc":"2.0","method":"panel/open"}`
	initReply  = `< {"jsonrpc":"2.0","id":1,"result":{}}`
	setPanel   = `< {"jsonrpc":"2.0","id":"p1","method":"ui/setPanel","params":{}}`
	panelSet   = `> {"jsonrpc":"2.0","id":"p1","result":null}`
	click      = `> {"jsonrpc":"2.0","method":"ui/event","params":{"element":"go"}}`
	notify     = `< {"jsonrpc":"2.0","method":"ui/notify","params":{}}`
	badge      = `< {"jsonrpc":"2.0","method":"ui/setBadge","params":{}}`
	shutdown   = `> {"jsonrpc":"2.0","method":"shutdown","params":{}}`
)

// fiveFrames is a session of five host frames whose click is answered
// with a notification and a badge, took milliseconds after it.
func fiveFrames(took int) []frame.Frame {
	at := strconv.Itoa(12 + took)
	return timed(
		"0 "+initialize,
		"1 "+panelOpen,
		"10 "+initReply,
		"11 "+setPanel,
		"12 "+panelSet,
		"12 "+click,
		at+" "+notify,
		at+" "+badge,
		at+" "+shutdown,
		at+" eof",
	)
}

// fivePlugin plays fiveFrames' plugin; onClick is what it does on the click.
func fivePlugin(onClick string) []string {
	return []string{"sh", "-c", `read l; echo '{"jsonrpc":"2.0","id":1,"result":{}}'
read l; echo '{"jsonrpc":"2.0","id":"p1","method":"ui/setPanel","params":{}}'
read l; read l
` + onClick + `
read l`}
}

const (
	saysNotify = `echo '{"jsonrpc":"2.0","method":"ui/notify","params":{}}'`
	saysBadge  = `echo '{"jsonrpc":"2.0","method":"ui/setBadge","params":{}}'`
)

func needSh(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
}

func run(t *testing.T, rec []frame.Frame, opts Options) (*Result, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := Run(context.Background(), rec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res, time.Since(start)
}

func said(res *Result, dir frame.Dir, method string) int {
	n := 0
	for _, f := range res.Live {
		if f.Dir == dir && !f.IsEvent() && strings.Contains(string(f.Raw), `"method":"`+method+`"`) {
			n++
		}
	}
	return n
}

// TestADroppedFrameCostsTheRecordedWait: a plugin that no longer says one
// notification of a five-frame session is given up on after the floor of
// the wait (it took 2 ms in the recording), not after the step timeout,
// and the note says why.
func TestADroppedFrameCostsTheRecordedWait(t *testing.T) {
	t.Parallel()
	needSh(t)
	res, took := run(t, fiveFrames(2), Options{Command: fivePlugin(saysBadge)})
	if took >= 5*time.Second {
		t.Errorf("the replay took %v, want well under 5 s", took)
	}
	if said(res, frame.In, "shutdown") != 1 {
		t.Errorf("shutdown was not sent after the wait was given up")
	}
	// (The time waited is rounded to 10 ms; the timer may fire late.)
	prefix := "host frame seq 9 sent after waiting 2"
	suffix := "s for what the plugin had said before it in the recording, which took 2ms in the recording (a wait is bounded by 10 × its recorded time, at least 2s): ui/notify (recorded seq 7)"
	if len(res.Notes) != 1 || !strings.HasPrefix(res.Notes[0].String(), prefix) || !strings.HasSuffix(res.Notes[0].String(), suffix) {
		t.Errorf("notes %q, want one like %q", res.Notes, prefix+suffix)
	}
	// The same, as data: step 9 gave up after the recorded bound, not the
	// step timeout.
	if len(res.GaveUp) != 1 || res.GaveUp[0].Seq != 9 || res.GaveUp[0].StepTimeout || res.GaveUp[0].Waited < 2*time.Second {
		t.Errorf("gave up on %+v, want step 9 after 2 s, not by the step timeout", res.GaveUp)
	}
}

// TestAHangIsBoundedByTheRecordedWait: a plugin that stops reading and
// writing but stays alive costs the wait the recording allows, then the
// host's grace period, not the step timeout.
func TestAHangIsBoundedByTheRecordedWait(t *testing.T) {
	t.Parallel()
	needSh(t)
	res, took := run(t, fiveFrames(2), Options{Command: fivePlugin("exec sleep 600")})
	if took >= 5*time.Second {
		t.Errorf("the replay took %v, want under 5 s", took)
	}
	signalled := false
	for _, f := range res.Live {
		signalled = signalled || f.Event == frame.EventSignal && f.Signal() == "SIGTERM"
	}
	if !signalled || len(res.Notes) == 0 || !strings.Contains(res.Notes[0].String(), "which took 2ms in the recording") {
		t.Errorf("signalled %v, notes %q", signalled, res.Notes)
	}
}

// TestASlowPluginWithinTheRecordedBoundPasses: a plugin that takes 2.5 s
// where the recording took 400 ms (more than the floor, well within 10 ×
// the recorded wait) is waited for, and the wait, once past 2 s, says
// what it waits for, once.
func TestASlowPluginWithinTheRecordedBoundPasses(t *testing.T) {
	t.Parallel()
	needSh(t)
	type told struct {
		what   string
		waited time.Duration
	}
	var tells []told
	res, _ := run(t, fiveFrames(400), Options{
		Command: fivePlugin("sleep 2.5; " + saysNotify + "; " + saysBadge),
		Waiting: func(what string, waited time.Duration) { tells = append(tells, told{what, waited}) },
	})
	if len(res.Notes) != 0 || said(res, frame.Out, "ui/notify") != 1 {
		t.Errorf("a plugin within the bound was cut short: notes %q", res.Notes)
	}
	want := "ui/notify (recorded seq 7), ui/setBadge (recorded seq 8) before host frame seq 9 (given up after 4s)"
	if len(tells) != 1 || tells[0].what != want || tells[0].waited < 2*time.Second {
		t.Errorf("Waiting was told %+v, want once %q after 2 s", tells, want)
	}
}

// TestTheStartIsNotHeldToTheRecording: a plugin that takes 25 s to start
// where the recording shows 10 ms is waited for (up to the step timeout);
// from its first line on, the recording's times bound the waits again,
// counted from that line: a request it no longer makes 1 ms after it
// costs the floor.
func TestTheStartIsNotHeldToTheRecording(t *testing.T) {
	t.Parallel()
	rec := timed("0 "+initialize, "1 "+panelOpen, "10 "+initReply, "11 "+setPanel, "12 "+panelSet, "12 "+shutdown, "13 eof")
	for _, c := range []struct {
		name     string
		setPanel bool
		want     string
	}{
		{"slow", true, ""},
		{"slow, then a frame dropped", false, "the plugin never made the ui/setPanel request (recorded seq 4) that the host answered at seq 5; the answer was not sent (the wait for the request was given up after waiting 2s for it, which took 1ms in the recording (a wait is bounded by 10 × its recorded time, at least 2s))"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var replied time.Time
				p := fake(func(in *bufio.Reader, say func(string)) {
					time.Sleep(25 * time.Second)
					in.ReadString('\n') // initialize
					say(initReply[2:])
					replied = time.Now()
					in.ReadString('\n') // panel/open
					if c.setPanel {
						say(setPanel[2:])
					}
					in.ReadString('\n') // the panel's answer or shutdown
				})
				began := time.Now()
				res, err := play(context.Background(), makePlan(rec, Reading{}), p, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got := note.Join(res.Notes, "\n"); got != c.want {
					t.Errorf("notes %q, want %q", got, c.want)
				}
				for _, f := range res.Live {
					if f.Dir == frame.In && strings.Contains(string(f.Raw), "shutdown") && !c.setPanel {
						if d := began.Add(time.Duration(f.At)).Sub(replied); d != 2*time.Second {
							t.Errorf("shutdown went %v after the plugin's first line, want 2s", d)
						}
					}
				}
			})
		})
	}
}

// TestARecordingWithoutTimesWaitsTheStepTimeout: without times a
// recording bounds no wait: the step timeout does.
func TestARecordingWithoutTimesWaitsTheStepTimeout(t *testing.T) {
	t.Parallel()
	needSh(t)
	rec := tl(initialize, initReply, shutdown, "eof")
	plugin := []string{"sh", "-c", `read l; sleep 2.5; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; read l`}
	res, _ := run(t, rec, Options{Command: plugin})
	if len(res.Notes) != 0 {
		t.Errorf("notes %q", res.Notes)
	}
}

// fourMissing is a session in which, after a click, four host steps wait
// for frames the plugin said; interleaved, the plugin's report of the
// first answer comes before the host's second answer.
func fourMissing(interleaved bool) []frame.Frame {
	answers := []string{
		`18 > {"jsonrpc":"2.0","id":"p3","result":{}}`,
		`18 > {"jsonrpc":"2.0","id":"p2","result":{}}`,
		"20 " + notify,
	}
	if interleaved {
		answers = []string{
			`18 > {"jsonrpc":"2.0","id":"p3","result":{}}`,
			"19 " + notify,
			`19 > {"jsonrpc":"2.0","id":"p2","result":{}}`,
		}
	}
	return timed(append(append([]string{
		"0 " + initialize,
		"1 " + panelOpen,
		"10 " + initReply,
		"11 " + setPanel,
		"12 " + panelSet,
		"12 " + click,
		"14 " + notify,
		"14 " + badge,
		`15 > {"jsonrpc":"2.0","method":"ui/event","params":{"element":"both"}}`,
		`17 < {"jsonrpc":"2.0","id":"p2","method":"prompt/inject","params":{}}`,
		`17 < {"jsonrpc":"2.0","id":"p3","method":"terminal/send","params":{}}`,
	}, answers...), "20 "+notify, "21 "+shutdown, "22 eof")...)
}

// TestARequestGivenUpOnIsNotWaitedForAgain: once a wait gave up on the
// plugin's two requests, the answer to the second is not another wait, and
// what the plugin said before it is waited for with the next host frame:
// three waits of the floor in all, however the recording interleaved the
// plugin's reports with the host's answers.
func TestARequestGivenUpOnIsNotWaitedForAgain(t *testing.T) {
	t.Parallel()
	for _, interleaved := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			p := fake(func(in *bufio.Reader, say func(string)) {
				in.ReadString('\n') // initialize
				say(initReply[2:])
				in.ReadString('\n') // panel/open
				say(setPanel[2:])
				for _, err := in.ReadString('\n'); err == nil; _, err = in.ReadString('\n') {
				}
			})
			res, err := play(context.Background(), makePlan(fourMissing(interleaved), Reading{}), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Elapsed != 6*time.Second {
				t.Errorf("interleaved %v: the replay took %v, want 3 × 2s; notes %q", interleaved, res.Elapsed, res.Notes)
			}
		})
	}
}

// TestFourMissingFramesAfterAnException: a plugin whose handler threw on
// the click says nothing more. Alive, it costs the recorded bound per wait
// (a request given up on is not waited for again at its answer); exited,
// nothing is waited for.
func TestFourMissingFramesAfterAnException(t *testing.T) {
	t.Parallel()
	needSh(t)
	for _, c := range []struct{ name, onClick string }{
		{"alive", "echo 'TypeError: x is undefined' >&2; while read l; do :; done"},
		{"exited", "echo 'TypeError: x is undefined' >&2; exit 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, took := run(t, fourMissing(false), Options{Command: fivePlugin(c.onClick)})
			if took >= 10*time.Second {
				t.Errorf("the replay took %v, want under 10 s", took)
			}
			notes := note.Join(res.Notes, "\n")
			waited := strings.Count(notes, "after waiting")
			switch c.name {
			case "alive":
				if waited != 3 || !strings.Contains(notes, "ui/notify (recorded seq 7), ui/setBadge (recorded seq 8)") || !strings.Contains(notes, "never made the prompt/inject request") {
					t.Errorf("notes:\n%s", notes)
				}
			case "exited":
				if waited != 0 || !strings.Contains(notes, "the plugin exited before host frame seq 9") {
					t.Errorf("a wait outlived the plugin; notes:\n%s", notes)
				}
			}
		})
	}
}

// TestPlanTook: each step's recorded wait runs from the previous host
// step to the last frame it waits for (an answer: its request too), and
// from the plugin's first line while it had said nothing before.
func TestPlanTook(t *testing.T) {
	t.Parallel()
	p := makePlan(timed(
		"5 "+initialize,
		"300 "+initReply,
		"320 "+setPanel,
		"1000 "+panelOpen,
		"1300 "+panelSet,
		"1350 "+notify,
		"1400 "+click,
		"1500 "+shutdown,
		"1700 "+badge,
	), Reading{})
	var got []string
	for _, st := range p.steps {
		s := st.tookOf().d.String()
		if st.tookOf().fromStart {
			s += " from the first line"
		}
		got = append(got, s)
	}
	got = append(got, "tail "+p.tailTook.d.String())
	want := "0s from the first line, 20ms from the first line, 0s, 50ms, 0s, tail 200ms"
	if strings.Join(got, ", ") != want || !p.timed {
		t.Errorf("took %s, want %s (timed %v)", strings.Join(got, ", "), want, p.timed)
	}
	if makePlan(tl(initialize, initReply), Reading{}).timed {
		t.Error("a recording without times is timed")
	}
}

// fake is a plugin run by body in the test's own process, with pipes of
// its own: inside a synctest bubble its waits take no real time.
func fake(body func(in *bufio.Reader, say func(string))) Plugin {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(bufio.NewReader(inR), func(line string) { io.WriteString(outW, line+"\n") })
		outW.Close()
		inR.Close()
	}()
	return Plugin{
		Stdin: inW, Stdout: outR,
		Signal: func(os.Signal) error { return nil },
		Wait:   func() Exit { <-done; return Exit{} },
	}
}

// TestTheBoundOfAWait measures the rule on the clock of a synctest
// bubble: a plugin that says what the host waits for just within
// min(StepTimeout, max(MinWait, WaitFactor × the recorded wait)) is waited
// for; just after it, it is given up on at that bound exactly. A wait
// that lasts more than 2 s tells Waiting once.
func TestTheBoundOfAWait(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		took  int           // ms, in the recording
		delay time.Duration // live
		opts  Options
		bound time.Duration // 0: the plugin is within it
	}{
		{"the floor", 2, 1900 * time.Millisecond, Options{}, 0},
		{"past the floor", 2, 2100 * time.Millisecond, Options{}, 2 * time.Second},
		{"10 × the recorded wait", 400, 3900 * time.Millisecond, Options{}, 0},
		{"past 10 × the recorded wait", 400, 4100 * time.Millisecond, Options{}, 4 * time.Second},
		{"capped by StepTimeout", 400, 3100 * time.Millisecond, Options{StepTimeout: 3 * time.Second}, 3 * time.Second},
		{"another factor", 400, 1100 * time.Millisecond, Options{WaitFactor: 3, MinWait: time.Second}, 0},
		{"past another factor", 400, 1300 * time.Millisecond, Options{WaitFactor: 3, MinWait: time.Second}, 1200 * time.Millisecond},
		{"MinWait of StepTimeout", 2, 29 * time.Second, Options{MinWait: 30 * time.Second}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var clicked time.Time
				p := fake(func(in *bufio.Reader, say func(string)) {
					in.ReadString('\n') // initialize
					say(initReply[2:])
					in.ReadString('\n') // panel/open
					say(setPanel[2:])
					in.ReadString('\n') // the panel's answer
					in.ReadString('\n') // the click
					clicked = time.Now()
					time.Sleep(c.delay)
					say(notify[2:])
					say(badge[2:])
					in.ReadString('\n') // shutdown
				})
				tells := 0
				c.opts.Waiting = func(string, time.Duration) { tells++ }
				began := time.Now() // the replay's start: the bubble's clock stands still until all wait
				res, err := play(context.Background(), makePlan(fiveFrames(c.took), Reading{}), p, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				var sent time.Duration // after the click
				for _, f := range res.Live {
					if f.Dir == frame.In && strings.Contains(string(f.Raw), "shutdown") {
						sent = began.Add(time.Duration(f.At)).Sub(clicked)
					}
				}
				switch {
				case c.bound == 0 && len(res.Notes) != 0:
					t.Errorf("a plugin %v late where the recording took %d ms was given up on: %q", c.delay, c.took, res.Notes)
				case c.bound == 0:
				case len(res.Notes) != 1 || !strings.Contains(res.Notes[0].String(), "ui/notify (recorded seq 7), ui/setBadge (recorded seq 8)"):
					t.Errorf("notes %q, want the frames given up on", res.Notes)
				case sent != c.bound:
					t.Errorf("shutdown went %v after the click, want %v", sent, c.bound)
				}
				waited := c.delay
				if c.bound > 0 {
					waited = c.bound
				}
				if want := map[bool]int{true: 1}[waited > 2*time.Second]; tells != want {
					t.Errorf("a wait of %v told Waiting %d times, want %d", waited, tells, want)
				}
			})
		})
	}
}

// TestTheTimeLimitSaysWhatItWaitedFor: a replay that its time limit ends
// in the middle of a wait says what it waited for (the recorded frame),
// how long it had waited, and the wait's own bound.
func TestTheTimeLimitSaysWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	needSh(t)
	rec := timed("0 "+initialize, "5 "+initReply, "6 "+panelOpen, "7 "+shutdown, "8 eof")
	res, _ := run(t, rec, Options{Command: []string{"sh", "-c", "while read l; do :; done"}, Timeout: 500 * time.Millisecond, StepTimeout: 30 * time.Second})
	if !res.TimedOut {
		t.Fatalf("the replay did not time out: %q", res.Notes)
	}
	got := note.Join(res.Notes, "\n")
	// It had waited about the limit, not the wait's own bound: a little
	// less, as the wait began once the plugin had started and initialize
	// was written (CI's clean clone of 07684f9 measured 499ms, at load
	// 1.9), or more when a loaded machine ran the timer late (617ms under
	// the race detector at load 7.6).
	want := regexp.MustCompile(`^the replay ran longer than its time limit \(500ms, --timeout\) while it waited (\S+) for reply to id 1 \(recorded seq 2\) before host frame seq 3 \(given up after 30s\): the plugin was killed$`)
	m := want.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("notes %q, want %s", got, want)
	}
	waited, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatalf("notes %q: the wait %q is not a duration: %v", got, m[1], err)
	}
	if waited < 250*time.Millisecond || waited >= 30*time.Second {
		t.Errorf("notes %q: waited %v, want about the 500ms limit (250ms to under the 30s bound)", got, waited)
	}
}
