package playground

// What --watch looks at, how it hears of a change (inotify where the
// system has it, else a look at the files every WatchEvery), and which
// changes are the plugin's own: those do not restart it.
//
// The plugin folder is watched but for hidden folders, node_modules, the
// tapes folder, the plugin's data folders, the copies of what each run
// started from and the store (when they are inside it: the plugin, the
// playground and the recording write there), and editors'
// scratch files (swap files, backups, vim's 4913). A change is the
// plugin's own when a process of the plugin holds the file open for
// writing as the change is heard of (/proc): the path is remembered as
// the plugin's, with its inode, so that a rename of it stays the
// plugin's. A file the plugin opens, writes and closes before that is not
// seen so; what it writes as it starts or ends is caught otherwise: a
// change heard of while the plugin is being stopped, or is starting
// (until bootGrace after its first line and its replay of the actions,
// bootMax at most, and no longer once the page has done something), is
// taken for the plugin's own, that once. Each is said once on the
// terminal. The cost is bounded: at most maxWatchDirs folders watched
// and maxWatchFiles files stamped (a poll looks at no more, and waits ten
// times as long as a look took), each cap said once when reached.

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/child"
	"github.com/tapedeck/tapedeck/internal/escape"
)

// The watch's bounds.
const (
	maxWatchDirs  = 4096  // folders watched (inotify)
	maxWatchFiles = 20000 // files stamped
	maxMine       = 4096  // paths remembered as the plugin's
	// bootGrace is how long after a run has started (its first line,
	// and the replay of the actions) a change is still taken for the
	// plugin's own; bootMax, how long at most for a plugin that says
	// nothing.
	bootGrace = 2 * time.Second
	bootMax   = 5 * time.Second
)

// fileStamp is what a file's change is seen by: a save by rename makes
// another inode.
type fileStamp struct {
	size int64
	mod  time.Time
	ino  uint64
}

func stampOf(fi fs.FileInfo) fileStamp {
	st := fileStamp{size: fi.Size(), mod: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(sys.Ino)
	}
	return st
}

// change is one file that changed, by its path in the plugin folder.
type change struct {
	path string
	what string // added, changed, removed
}

