package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
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
		if isCommand && c.Command != nil {
			return usageLine(c.App, c.Command, err)
		}
		return usageLine(c.App, nil, err)
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
				return unknownCommand(c.Args().First(), c.App.Commands)
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
	for _, c := range app.Commands {
		c.OnUsageError = usageError
		if c.BashComplete == nil {
			c.BashComplete = e.complete(completeNothing)
		}
	}
	withExamples(app.Commands)
	helpful(app)
	return app
}

// complete is the BashCompleteFunc of a command (or of the app) whose
// arguments complete to what.
func (e *env) complete(what completes) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		e.completeWord(e.wordBeingCompleted(), what, c.App, c.Command, c.String("store"))
	}
}
