package relay

import (
	"io"
	"os"
)

func devNull() *os.File {
	f, err := os.Open(os.DevNull)
	if err != nil {
		r, w, _ := os.Pipe()
		w.Close()
		return r
	}
	return f
}

// hangUp passes on the child's closing of its stdout: when the host's side
// is a file, its descriptor is pointed at /dev/null, which closes the pipe
// (the host reads EOF, as it would from the plugin itself) while keeping the
// descriptor number taken, so no file opened later can land on it.
func hangUp(w io.Writer) {
	f, ok := w.(*os.File)
	if !ok {
		if c, ok := w.(io.Closer); ok {
			c.Close()
		}
		return
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer null.Close()
	dup2(int(null.Fd()), int(f.Fd()))
}
