package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// exitError carries an exit code; an empty message prints nothing.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// fail returns an error that exits with code and prints one line.
func fail(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// Run runs the command line args (args[0] is the program's name) with
// the streams given and returns the exit status: 0 success, 1 failure, 2 a
// usage error, or what the command says (a recorded plugin's own status).
// It is the only place that maps errors to exit codes.
func Run(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	return runAs(args, stdin, stdout, stderr, os.Environ(), true)
}

// run is Run in the environment environ (what os.Environ gives a process):
// the tests run commands in process with environments of their own.
func run(args []string, stdin *os.File, stdout, stderr io.Writer, environ []string) int {
	return runAs(args, stdin, stdout, stderr, environ, false)
}

// runAs is run; owner says the command owns its process (Run), and may
// set what is the whole process's (see limitMemory).
func runAs(args []string, stdin *os.File, stdout, stderr io.Writer, environ []string, owner bool) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, args: args, environ: environ, ownsProcess: owner}
	if slices.Contains(args, completeFlag) {
		return e.completeOnly(args) // a shell's Tab: completion and nothing else, wherever the flag stands
	}
	app := newApp(e)
	err := app.Run(intersperse(app, args))
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(stderr, "tapedeck: %s\n", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "tapedeck: %v\n", err)
	return 1
}

func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// env is what every command needs from its surroundings.
type env struct {
	stdin          *os.File
	stdout, stderr io.Writer
	// args is the command line as given, for shell completion, which
	// needs the word being completed.
	args []string
	// environ is the environment, as os.Environ gives it: the commands
	// read variables from it and start plugins in it.
	environ []string
	// ownsProcess is set when the command runs as the process (not in the
	// process of a test): it may set the Go runtime's limits.
	ownsProcess bool
}

// getenv is the value of the variable key in the environment ("" when
// unset), the last one when it is set twice.
func (e *env) getenv(key string) string {
	for i := len(e.environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// redactKey is $TAPEDECK_REDACT_KEY: this machine's redaction key when
// set, nil otherwise (the store's own key is used then).
func (e *env) redactKey() []byte {
	if v := e.getenv("TAPEDECK_REDACT_KEY"); v != "" {
		return []byte(v)
	}
	return nil
}

func newApp(e *env) *cli.App {
	// Every usage error (an unknown flag or command, a missing or extra
	// argument) is one line on stderr and exit status 2.
	usageError := func(c *cli.Context, err error, isCommand bool) error {
		hint := didYouMean(c, err, isCommand)
		if isCommand {
			return fail(2, "%v%s (see tapedeck %s --help)", err, hint, c.Command.Name)
		}
		return fail(2, "%v%s (see tapedeck --help)", err, hint)
	}
	app := &cli.App{
		Name:                 "tapedeck",
		Usage:                "record, replay and diff sessions of JSON-RPC peers: Agentty plugins, MCP servers, language servers",
		Version:              version(),
		Reader:               e.stdin,
		Writer:               e.stdout,
		ErrWriter:            e.stderr,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {},
		OnUsageError:         usageError,
		// Without a command: the help; with one that does not exist, a
		// usage error (urfave/cli would say "No help topic" and exit 1).
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				name := c.Args().First()
				var names []string
				for _, cmd := range c.App.Commands {
					names = append(names, cmd.Names()...)
				}
				hint := ""
				if near := closest(name, names); near != "" {
					hint = fmt.Sprintf(": did you mean %q?", near)
				}
				return fail(2, "unknown command %q%s (see tapedeck --help)", name, hint)
			}
			return cli.ShowAppHelp(c)
		},
		BashComplete: e.complete(completeCommands),
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    "store",
				Usage:   "the store folder",
				EnvVars: []string{"TAPEDECK_STORE"},
				Value:   defaultStoreDir(e.getenv),
			},
		},
		Commands: []*cli.Command{
			e.recordCommand(),
			e.lsCommand(),
			e.exportCommand(),
			e.showCommand(),
			e.importCommand(),
			e.rmCommand(),
			e.gcCommand(),
			e.checkCommand(),
			e.verifyCommand(),
			e.wrapCommand(),
			e.unwrapCommand(),
			e.doctorCommand(),
			e.replayCommand(),
			e.testCommand(),
			e.diffCommand(),
			e.reviewCommand(),
			e.coverageCommand(),
			e.shrinkCommand(),
			e.playCommand(),
			e.completionCommand(),
			e.textconvCommand(),
		},
	}
	quietDefaults(app.Flags)
	for _, c := range app.Commands {
		c.OnUsageError = usageError
		quietDefaults(c.Flags)
		if c.BashComplete == nil {
			c.BashComplete = e.complete(completeNothing)
		}
	}
	app.CustomAppHelpTemplate = appHelp(app.Commands)
	return app
}

