// Package smallfile opens the files tapedeck is given by name (a tape, a
// manifest, tapedeck.json, a host script, a package.json in a plugin
// folder) so that no such name can make it wait or read without end: only
// a regular file is opened, never a named pipe, a device or a socket (a
// cloned repository can hold a link to /dev/zero or a FIFO), and a small
// file read whole is read to a cap. It owns that rule and nothing else:
// the standard library alone.
package smallfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// JSONCap is the cap for a manifest or a configuration file: far more than
// any real one holds.
const JSONCap = 1 << 20

// ErrNotRegular: the name is a named pipe, a device, a socket or a folder.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge: the file holds more than the cap.
var ErrTooLarge = errors.New("larger than the cap")

// Read returns the contents of the regular file path, at most max bytes of
// it. The file is opened without blocking (opening a named pipe for
// reading would wait for a writer) and checked once open, so a name
// swapped in between is caught too. Errors name path and say what it is
// ("/x/p.json is a named pipe, not a file").
func Read(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w of %s", ErrTooLarge, size(max))}
	}
	return b, nil
}

// ReadRegular reads the whole regular file path, with no cap: for a file
// that is as large as it is (a tape git hands textconv), never a pipe or a
// device that would not end.
func ReadRegular(path string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// OpenRegular opens path for reading if it is a regular file, as Read
// does, for a file read as a stream (a tape), with no cap.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: it is %s", ErrNotRegular, kind(fi.Mode()))}
	}
	return f, nil
}

// kind names what a mode that is not a regular file's is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
