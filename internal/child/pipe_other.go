//go:build !linux

package child

import "os"

// pipe makes the pipe of the child's stream name with os.Pipe: the parent
// end (the read end when parentReads) first.
func pipe(parentReads bool, _ string) (parent, child *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	if parentReads {
		return r, w, nil
	}
	return w, r, nil
}
