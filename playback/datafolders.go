package playback

// Each run's own folders: the data folder the host named to the plugin
// (its profile says which: Agentty's dataDir and AGENTTY_PLUGIN_DATA) and
// the folders of the variables named for a fresh start (FreshDirs, and
// those the tape's data carries) start as copies of what the recording
// started from, made for the run and removed after it, so that runs at
// once share nothing and none writes the real folder. Where the host
// frames said the recorded folder, the run's is said (host.Options.Moved),
// and what the plugin says of the run's is compared as the recorded one.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/datafolder"
	"github.com/tapedeck/tapedeck/internal/environ"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/message"
)

// folders is what every run of a recording is given of its own, worked
// out once (see foldersOf).
type folders struct {
	// carried is the tape's data folder ("": it carries none), start what
	// it holds.
	carried string
	start   *datafolder.Start
	// data is the data folder the host named in the recording (nil:
	// none), given to each run as a copy.
	data *profile.Folder
	// dataPaths are the paths the recording gave the data folder: the
	// profile's reading, and the tape data's when it says another.
	dataPaths []string
	// vars are the variables given a folder of the run's own, in order.
	vars []freshVar
	// recorded are the recorded paths a run's folders stand for
	// (host.Reading.Moved).
	recorded []string
}

// freshVar is a variable given a folder of the run's own.
type freshVar struct {
	name string
	// recorded is the path the recording gave it ("": unknown); carried,
	// whether the tape's data holds its folder; named, whether the
	// options name it (FreshDirs), not only the tape's data.
	recorded string
	carried  bool
	named    bool
}

// foldersOf works out the folders of rec's runs under opt: the tape's
// data (datafolder.Read), the data folder its profile reads from the
// recording's opening request, the variables of opt.FreshDirs and of the
// tape's data. A bad variable name, or tape data that cannot be read, is
// an error.
func foldersOf(rec *Recording, prof profile.Profile, opt *Options) (*folders, error) {
	fs := &folders{}
	if rec.TapePath != "" {
		dir, start, err := datafolder.Read(rec.TapePath)
		if err != nil {
			return nil, err
		}
		fs.carried, fs.start = dir, start
	}
	if f, ok := prof.DataFolder(openingRequest(rec.Frames, prof)); ok && (f.Own || fs.start != nil && fs.start.Data != "") {
		fs.data = &f
		fs.dataPaths = append(fs.dataPaths, f.Path)
		if fs.start != nil && fs.start.Data != "" && fs.start.Data != f.Path {
			fs.dataPaths = append(fs.dataPaths, fs.start.Data)
		}
		fs.recorded = append(fs.recorded, fs.dataPaths...)
	}
	seen := map[string]bool{}
	add := func(name string, named bool) error {
		if !envName.MatchString(name) || name == "PATH" || strings.HasPrefix(name, "TAPEDECK_") || name == "NODE_OPTIONS" || name == "PYTHONPATH" {
			return fmt.Errorf("--fresh-dir %q: want the name of the variable the plugin reads its data folder from, such as COSMICA_HOME", name)
		}
		if seen[name] {
			return nil
		}
		seen[name] = true
		v := freshVar{name: name, named: named, recorded: rec.Meta.Env[name]}
		if fs.start != nil {
			if p, ok := fs.start.Env[name]; ok {
				v.carried = true
				if p != "" {
					v.recorded = p
				}
			}
		}
		if v.recorded != "" {
			fs.recorded = append(fs.recorded, v.recorded)
		}
		fs.vars = append(fs.vars, v)
		return nil
	}
	for _, name := range opt.FreshDirs {
		if err := add(name, true); err != nil {
			return nil, err
		}
	}
	if fs.start != nil {
		for _, name := range fs.start.Vars() {
			if err := add(name, false); err != nil {
				return nil, err
			}
		}
	}
	return fs, nil
}

// openingRequest is the recording's first host request, when its profile
// takes it to open the session (Agentty's initialize); nil otherwise.
func openingRequest(frames []frame.Frame, prof profile.Profile) *message.Message {
	for i := range frames {
		f := &frames[i]
		if f.IsEvent() || f.Dir != frame.In || f.Cut != nil {
			continue
		}
		raw := bytes.TrimSuffix(f.Raw, []byte("\r"))
		if message.ReadEnvelope(raw).Kind != message.Request {
			continue // read without a copy: a recording may hold nothing else
		}
		m := message.Parse(raw)
		if !prof.Opening(m.Method) {
			return nil
		}
		return &m
	}
	return nil
}

