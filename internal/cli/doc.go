// Package cli is tapedeck's command line: it builds the urfave/cli app,
// runs it, and maps what the commands return to exit codes (Run is the
// only place that does).
//
// Each command has a file of its own, cmd_NAME.go: its flags, its help,
// and an action that turns the flags into typed options, makes one call
// into a use case (package recording or playback, or a library such as
// store, check or wrap) and renders the result (package render). What two
// commands share lives in a file named for what it is (replayflags.go,
// the flags of the comparing commands bound to their values; store.go,
// opening the store; redaction.go; pending.go; completion.go; args.go) and
// never sees urfave/cli's Context. commandfiles_test.go holds that no
// file uses what a command file declares, that only command files see the
// Context, and that no command file is over 200 lines; deps_test.go at the
// module root that cli imports none of the relay, recorder, spool, replay
// or diff. Inside this package, the identifier cli names urfave/cli.
package cli
