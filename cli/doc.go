// Package cli is tapedeck's command line: it builds the urfave/cli app,
// runs it, and maps what the commands return to exit codes (Run is the
// only place that does).
//
// Each command has a file of its own, cmd_NAME.go, holding its flags, its
// help and its action, and nothing another command uses: what two commands
// share (opening the store and resolving a session, reading a tape,
// running and reporting a replay, the timeline renderer, redaction flags,
// ignore rules, writing files atomically) lives in a file named for what it
// is, and escaping and fitting output to the terminal in the packages
// escape and screen under internal/. deps_test.go checks that no file uses
// what a command file declares.
//
// The work itself is done by the packages the commands call (proxy,
// recorder, store, tape, replay, diff, check, …); this package only reads
// flags, calls them and prints. Inside it, the identifier cli names
// urfave/cli.
package cli