// runFolders are one run's folders: made for it, removed by Close.
type runFolders struct {
	made  []string          // the folders made, to remove
	moved map[string]string // recorded path → the run's
	notes []note.Note
	// watch watches the folders of the variables named for a fresh
	// start, watchDirs; watched are their variables.
	watch     *datafolder.Watcher
	watchDirs []string
	watched   []string
}

// make makes one run's folders and sets their variables in env: the data
// folder a copy of the tape's (else, for the plugin's own folder, of the
// recorded folder as it is now, within datafolder.Carried; else empty),
// each variable's a copy of the tape's (else empty).
func (fs *folders) make(env []string) (*runFolders, []string, error) {
	rf := &runFolders{moved: map[string]string{}}
	if fs == nil {
		return rf, env, nil
	}
	mk := func(prefix, name string) (string, error) {
		d, err := os.MkdirTemp("", prefix)
		if err == nil {
			rf.made = append(rf.made, d)
			// The copy is made inside the folder made, which names the run.
			d = filepath.Join(d, name)
		}
		return d, err
	}
	if f := fs.data; f != nil {
		dir, err := mk("tapedeck-data-", "data")
		if err != nil {
			rf.Close()
			return nil, nil, fmt.Errorf("the plugin's data folder: %w", err)
		}
		switch {
		case fs.start != nil && fs.start.Data != "":
			_, err = datafolder.Fill(dir, datafolder.DataDir(fs.carried))
		case f.Own:
			err = rf.copyNow(dir, f.Path)
		}
		if err == nil {
			err = ensureDir(dir)
		}
		if err != nil {
			rf.Close()
			return nil, nil, fmt.Errorf("the plugin's data folder: %w", err)
		}
		for _, p := range fs.dataPaths {
			rf.moved[p] = dir
		}
		if f.Env != "" {
			env = environ.Set(env, f.Env, dir)
		}
	}
	for _, v := range fs.vars {
		dir, err := mk("tapedeck-fresh-"+strings.ToLower(v.name)+"-", v.name)
		if err == nil {
			if v.carried {
				_, err = datafolder.Fill(dir, datafolder.EnvDir(fs.carried, v.name))
			} else {
				err = os.Mkdir(dir, 0o700)
			}
		}
		if err != nil {
			rf.Close()
			return nil, nil, fmt.Errorf("--fresh-dir %s: %w", v.name, err)
		}
		env = environ.Set(env, v.name, dir)
		if v.recorded != "" {
			rf.moved[v.recorded] = dir
		}
		rf.watched = append(rf.watched, v.name)
		rf.watchDirs = append(rf.watchDirs, dir)
	}
	return rf, env, nil
}

// copyNow makes dir a copy of the recorded folder path as it is here
// now, for a tape that carries no copy of it, and says so; an empty one
// when path is not here, or is too large to copy (said too).
func (rf *runFolders) copyNow(dir, path string) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return os.Mkdir(dir, 0o700)
	}
	_, err = datafolder.Copy(dir, path, datafolder.Carried)
	switch {
	case errors.Is(err, datafolder.ErrTooLarge):
		rf.notes = append(rf.notes, note.Textf("the plugin's data folder %s holds more than a replay copies (%s): this run started from an empty one (the tape carries no copy of the data its session started from; tapedeck play's Keep it carries one)", path, datafolder.Carried))
		return os.Mkdir(dir, 0o700)
	case err != nil:
		return err
	}
	rf.notes = append(rf.notes, note.Textf("the tape carries no copy of the data its session started from (tapedeck play's Keep it carries one): this run started from a copy of the plugin's data folder %s as it is now", path))
	return nil
}

// ensureDir makes dir when it is not there yet.
func ensureDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	return os.Mkdir(dir, 0o700)
}

// startWatch starts watching the folders of the variables named for a
// fresh start, once they hold what the run starts from.
func (rf *runFolders) startWatch() {
	if len(rf.watchDirs) > 0 {
		rf.watch = datafolder.Watch(rf.watchDirs)
	}
}

// unused are the notes for the folders of variables named for a fresh
// start that the run did not use.
func (rf *runFolders) unused() []note.Note {
	if rf.watch == nil {
		return nil
	}
	var out []note.Note
	for i, u := range rf.watch.Uses() {
		if u == datafolder.Unused {
			out = append(out, note.Note{Kind: note.Unused, Text: rf.watched[i]})
		}
	}
	return out
}

// Close removes the run's folders.
func (rf *runFolders) Close() {
	if rf.watch != nil {
		rf.watch.Close()
	}
	for _, d := range rf.made {
		os.RemoveAll(d)
	}
}
