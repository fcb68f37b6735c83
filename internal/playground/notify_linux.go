package playground

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// inotify is the Linux notifier: one watch per folder.
type inotify struct {
	f    *os.File // non-blocking, on the runtime's poller: close ends a read
	fd   int
	dirs map[int32]string // watch → folder, relative
}

// inotifyMask is what is heard of in a folder: its files written, their
// attributes changed (touch), made, removed and renamed. Links are not
// followed, and a removed file's events stop.
const inotifyMask = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE |
	syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO |
	syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW | syscall.IN_EXCL_UNLINK

func newNotifier() (notifier, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	return &inotify{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, dirs: map[int32]string{}}, nil
}

func (in *inotify) add(abs, rel string) error {
	wd, err := syscall.InotifyAddWatch(in.fd, abs, inotifyMask)
	if err != nil {
		return err
	}
	in.dirs[int32(wd)] = rel
	return nil
}

// read reads the events that have come, blocking until some have. It
// runs on the watch's reader goroutine, and leaves the watches' map to
// the watch's own (name).
func (in *inotify) read(buf []byte) ([]fsEvent, error) {
	n, err := in.f.Read(buf)
	if err != nil {
		return nil, err
	}
	var out []fsEvent
	for off := 0; off+syscall.SizeofInotifyEvent <= n; {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
		nameAt := off + syscall.SizeofInotifyEvent
		end := nameAt + int(ev.Len)
		if end > n {
			break
		}
		name := buf[nameAt:end]
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		off = end
		e := fsEvent{wd: ev.Wd, name: string(name), cookie: ev.Cookie}
		switch m := ev.Mask; {
		case m&syscall.IN_Q_OVERFLOW != 0:
			e.op = opOverflow
		case m&(syscall.IN_IGNORED|syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF) != 0 || len(name) == 0:
			continue // the folder's own: its parent says it
		default:
			if m&(syscall.IN_MODIFY|syscall.IN_ATTRIB|syscall.IN_CLOSE_WRITE) != 0 {
				e.op |= opWrite
			}
			if m&syscall.IN_CREATE != 0 {
				e.op |= opCreate
			}
			if m&syscall.IN_DELETE != 0 {
				e.op |= opRemove
			}
			if m&syscall.IN_MOVED_FROM != 0 {
				e.op |= opMoveFrom
			}
			if m&syscall.IN_MOVED_TO != 0 {
				e.op |= opMoveTo
			}
			if m&syscall.IN_ISDIR != 0 {
				e.op |= opDir
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// name is the event's path in the plugin folder; false for an event of a
// folder not watched (any more).
func (in *inotify) name(e fsEvent) (string, bool) {
	dir, ok := in.dirs[e.wd]
	if !ok {
		return "", false
	}
	return filepath.Join(dir, e.name), true
}

func (in *inotify) close() error { return in.f.Close() }
