package datafolder

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"
)

// Watcher says whether a run used the folders it was given: on Linux by
// inotify, which hears of a file opened (read or written) as well as made,
// changed and removed. It holds no goroutine: the kernel keeps the events
// until Uses reads them. Not safe for concurrent use.
type Watcher struct {
	fd    int // -1: none (inotify could not be had)
	dirs  int
	owner map[int32]int // watch → the folder it is of
	used  []bool
	over  bool // the event queue overflowed: everything was used
}

// watchMask is what counts as use: a file or folder opened, read,
// written, made, removed or renamed, its attributes changed.
const watchMask = syscall.IN_OPEN | syscall.IN_ACCESS | syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CREATE |
	syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW

// Watch starts watching dirs for use. Start it once the folders hold what
// the run starts from (making them is use too). It never fails: what
// cannot be watched is Unknown.
func Watch(dirs []string) *Watcher {
	w := &Watcher{fd: -1, dirs: len(dirs), owner: map[int32]int{}, used: make([]bool, len(dirs))}
	if len(dirs) == 0 {
		return w
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return w
	}
	w.fd = fd
	for i, d := range dirs {
		root := d
		filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return nil
			}
			if len(w.owner) >= maxWatched {
				return filepath.SkipAll
			}
			if wd, err := syscall.InotifyAddWatch(fd, path, watchMask); err == nil {
				w.owner[int32(wd)] = i
			}
			if rel, _ := filepath.Rel(root, path); rel != "." && strings.Count(rel, string(os.PathSeparator)) >= 1 {
				return filepath.SkipDir
			}
			return nil
		})
	}
	// The walk opened the folders it watched: that was not the run's.
	w.drain()
	w.over, w.used = false, make([]bool, len(dirs))
	return w
}

// Uses says, for each folder given to Watch, whether it was used since.
func (w *Watcher) Uses() []Use {
	out := make([]Use, w.dirs)
	if w.fd < 0 {
		return out
	}
	w.drain()
	for i := range out {
		switch {
		case w.over || w.used[i]:
			out[i] = Used
		case !w.watched(i):
		default:
			out[i] = Unused
		}
	}
	return out
}

// watched reports whether folder i has a watch.
func (w *Watcher) watched(i int) bool {
	for _, j := range w.owner {
		if j == i {
			return true
		}
	}
	return false
}

// drain reads the events waiting.
func (w *Watcher) drain() {
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(w.fd, buf)
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			if ev.Mask&syscall.IN_Q_OVERFLOW != 0 {
				w.over = true
			} else if ev.Mask&syscall.IN_IGNORED == 0 {
				if i, ok := w.owner[ev.Wd]; ok {
					w.used[i] = true
				}
			}
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// Close lets the watches go.
func (w *Watcher) Close() {
	if w.fd >= 0 {
		syscall.Close(w.fd)
		w.fd = -1
	}
}
