package playground

// Keeping a session: the host script and the golden tape, into the
// plugin's tapes folder, and a replay of the tape to show it passes.

import (
	"encoding/json"
	"fmt"
	"github.com/tapedeck/tapedeck/internal/golden"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

// Kept is what keeping a session wrote.
type Kept struct {
	T       string `json:"t"`
	Name    string `json:"name"`
	Session string `json:"session"`
	Script  string `json:"script"` // the host script's path
	Tape    string `json:"tape"`   // the golden tape's path
	// Data is the folder beside the tape that holds what the session
	// started from (NAME.data).
	Data string `json:"data"`
	// Test is the tape's first replay, as tapedeck test prints it ("ok",
	// or why not).
	Test string `json:"test"`
	Same bool   `json:"same"`
	// Why says, when it is not the same, why a replay of the session says
	// something else, in words, and what to do (explain.go).
	Why []string `json:"why,omitempty"`
}

// Keep files: NAME.jsonl (the tape) and NAME.host.jsonl (the host script)
// in the tapes folder.
func keepPaths(tapes, name string) (tapePath, scriptPath string) {
	return filepath.Join(tapes, name+".jsonl"), filepath.Join(tapes, name+".host.jsonl")
}

// keep ends the current session the host's way (shutdown) when it still
// runs, writes its host script and tape, replays the tape, and starts the
// plugin afresh. It refuses, the session left running, a tapes folder
// that leads out of the plugin folder, a session whose start could not be
// copied (too large to carry), and NAME's files that are there already
// unless overwrite (an *existsError: the page asks first).
func (s *server) keep(name string, overwrite bool) (*Kept, error) {
	if !isKeepName(name) || strings.HasSuffix(name, ".host") {
		return nil, fmt.Errorf("a kept session's name is a file name of letters, digits, '.', '_' and '-' (not ending in .host), such as greet")
	}
	if err := s.tapesInside(); err != nil {
		return nil, err
	}
	if !overwrite {
		if err := s.existing(name); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	r := s.cur
	if err := r.from.keepable(); err != nil {
		s.mu.Unlock()
		return nil, err // the session left running
	}
	s.stopLocked(r)
	s.mu.Unlock()
	<-r.done // the host's grace periods bound the wait
	if r.result == nil || !r.result.Recorded {
		return nil, fmt.Errorf("the session was not recorded (see tapedeck's messages in the terminal)")
	}
	k, err := s.write(name, r)
	if err != nil {
		return nil, err
	}
	s.sayKept(k)
	s.mu.Lock()
	kb, _ := json.Marshal(k)
	s.kept = append(s.kept, kb)
	s.broadcastLocked(k)
	if !s.ending {
		s.startLocked(nil)
	}
	s.mu.Unlock()
	return k, nil
}

// write writes run r's session as NAME's tape and host script, and what
// it started from beside them, and replays the tape once.
func (s *server) write(name string, r *run) (*Kept, error) {
	id := r.result.Session
	st, warning, err := store.Ready(s.opt.StoreDir, nil)
	if err == nil {
		err = warning // an empty database, a spool not taken in: the session may be missing
	}
	if err != nil {
		return nil, fmt.Errorf("keep: %w", err)
	}
	rec, err := playback.FromStore(st, id)
	if err != nil {
		return nil, fmt.Errorf("keep: %w", err)
	}
	if err := os.MkdirAll(s.tapes, 0o755); err != nil {
		return nil, fmt.Errorf("keep: %w", err)
	}
	if err := s.tapesInside(); err != nil { // as it is now that it is made
		return nil, err
	}
	tapePath, scriptPath := keepPaths(s.tapes, name)
	dataPath, err := s.writeStart(r, tapePath)
	if err != nil {
		return nil, err
	}
	cmd := strings.Join(s.command, " ")
	script := HostScript(rec.Frames,
		fmt.Sprintf("The host's side of a session with %s, kept by tapedeck play: each line waits for what the plugin had said before it.", s.plugin.ID),
		fmt.Sprintf("Record it again from the plugin's folder: tapedeck record --host %s -- %s", relTo(s.plugin.Dir, scriptPath), cmd))
	if err := atomicfile.Write(scriptPath, func(w io.Writer) error { _, err := w.Write(script); return err }); err != nil {
		return nil, fmt.Errorf("keep: %w", err)
	}
	meta := *rec.Meta
	meta.Name = name
	if err := golden.WriteTape(tapePath, meta, rec.Frames, st.RedactKey); err != nil {
		return nil, fmt.Errorf("keep: %w", err)
	}
	k := &Kept{T: "kept", Name: name, Session: id, Script: scriptPath, Tape: tapePath, Data: dataPath}
	res := playback.RunTape(s.ctx, tapePath, &playback.Options{StoreDir: s.opt.StoreDir, Env: s.opt.Env, Timeout: time.Minute})
	switch {
	case res.Skip != "":
		k.Test = "skip: " + res.Skip
	case res.Outcome.Same():
		k.Test, k.Same = "ok    "+relTo(s.plugin.Dir, tapePath)+"  "+present.Duration(res.Elapsed), true
	case res.Outcome.Err != nil:
		k.Test = "could not run: " + res.Outcome.Err.Error()
	default:
		var b strings.Builder
		present.Outcome(&b, res.Outcome)
		k.Test = "FAIL  " + relTo(s.plugin.Dir, tapePath) + "\n" + b.String()
	}
	if !k.Same {
		k.Why = explain(&res, &meta, s.tapesArg())
	}
	return k, nil
}

// tapesArg is the tapes folder as the person names it from the plugin
// folder, for a command to run there.
func (s *server) tapesArg() string { return relTo(s.plugin.Dir, s.tapes) }

// sayKept tells the terminal what Keep it wrote and how its replay went.
func (s *server) sayKept(k *Kept) {
	w := s.opt.Log
	rel := func(p string) string { return escape.Text(relTo(s.plugin.Dir, p)) }
	fmt.Fprintf(w, "tapedeck: play: kept session %s as %s (the golden tape), %s (the host script) and %s/ (the data it started from)\n",
		escape.Text(k.Session), rel(k.Tape), rel(k.Script), rel(k.Data))
	if k.Same {
		fmt.Fprintf(w, "tapedeck: play: its replay passes: tapedeck test %s\n", escape.Text(s.tapesArg()))
		return
	}
	first, _, _ := strings.Cut(k.Test, "\n")
	fmt.Fprintf(w, "tapedeck: play: its replay does not pass: %s\n", escape.Text(first))
	for _, why := range k.Why {
		fmt.Fprintf(w, "tapedeck: play: %s\n", escape.Text(why))
	}
}

// relTo is path relative to dir when it is inside it, else path.
func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