// taskGroups groups the commands in --help by task, in this order.
var taskGroups = []struct {
	task     string
	commands []string
}{
	{"capture", []string{"record", "wrap", "unwrap", "doctor"}},
	{"look", []string{"ls", "show", "export", "import", "textconv"}},
	{"test", []string{"test", "replay", "review", "diff", "coverage"}},
	{"debug", []string{"check", "shrink", "play"}},
	{"set-up", []string{"completion", "verify", "rm", "gc"}},
}

// appHelp is the help template of the app: urfave/cli's, with the
// commands by task in taskGroups' order (its own sorts the groups by
// name). A command no group names is listed last, so none is hidden.
func appHelp(cmds []*cli.Command) string {
	byName := map[string]*cli.Command{}
	width := 0
	for _, c := range cmds {
		byName[c.Name] = c
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	listed := map[string]bool{}
	line := func(c *cli.Command) {
		fmt.Fprintf(&b, "     %-*s  %s\n", width, c.Name, c.Usage)
		listed[c.Name] = true
	}
	for _, g := range taskGroups {
		fmt.Fprintf(&b, "   %s:\n", g.task)
		for _, n := range g.commands {
			if c := byName[n]; c != nil {
				line(c)
			}
		}
	}
	for _, c := range cmds {
		if !listed[c.Name] {
			line(c)
		}
	}
	commands := strings.NewReplacer("{{", `{{"{{"}}`).Replace(b.String())
	return `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{.HelpName}} [global options] command [command options]{{if .Version}}{{if not .HideVersion}}

VERSION:
   {{.Version}}{{end}}{{end}}

COMMANDS (tapedeck COMMAND --help for each):
` + commands + `
GLOBAL OPTIONS:{{template "visibleFlagTemplate" .}}
`
}

// quietDefaults keeps "(default: false)" off the help of switches that
// are off unless given.
func quietDefaults(flags []cli.Flag) {
	for _, f := range flags {
		if b, ok := f.(*cli.BoolFlag); ok && !b.Value {
			b.DisableDefaultText = true
		}
	}
}

// didYouMean is ": did you mean --NAME?" for a usage error about a flag
// that is not the command's but is close to one of its flags, else "".
func didYouMean(c *cli.Context, err error, isCommand bool) string {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	i := strings.Index(msg, undefined)
	if i < 0 {
		return ""
	}
	given := strings.TrimLeft(msg[i+len(undefined):], "-")
	flags := c.App.Flags
	if isCommand && c.Command != nil {
		flags = c.Command.Flags
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	near := closest(given, names)
	if near == "" {
		return ""
	}
	dashes := "--"
	if len(near) == 1 {
		dashes = "-"
	}
	return fmt.Sprintf(": did you mean %s%s?", dashes, near)
}

// closest is the name of names nearest to given, when it is near enough
// to be a slip (an edit distance, a swap of two letters counting one, of
// at most a third of its length, and at least one); "" otherwise.
func closest(given string, names []string) string {
	best, bestD := "", max(1, len(given)/3)+1
	for _, n := range names {
		if d := editDistance(given, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours, one each.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// defaultStoreDir is $XDG_DATA_HOME/tapedeck, ~/.local/share/tapedeck, or on
// macOS ~/Library/Application Support/tapedeck.
func defaultStoreDir(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "tapedeck")
	}
	home := getenv("HOME")
	if home == "" {
		return homelessStoreDir()
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "tapedeck")
	}
	return filepath.Join(home, ".local", "share", "tapedeck")
}

// complete is the BashCompleteFunc of a command (or of the app) whose
// arguments complete to what.
func (e *env) complete(what completes) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		e.completeWord(e.wordBeingCompleted(), what, c.App, c.Command, c.String("store"))
	}
}
