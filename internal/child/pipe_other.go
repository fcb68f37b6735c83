//go:build !linux

package child

import "os"

// pipe makes a pipe with os.Pipe: the parent end (the read end when
// parentReads) first.
func pipe(parentReads bool) (parent, child *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	if parentReads {
		return r, w, nil
	}
	return w, r, nil
}
