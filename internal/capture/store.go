package capture

// The store's side of a recording: the spool the recorder appends to, the
// redaction and live checking on its way, and the ingest policy at the end.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/recorder"
	"github.com/tapedeck/tapedeck/internal/redact"
	"github.com/tapedeck/tapedeck/internal/relay"
	"github.com/tapedeck/tapedeck/internal/store"
)

// recording is what records one session; a nil *recording records nothing
// (the store could not be had), and its methods still work.
type recording struct {
	log  io.Writer
	id   string
	st   *store.Store
	rec  *recorder.Recorder
	lint *check.Lint
	fp   *fingerprinter
}

// startRecording opens the store and starts the session's spool, with the
// redaction, the live checking and the fingerprint that s asks for. When
// the store cannot be had (or cannot give the redaction key) it says so and
// returns nil: the plugin runs, and nothing is recorded, so that nothing is
// kept unredacted.
func (s *session) startRecording(ctx context.Context) *recording {
	o := &s.opt
	var red *redact.Redactor
	st, err := store.Open(o.StoreDir, nil)
	if err == nil && o.Redact.Wanted() {
		if red, err = redact.NewKeyed(o.Redact, o.RedactKey, st.RedactKey); err != nil {
			err = fmt.Errorf("--redact needs the store's redaction key: %w", err)
		} else {
			red.Session(s.meta) // the header is stored too: name, tags, command, environment
		}
	}
	if err != nil {
		fmt.Fprintf(s.log, "tapedeck: cannot record (%v); the plugin runs unrecorded\n", err)
		return nil
	}
	if red != nil {
		s.meta.Redaction = red.Description()
	}
	r := &recording{log: s.log, id: s.meta.ID, st: st}
	r.rec, _ = recorder.Start(st.SpoolPath(s.meta.ID), s.meta, s.log)
	r.rec.SetMaxLine(o.MaxLine)
	if red != nil {
		r.rec.SetBeforeSave(red.Line)
	}
	// Live checking never writes to the plugin's stderr: that is the host's
	// log, and its lines count toward the host's rate limit.
	if o.Lint != "" {
		lint, err := check.OpenLint(o.Lint, s.meta.ID, s.lintOptions())
		if err != nil {
			fmt.Fprintf(s.log, "tapedeck: --lint: %v; recording without it\n", err)
		} else {
			r.lint = lint
			r.rec.SetObserver(lint.Frame)
		}
	}
	if !o.NoFingerprint {
		r.fp = startFingerprint(ctx, o.Command, s.meta.Cwd, s.env)
	}
	return r
}

// lintOptions is how the live check reads this session: by the profile
// the options name, else by the one its first frames name (found as the
// store will find it), with the manifest of its working directory for
// Agentty's permission rules.
func (s *session) lintOptions() check.Options {
	opts := check.OptionsFor(s.meta.Cwd)
	opts.Framing = s.meta.Framing
	if p, err := profile.Get(s.meta.Profile); err == nil && s.meta.Profile != "" {
		opts.Profile = p
	} else {
		opts.Detect = true
	}
	return opts
}

// sink is what the relay hands every line and event to: the recorder,
// behind the fingerprint's trigger when there is one; nil records nothing.
func (r *recording) sink() relay.Sink {
	switch {
	case r == nil:
		return nil
	case r.fp != nil:
		return r.fp.sink(r.rec)
	}
	return r.rec
}

// finish ends the session as end says, with the lint's findings and the
// fingerprint, and ingests it: a finished spool is complete on its own, so
// a large one is left for the next tapedeck command to ingest, and the
// host sees the plugin's exit at once; one whose end record could not be
// written is ingested now, with the end handed over in memory. It reports
// whether there is a session to show for it (stored, or in its spool).
func (r *recording) finish(end frame.End) bool {
	if r == nil {
		return false
	}
	if r.lint != nil {
		if err := r.lint.Close(); err != nil {
			fmt.Fprintf(r.log, "tapedeck: --lint: %v\n", err)
		}
	}
	if r.fp != nil {
		end.Fingerprint = r.fp.wait()
	}
	w := r.rec.Spool()
	if w == nil {
		return false
	}
	defer w.Close()
	if r.lint != nil {
		if js, err := json.Marshal(check.SessionNotes{Findings: r.lint.Findings()}); err == nil {
			r.rec.Notes(js)
		}
	}
	end.Lost = r.rec.Lost()
	finished := r.rec.Finish(end) == nil
	if finished && w.Size() > ingestInlineMax {
		return true
	}
	err := r.st.Ingest(w.Path(), ingestWait, &end)
	switch {
	case err == nil, errors.Is(err, store.ErrBusy):
	case errors.Is(err, store.ErrSpoolDamaged):
		fmt.Fprintf(r.log, "tapedeck: %v\n", err)
	case r.rec.Warned():
		// The line that said recording failed named the session; the same
		// cause (a full disk) keeps the store from taking it now, and the
		// next command will.
	default:
		fmt.Fprintf(r.log, "tapedeck: session %s stays in %s until the store can take it: %v\n", r.id, w.Path(), err)
	}
	return true
}