// describe is what changed, as the page shows it: the names as they
// are (escape.Text them for the terminal).
func describe(cs []change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.path + " " + c.what
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// tree is the plugin's folder as the watch sees it. It is the watch's
// goroutine's alone.
type tree struct {
	s    *server
	root string          // the plugin folder, absolute, its links resolved
	skip map[string]bool // absolute folders left out
	mine map[string]bool // paths the plugin wrote (held open as they changed)
	// mineIno are their inodes: a file of the plugin's renamed keeps its
	// inode, and stays the plugin's.
	mineIno map[uint64]string
	said    map[string]bool // notes said once
}

func (s *server) newTree() *tree {
	root := s.plugin.Dir
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	t := &tree{s: s, root: root, skip: map[string]bool{}, mine: map[string]bool{}, mineIno: map[uint64]string{}, said: map[string]bool{}}
	skip := []string{s.tapes, s.dataDir, s.snaps, s.opt.StoreDir}
	for _, h := range s.homes {
		skip = append(skip, h.dir)
	}
	for _, dir := range skip {
		if dir == "" {
			continue
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		t.skip[abs] = true
	}
	return t
}

// once writes msg on the terminal the first time key is said.
func (t *tree) once(key, msg string) {
	if t.said[key] {
		return
	}
	t.said[key] = true
	fmt.Fprintf(t.s.opt.Log, "tapedeck: play: --watch: %s\n", msg)
}

// skipDir says whether the folder abs (named name) is left out.
func (t *tree) skipDir(abs, name string) bool {
	return abs != t.root && (strings.HasPrefix(name, ".") || name == "node_modules" || t.skip[abs])
}

// scratch says whether a file named name is an editor's scratch file: a
// vim swap file or its write test (4913), a backup (name~), an emacs
// lock or autosave.
func scratch(name string) bool {
	return name == "4913" || strings.HasSuffix(name, "~") || strings.HasPrefix(name, ".#") ||
		strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#") ||
		strings.HasPrefix(name, ".") && (strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swx") || strings.HasSuffix(name, ".swo"))
}

// watched says whether the file at rel is one the watch looks at.
func (t *tree) watched(rel string) bool {
	return !t.mine[rel] && !scratch(filepath.Base(rel))
}

// walk stamps the watched files (at most maxWatchFiles, the cap said
// once) and calls dir, when set, with each watched folder; a false from
// it leaves the folder's subfolders out.
func (t *tree) walk(dir func(abs, rel string) bool) map[string]fileStamp {
	out := map[string]fileStamp{}
	filepath.WalkDir(t.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(t.root, path)
		if d.IsDir() {
			if t.skipDir(path, d.Name()) {
				return filepath.SkipDir
			}
			if dir != nil && !dir(path, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !t.watched(rel) {
			return nil
		}
		if len(out) >= maxWatchFiles {
			if dir == nil {
				t.once("files", fmt.Sprintf("the plugin folder has more than %d files: only the first %d are looked at", maxWatchFiles, maxWatchFiles))
			} else {
				t.once("files", fmt.Sprintf("the plugin folder has more than %d files: the first %d are stamped, and a change to another is said as added", maxWatchFiles, maxWatchFiles))
			}
			return nil
		}
		if fi, err := d.Info(); err == nil {
			out[rel] = stampOf(fi)
		}
		return nil
	})
	return out
}

// stat stamps the file at rel now; false when there is none (or it is a
// folder).
func (t *tree) stat(rel string) (fileStamp, bool) {
	fi, err := os.Lstat(filepath.Join(t.root, rel))
	if err != nil || fi.IsDir() {
		return fileStamp{}, false
	}
	return stampOf(fi), true
}

// diff says what differs between two stamps of the files, of the paths
// in only (all when nil).
func diff(a, b map[string]fileStamp, only map[string]bool) []change {
	var out []change
	for p, st := range b {
		if only != nil && !only[p] {
			continue
		}
		if old, ok := a[p]; !ok {
			out = append(out, change{p, "added"})
		} else if old != st {
			out = append(out, change{p, "changed"})
		}
	}
	for p := range a {
		if only != nil && !only[p] {
			continue
		}
		if _, ok := b[p]; !ok {
			out = append(out, change{p, "removed"})
		}
	}
	return out
}

// held lists the paths under the plugin folder that the plugin's
// processes hold open for writing now, relative to it.
func (t *tree) held() map[string]bool {
	t.s.mu.Lock()
	var pid int64
	if r := t.s.cur; r != nil && !r.over {
		pid = r.pid.Load()
	}
	t.s.mu.Unlock()
	if pid == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, abs := range child.Writing(int(pid), t.root) {
		if rel, err := filepath.Rel(t.root, abs); err == nil {
			out[rel] = true
		}
	}
	return out
}

// claim remembers rel as the plugin's (at most maxMine paths), with its
// inode (from st, else stamped now), and says so once.
func (t *tree) claim(rel string, st fileStamp, why string) {
	if t.mine[rel] {
		return
	}
	if len(t.mine) >= maxMine {
		t.once("mine", fmt.Sprintf("the plugin wrote more than %d files in its folder: no more are remembered as its own", maxMine))
		return
	}
	t.mine[rel] = true
	if st.ino == 0 {
		st, _ = t.stat(rel)
	}
	if st.ino != 0 {
		t.mineIno[st.ino] = rel
	}
	t.once("mine "+rel, fmt.Sprintf("%s %s: its changes do not restart the plugin", escape.Text(rel), why))
}

// renamed says whether the file now stamped st at rel is one the plugin
// wrote under another name (its inode is one of the plugin's files', and
// that name no longer has it).
func (t *tree) renamed(rel string, st fileStamp) bool {
	from, ok := t.mineIno[st.ino]
	if !ok || st.ino == 0 || from == rel {
		return false
	}
	if cur, ok := t.stat(from); ok && cur.ino == st.ino {
		return false // a hard link: both names are there
	}
	return true
}

// absorb says once that a change to rel was taken for the plugin's own,
// as the plugin was starting or stopping.
func (t *tree) absorb(rel string) {
	t.once("boot "+rel, fmt.Sprintf("%s changed while the plugin was starting or stopping: taken for the plugin's own (save it again to start the plugin again)", escape.Text(rel)))
}

// booting says whether a change seen by a look that began and ended at
// these times is taken for the plugin's own: the current run is being
// stopped, or was starting as the look began (until bootGrace after its
// first line and its replay of the actions, bootMax at most for a plugin
// that says nothing), and the page had not done something before the
// look ended (a look can begin before a click and see the save that
// follows it: under load, a look of one file spanned both). A run that
// ended by itself is not: a change then starts it again.
func (s *server) booting(began, ended time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.cur
	switch {
	case r == nil:
		return false
	case r.stopped && !r.over:
		return true
	case r.over, !r.boot.acted.IsZero() && ended.After(r.boot.acted):
		return false
	case r.replayed != nil && r.boot.replayed.IsZero():
		return true
	}
	return began.Before(r.bootEndLocked())
}

// bootEndLocked is when run r has started, for the watch: bootGrace after
// its first line and its replay of the actions, bootMax after its start
// for a plugin that says nothing.
func (r *run) bootEndLocked() time.Time {
	end := r.start.Add(bootMax)
	if !r.boot.spoke.IsZero() {
		end = r.boot.spoke.Add(bootGrace)
	}
	if !r.boot.replayed.IsZero() {
		end = later(end, r.boot.replayed.Add(bootGrace))
	}
	return end
}

// mtimeSlack is how much earlier than it was written a file may say it
// was modified: the kernel stamps files from a clock that ticks every few
// milliseconds. A file that says it was modified within it of the page's
// first action is the user's (a save right after a click).
const mtimeSlack = 50 * time.Millisecond

// wroteBooting says whether a file last modified at mod was written while
// the current run was starting, before the page did anything (see
// booting): the plugin's own, however late a look hears of it. A poll
// waits ten times as long as its look took, and under the race detector
// at CI's load the look that heard of what a restarted plugin wrote as it
// started came after the page's first click, which ended the run's start
// (TestWatchLeavesThePluginsOwnWritesAlone, polling).
func (s *server) wroteBooting(mod time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.cur
	switch {
	case r == nil || r.over || mod.Before(r.start.Add(-mtimeSlack)):
		return false
	case !r.boot.acted.IsZero() && !mod.Before(r.boot.acted.Add(-mtimeSlack)):
		return false // written once the page had done something, or about then
	case r.replayed != nil && r.boot.replayed.IsZero():
		return true // still replaying the actions
	}
	return mod.Before(r.bootEndLocked())
}

// boot is how far a run has come in starting, for the watch (see
// booting); the server's mutex guards it.
type boot struct {
	spoke    time.Time // the plugin's first line on stdout
	replayed time.Time // the replay of the actions ended
	acted    time.Time // the page first did something: the plugin had started
}

// actedLocked notes that the page did something to run r.
func (r *run) actedLocked() {
	if r.boot.acted.IsZero() {
		r.boot.acted = time.Now()
	}
}

// heardLocked notes that run r's plugin said a line on stdout.
func (r *run) heardLocked() {
	if r.boot.spoke.IsZero() {
		r.boot.spoke = time.Now()
	}
}

// counted is "1 file", "N files".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// watch watches the plugin's files until the playground ends: with the
// system's notifications where it has them, else by looking every
// WatchEvery. A change that has settled (nothing more for WatchEvery)
// starts the plugin again with the actions so far.
func (s *server) watch() {
	t := s.newTree()
	n, err := newNotifier()
	if s.opt.poll && err == nil {
		n.close()
		s.poll(t)
		return
	}
	if err != nil {
		t.once("poll", fmt.Sprintf("%v: looking at the files every %v instead", err, s.opt.WatchEvery))
		s.poll(t)
		return
	}
	if err := s.notified(t, n); err != nil {
		t.once("poll", fmt.Sprintf("%v: looking at the files every %v instead", err, s.opt.WatchEvery))
		s.poll(t)
	}
}

// restartFor starts the plugin again for the changes cs, with the actions
// so far, once they have settled.
func (s *server) restartFor(cs []change) error {
	why := describe(cs)
	fmt.Fprintf(s.opt.Log, "tapedeck: play: %s: starting the plugin again and playing the actions so far\n", escape.Text(why))
	s.mu.Lock()
	prev := s.cur
	list, tail := steps(prev.frames)
	actions := &replaying{steps: userSteps(list), tail: tail, before: append([]frame.Frame(nil), prev.frames...), why: why,
		partial: len(prev.keep.said) > 0, from: prev.from}
	s.mu.Unlock()
	return s.restart(actions)
}

// poll looks at the files every WatchEvery (or ten times as long as a
// look took, whichever is longer) until the playground ends.
func (s *server) poll(t *tree) {
	seen := t.walk(nil)
	fmt.Fprintf(s.opt.Log, "tapedeck: play: --watch: watching %s of %s for changes\n", counted(len(seen), "file"), escape.Text(t.root))
	var pending map[string]fileStamp
	var pendingSince time.Time
	wait := time.NewTimer(s.opt.WatchEvery)
	defer wait.Stop()
	for {
		select {
		case <-s.quitCh:
			return
		case <-wait.C:
		}
		began := time.Now()
		now := t.walk(nil)
		wait.Reset(max(s.opt.WatchEvery, 10*time.Since(began)))
		cs := t.userChanges(diff(seen, now, nil), now, began, time.Now())
		switch {
		case len(cs) == 0:
			seen, pending = now, nil
			continue
		case pending == nil || len(diff(pending, now, nil)) > 0:
			pending, pendingSince = now, time.Now() // still being written: look again
			continue
		case addsOrRemoves(cs) && time.Since(pendingSince) < fileSetSettles:
			continue // a save by rename: its temporary file, or the file moved away, is gone in a moment
		}
		seen, pending = now, nil
		if err := s.restartFor(cs); err != nil {
			return
		}
	}
}

// fileSetSettles is how long a file must be seen added or gone, with
// nothing else heard of, before the watch takes it so. A save by rename writes a temporary file
// (sed -i's sedXXXXXX, an editor's NAME.tmp) and renames it over the
// file, or (vim) moves the file away a moment before it writes it anew; a
// look in between, or two if the saving program is slow to be scheduled,
// sees a file added or gone. A change to a file that stays is taken as
// soon as two looks agree.
const fileSetSettles = time.Second

// addsOrRemoves says whether cs adds or removes a file.
func addsOrRemoves(cs []change) bool {
	for _, c := range cs {
		if c.what != "changed" {
			return true
		}
	}
	return false
}

// userChanges are the changes cs, seen by a look that began and ended at
// these times, but those that are the plugin's own (claimed or absorbed;
// their stamps in now are taken as seen).
func (t *tree) userChanges(cs []change, now map[string]fileStamp, began, ended time.Time) []change {
	if len(cs) == 0 {
		return nil
	}
	booting := t.s.booting(began, ended)
	held := t.held()
	var out []change
	for _, c := range cs {
		st, there := now[c.path]
		switch {
		case held[c.path]:
			t.claim(c.path, st, "is written by the plugin itself (it holds it open)")
		case there && t.renamed(c.path, st):
			t.claim(c.path, st, "is what the plugin wrote, renamed")
		case booting || there && t.s.wroteBooting(st.mod):
			t.absorb(c.path)
		default:
			out = append(out, c)
			continue
		}
		delete(now, c.path) // not watched from now on, or taken as seen
		if !t.mine[c.path] {
			if st, ok := t.stat(c.path); ok {
				now[c.path] = st
			}
		}
	}
	return out
}

// fsEvent is one change a notifier heard of: in the folder of watch wd,
// the file name (its path in the plugin folder is the notifier's name
// of it, rel once the watch has asked).
type fsEvent struct {
	wd     int32
	name   string
	rel    string
	op     fsOp
	cookie uint32 // pairs a rename's two halves
}

type fsOp uint8

const (
	opWrite    fsOp = 1 << iota // written, or its attributes changed
	opCreate                    // made
	opRemove                    // removed
	opMoveFrom                  // renamed away
	opMoveTo                    // renamed here
	opDir                       // it is a folder
	opOverflow                  // events were lost: look at everything
)

// notifier hears of changes in the folders added to it (inotify).
type notifier interface {
	// add watches the folder abs, at rel in the plugin folder.
	add(abs, rel string) error
	// read blocks until events come (or close), and returns them; it
	// alone may run on another goroutine than the rest.
	read(buf []byte) ([]fsEvent, error)
	// name is an event's path in the plugin folder; false for one of a
	// folder not watched.
	name(e fsEvent) (string, bool)
	close() error
}

// notified watches with n until the playground ends; an error when n
// fails (the caller then polls).
func (s *server) notified(t *tree, n notifier) error {
	w := &inotifyWatch{s: s, t: t, n: n, touched: map[string]bool{}, moved: map[uint32]string{}}
	w.stamps = t.walk(w.addDir)
	fmt.Fprintf(s.opt.Log, "tapedeck: play: --watch: watching %s of %s for changes\n", counted(w.dirs, "folder"), escape.Text(t.root))
	batches := make(chan eventBatch)
	readErr := make(chan error, 1)
	go s.readEvents(n, batches, readErr) // ends when n is closed
	defer func() {
		n.close()
		for range batches { // until the reader has ended
		}
	}()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	var heard time.Time // the last events
	for {
		select {
		case <-s.quitCh:
			return nil
		case b, ok := <-batches:
			if !ok {
				return fmt.Errorf("inotify: %w", <-readErr)
			}
			w.take(b)
			heard = time.Now()
			settle.Reset(s.opt.WatchEvery)
		case <-settle.C:
			if quiet := time.Since(heard); quiet < fileSetSettles && w.comeOrGone() {
				settle.Reset(fileSetSettles - quiet) // a save by rename, half done
				continue
			}
			cs := w.settled()
			if len(cs) == 0 {
				continue
			}
			if err := s.restartFor(cs); err != nil {
				return nil
			}
		}
	}
}

// eventBatch is the events of one read.
type eventBatch struct {
	evs []fsEvent
	at  time.Time // when they were read: whether the plugin was starting then
}

// readEvents reads n's events into batches until n fails or is closed,
// then puts the error in readErr and closes batches.
func (s *server) readEvents(n notifier, batches chan<- eventBatch, readErr chan<- error) {
	buf := make([]byte, 64<<10)
	for {
		evs, err := n.read(buf)
		if err != nil {
			readErr <- err
			close(batches)
			return
		}
		select {
		case batches <- eventBatch{evs, time.Now()}:
		case <-s.quitCh:
		}
	}
}

// inotifyWatch is what notified knows between events: the folders
// watched, the files' stamps as last looked at, and what was heard of
// since.
type inotifyWatch struct {
	s      *server
	t      *tree
	n      notifier
	dirs   int   // folders watched
	addErr error // the watch that failed; none is added after it
	stamps map[string]fileStamp
	// touched are the paths heard of since the last look: true when
	// changed while the plugin was not booting.
	touched map[string]bool
	moved   map[uint32]string // rename cookie → the path renamed away
	rescan  bool              // events lost, or a folder gone: look at everything
}

// addDir watches the folder abs (rel in the plugin folder); false when it
// is not watched (the cap reached, or a watch failed), said once.
func (w *inotifyWatch) addDir(abs, rel string) bool {
	if w.addErr != nil {
		return false
	}
	if w.dirs >= maxWatchDirs {
		w.t.once("dirs", fmt.Sprintf("the plugin folder has more than %d folders: only the first %d are watched", maxWatchDirs, maxWatchDirs))
		return false
	}
	if err := w.n.add(abs, rel); err != nil {
		w.t.once("add", fmt.Sprintf("watch %s: %v: the folders from there on are not watched", escape.Text(rel), err))
		w.addErr = err
		return false
	}
	w.dirs++
	return true
}

// take notes the events of a batch.
func (w *inotifyWatch) take(b eventBatch) {
	booting := w.s.booting(b.at, b.at)
	var held map[string]bool // the files the plugin holds open, asked once
	for _, ev := range b.evs {
		w.event(ev, booting, &held)
	}
	if len(w.moved) > 1024 {
		clear(w.moved) // halves of renames from outside the folder
	}
}

// event notes one event: the file touched, unless the plugin holds it
// open (then it is the plugin's); a rename of the plugin's file is the
// plugin's too.
func (w *inotifyWatch) event(ev fsEvent, booting bool, held *map[string]bool) {
	if ev.op&opOverflow != 0 {
		w.rescan = true
		return
	}
	rel, ok := w.n.name(ev)
	if !ok {
		return
	}
	ev.rel = rel
	switch {
	case ev.op&opDir != 0:
		w.dirEvent(ev, booting)
		return
	case ev.op&opMoveFrom != 0:
		w.moved[ev.cookie] = ev.rel
	case ev.op&opMoveTo != 0:
		if from, ok := w.moved[ev.cookie]; ok {
			delete(w.moved, ev.cookie)
			if w.t.mine[from] {
				w.t.claim(ev.rel, fileStamp{}, "is what the plugin wrote, renamed")
			}
		}
	}
	if !w.t.watched(ev.rel) {
		return
	}
	if ev.op&(opWrite|opCreate|opMoveTo) != 0 {
		if *held == nil {
			*held = w.t.held()
		}
		if (*held)[ev.rel] {
			w.t.claim(ev.rel, fileStamp{}, "is written by the plugin itself (it holds it open)")
			return
		}
	}
	w.touched[ev.rel] = w.touched[ev.rel] || !booting
}

// dirEvent notes an event of a folder: a new one is watched and its files
// are new; one gone means a look at everything (what was in it is
// removed).
func (w *inotifyWatch) dirEvent(ev fsEvent, booting bool) {
	switch {
	case ev.op&(opCreate|opMoveTo) != 0:
		abs := filepath.Join(w.t.root, ev.rel)
		if !w.t.skipDir(abs, filepath.Base(ev.rel)) {
			w.newDir(abs, booting)
		}
	case ev.op&(opRemove|opMoveFrom) != 0:
		w.rescan = true
	}
}

// newDir watches the new folder abs and those in it, and takes their
// files as touched.
func (w *inotifyWatch) newDir(abs string, booting bool) {
	t := w.t
	filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(t.root, path)
		if d.IsDir() {
			if t.skipDir(path, d.Name()) || !w.addDir(path, rel) {
				return filepath.SkipDir
			}
		} else if t.watched(rel) {
			w.touched[rel] = w.touched[rel] || !booting
		}
		return nil
	})
}

// comeOrGone says whether a watched file the events touched has come or
// gone since the last look (as polling's addsOrRemoves says of a look),
// without looking for good: settled still takes it.
func (w *inotifyWatch) comeOrGone() bool {
	if w.rescan {
		return false
	}
	for rel := range w.touched {
		if !w.t.watched(rel) {
			continue
		}
		_, was := w.stamps[rel]
		_, is := w.t.stat(rel)
		if was != is {
			return true
		}
	}
	return false
}

// settled looks at what was heard of once the events have settled, and
// returns the changes the user made (none of the plugin's own, none heard
// of only while it was booting).
func (w *inotifyWatch) settled() []change {
	t := w.t
	now, only := w.look()
	var cs []change
	for _, c := range diff(w.stamps, now, only) {
		st, there := now[c.path]
		switch {
		case t.mine[c.path]:
		case there && t.renamed(c.path, st):
			t.claim(c.path, st, "is what the plugin wrote, renamed")
		case only != nil && !w.touched[c.path]:
			t.absorb(c.path)
		default:
			cs = append(cs, c)
		}
	}
	if only == nil {
		at := time.Now()
		cs = t.userChanges(cs, now, at, at)
		w.stamps = now
	} else {
		w.restamp(now, only)
	}
	clear(w.touched)
	return cs
}

// look stamps the files touched (only names them), or after a rescan all
// of them (only is nil).
func (w *inotifyWatch) look() (now map[string]fileStamp, only map[string]bool) {
	if w.rescan {
		w.rescan = false
		return w.t.walk(nil), nil
	}
	now, only = map[string]fileStamp{}, map[string]bool{}
	for rel := range w.touched {
		only[rel] = true
		if st, ok := w.t.stat(rel); ok {
			now[rel] = st
		}
	}
	return now, only
}

// restamp takes the stamps of the files looked at (only), within
// maxWatchFiles for a file not stamped before.
func (w *inotifyWatch) restamp(now map[string]fileStamp, only map[string]bool) {
	for rel := range only {
		_, known := w.stamps[rel]
		if st, ok := now[rel]; ok && (known || len(w.stamps) < maxWatchFiles) {
			w.stamps[rel] = st
		} else if !ok {
			delete(w.stamps, rel)
		}
	}
}
