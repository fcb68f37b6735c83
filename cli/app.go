package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

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
	app := newApp(stdin, stdout, stderr)
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
}

func newApp(stdin *os.File, stdout, stderr io.Writer) *cli.App {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	usageError := func(c *cli.Context, err error, _ bool) error {
		return fail(2, "%v (see tapedeck %s --help)", err, c.Command.Name)
	}
	app := &cli.App{
		Name:                 "tapedeck",
		Usage:                "record, replay and diff sessions of Agentty plugins",
		Version:              version(),
		Reader:               stdin,
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {},
		OnUsageError:         usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    "store",
				Usage:   "the store folder",
				EnvVars: []string{"TAPEDECK_STORE"},
				Value:   defaultStoreDir(),
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
		},
	}
	for _, c := range app.Commands {
		c.OnUsageError = usageError
	}
	return app
}

// defaultStoreDir is $XDG_DATA_HOME/tapedeck, ~/.local/share/tapedeck, or on
// macOS ~/Library/Application Support/tapedeck.
func defaultStoreDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "tapedeck")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "tapedeck")
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "tapedeck")
	}
	return filepath.Join(home, ".local", "share", "tapedeck")
}
