package cli

// What the commands that read the store share: opening it (recovering what
// dead recorders left), resolving a session reference, compacting.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/store"
)

// openStore opens the store named by --store and ingests what dead recorders
// left behind (store.Ready). A recovery failure is reported, not fatal: it never stops a
// look at what is already stored. A damaged database is: the command ends
// with one line saying so (exit 1), before anything reads it. A 0-byte
// one is named on stderr, once, and read as empty (nothing is ingested
// into it).
//
// Commands that only read never create a store: a missing folder is "no
// store at DIR" (exit 1). openOrMakeStore is for those that add sessions.
func (e *env) openStore(dir string) (*store.Store, error) {
	return e.open(dir, &store.Options{MustExist: true})
}

// openOrMakeStore is openStore, making the store folder when missing.
func (e *env) openOrMakeStore(dir string) (*store.Store, error) {
	return e.open(dir, nil)
}

func (e *env) open(dir string, opts *store.Options) (*store.Store, error) {
	st, warning, err := store.Ready(dir, opts)
	switch {
	case errors.Is(err, store.ErrNoStore):
		return nil, fail(1, "%v (nothing is recorded there yet: tapedeck record or import makes it)", err)
	case err != nil:
		return nil, fail(1, "%v", err)
	case warning != nil:
		// A 0-byte database: nothing is written over it, so the spools
		// wait, and the line says so once instead of once per spool that
		// cannot go in. Or a recovery that failed: what is stored is
		// still read.
		fmt.Fprintf(e.stderr, "tapedeck: %v\n", warning)
	}
	return st, nil
}

// resolveSession resolves a session reference for command cmd, turning the
// store's errors into one line that says what to do.
func resolveSession(st *store.Store, cmd, ref string) (*frame.Session, error) {
	meta, err := st.Resolve(ref)
	switch {
	case err == nil:
		return meta, nil
	case errors.Is(err, store.ErrAmbiguous), errors.Is(err, store.ErrNotFound):
		return nil, fail(1, "%s: %v", cmd, err)
	}
	return nil, fail(1, "%s %s: %v", cmd, ref, err)
}

// homelessStoreDir is the store folder when there is no $HOME: one of the
// user's own in the temporary folder (tapedeck-UID), never one shared by
// every user. store.Open makes it 0700, and refuses it when it is there
// already and someone else owns it or can write it.
func homelessStoreDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("tapedeck-%d", os.Geteuid()))
}

func isBrokenPipe(err error) bool {
	return errors.Is(err, os.ErrClosed) || strings.Contains(err.Error(), "broken pipe")
}

func (e *env) compact(st *store.Store) error {
	before, after, err := st.Compact()
	if errors.Is(err, store.ErrRecording) {
		return fail(1, "gc: %v (nothing was changed)", err)
	}
	if errors.Is(err, store.ErrWouldGrow) {
		fmt.Fprintf(e.stdout, "kept %s as it is: a compacted copy would be %s, the file is %s\n", st.Dir(), formatSize(after), formatSize(before))
		return nil
	}
	if err != nil {
		return fail(1, "gc: %v", err)
	}
	fmt.Fprintf(e.stdout, "compacted %s: %s → %s\n", st.Dir(), formatSize(before), formatSize(after))
	return nil
}

func formatSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
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
