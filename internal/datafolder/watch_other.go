//go:build !linux

package datafolder

import (
	"io/fs"
	"path/filepath"
	"time"
)

// Watcher says whether a run used the folders it was given. Without
// inotify it can tell only a change: a folder in which something was
// made, changed or removed was Used; one in which nothing changed is
// Unknown (it may have been read). Not safe for concurrent use.
type Watcher struct {
	dirs   []string
	before []map[string]stamp
}

type stamp struct {
	size int64
	mod  time.Time
}

// Watch starts watching dirs for use. Start it once the folders hold what
// the run starts from. It never fails.
func Watch(dirs []string) *Watcher {
	w := &Watcher{dirs: dirs}
	for _, d := range dirs {
		w.before = append(w.before, stamps(d))
	}
	return w
}

func stamps(dir string) map[string]stamp {
	out := map[string]stamp{}
	n := 0
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > Carried.Files {
			return filepath.SkipAll
		}
		if fi, err := e.Info(); err == nil {
			out[path] = stamp{fi.Size(), fi.ModTime()}
		}
		return nil
	})
	return out
}

// Uses says, for each folder given to Watch, whether it was used since.
func (w *Watcher) Uses() []Use {
	out := make([]Use, len(w.dirs))
	for i, d := range w.dirs {
		now := stamps(d)
		if len(now) != len(w.before[i]) {
			out[i] = Used
			continue
		}
		for k, v := range now {
			if w.before[i][k] != v {
				out[i] = Used
				break
			}
		}
	}
	return out
}

// Close lets the watches go.
func (w *Watcher) Close() {}
