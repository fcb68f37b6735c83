package cli

// The flags every comparing command shares (replay, test, shrink, diff),
// bound to the typed options they become.

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/playback"
)

// compareValues are the flags that say how two recordings are compared.
type compareValues struct {
	ignore        cli.StringSlice
	strict        bool
	compareStderr bool
}

// flags declares them; beside names what tapedeck.json is read beside.
func (v *compareValues) flags(beside string) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "ignore", Destination: &v.ignore, Usage: "leave out `METHOD:PATH` when comparing (repeatable; also read from tapedeck.json beside " + beside + ")"},
		&cli.BoolFlag{Name: "strict", Destination: &v.strict, Usage: "compare bytes: member order and white space matter"},
		&cli.BoolFlag{Name: "compare-stderr", Destination: &v.compareStderr, Usage: "compare the plugin's stderr lines too"},
	}
}

func (v *compareValues) options() *playback.CompareOptions {
	return &playback.CompareOptions{Ignore: v.ignore.Value(), Strict: v.strict, CompareStderr: v.compareStderr}
}

// replayValues are the flags of replay, test and shrink: how to compare,
// then how to run the plugin.
type replayValues struct {
	compare                     compareValues
	stepTimeout, timeout, quiet time.Duration
	minWait, maxGap             time.Duration
	verbose                     bool
	pace                        string
	pinClock                    bool
	pinClockSet                 int // times --pin-clock was given
	freshDirs                   cli.StringSlice
	setEnv                      settings
	cwd                         string
}

func (v *replayValues) flags() []cli.Flag {
	return append(v.compare.flags("the tape"),
		&cli.DurationFlag{Name: "step-timeout", Destination: &v.stepTimeout, Value: 30 * time.Second, Usage: "longest wait for the frames the plugin said before a host frame in the recording; each wait is bounded sooner by 10 × what it took in the recording (at least --min-wait)"},
		&cli.DurationFlag{Name: "min-wait", Destination: &v.minWait, Value: 2 * time.Second, Usage: "shortest bound of a wait for the plugin's frames, however fast the recording was (--min-wait set to --step-timeout waits --step-timeout each time)"},
		&cli.DurationFlag{Name: "timeout", Destination: &v.timeout, Value: 3 * time.Minute, Usage: "longest a whole replay may take; past it the plugin is killed and the replay fails"},
		&cli.DurationFlag{Name: "quiet", Destination: &v.quiet, Usage: "also wait, before each host frame, until the plugin has said nothing for this long (default off: frames are waited for, never silence)"},
		&cli.BoolFlag{Name: "verbose", Destination: &v.verbose, Aliases: []string{"v"}, Usage: "say what runs: the command, its folder and the variables added"},
		&cli.StringFlag{Name: "pace", Destination: &v.pace, Value: "asap", Usage: "asap, realtime, or xN (the recorded gaps divided by N)"},
		&cli.DurationFlag{Name: "max-gap", Destination: &v.maxGap, Value: 2 * time.Second, Usage: "clamp each paced gap to this"},
		&cli.BoolFlag{Name: "pin-clock", Destination: &v.pinClock, Count: &v.pinClockSet, Usage: "pin the plugin's clock as recorded (the default when the tape was recorded with --pin-clock); --pin-clock=false runs it on the real clock; on a tape recorded without it, pins the clock to the recorded start"},
		&cli.StringSliceFlag{Name: "fresh-dir", Destination: &v.freshDirs, Usage: "set the variable `NAME` to a folder of each run's own, removed after it: the folder a plugin keeps its state in (say MYPLUGIN_HOME), so that runs share nothing and none writes the real one. It starts as a copy of the one the tape carries (NAME.data/env/NAME, which play's \"Keep it\" writes), else empty; a run that leaves it unused says so. The plugin's data folder (Agentty's dataDir) is always each run's own (repeatable)"},
		&cli.GenericFlag{Name: "env", Value: &v.setEnv, Usage: "set `NAME=VALUE` for the plugin, over what the recording kept (record --env) and over ours (repeatable; the value is taken whole, commas and all)"},
	)
}

// cwdFlag is the --cwd of replay, test and shrink, with its usage.
func (v *replayValues) cwdFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "cwd", Destination: &v.cwd, Usage: usage}
}

// options are the playback options the flags ask for; argv replaces the
// recorded command, environ is the plugin's environment (before the
// recording's variables), storeDir is where this machine's redaction key
// is when redactKey is nil. With -v, what runs is said on stderr; with
// sayWaits and stderr a terminal, so is a wait of more than 2 s.
func (v *replayValues) options(argv, environ []string, storeDir string, redactKey []byte, stderr io.Writer, sayWaits bool) (*playback.Options, error) {
	pace, err := parsePace(v.pace)
	if err != nil {
		return nil, err
	}
	for _, kv := range v.setEnv {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsAny(k, " \t\n\x00") {
			return nil, fmt.Errorf("--env %q: want NAME=VALUE, such as --env MEMORY_FILE_PATH=/tmp/memory.json", kv)
		}
	}
	o := &playback.Options{
		Command:       argv,
		Dir:           v.cwd,
		Env:           environ,
		Ignore:        v.compare.ignore.Value(),
		Strict:        v.compare.strict,
		CompareStderr: v.compare.compareStderr,
		StepTimeout:   v.stepTimeout,
		MinWait:       v.minWait,
		Timeout:       v.timeout,
		Quiet:         v.quiet,
		Pace:          pace,
		MaxGap:        v.maxGap,
		StoreDir:      storeDir,
		RedactKey:     redactKey,
		FreshDirs:     v.freshDirs.Value(),
		SetEnv:        v.setEnv,
	}
	if v.verbose {
		o.AlwaysDrift = true
		o.OnStart = func(s playback.Start) { present.Start(stderr, s) }
	}
	if sayWaits && screen.IsTerminal(stderr) {
		o.Waiting = func(what string, waited time.Duration) {
			fmt.Fprintf(stderr, "tapedeck: waiting %s for %s\n", present.Duration(waited), escape.Text(what))
		}
	}
	if v.pinClockSet > 0 {
		pin := v.pinClock
		o.PinClock = &pin
	}
	return o, nil
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

// runsAtOnce is replay --runs' default -j: one more than the CPUs, as a
// replay leaves its core idle while its plugin starts and between its
// turns (on 2 cores, -j 3 made 8–18 % more replays a minute than -j 2).
func runsAtOnce() int { return runtime.NumCPU() + 1 }

// settings are the values of a repeatable flag taken whole: unlike a
// string slice flag's, a value is never split at its commas (a variable's
// value may hold some).
type settings []string

// Set implements cli.Generic.
func (s *settings) Set(v string) error { *s = append(*s, v); return nil }

// String implements cli.Generic.
func (s *settings) String() string { return strings.Join(*s, " ") }
