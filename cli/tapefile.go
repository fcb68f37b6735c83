package cli

// Reading a tape file frame by frame, for show.

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/tape"
)

// tapeFrames reads a tape's header and returns a function that streams its
// frames, reading the file again on each call (the HTML report reads twice).
func tapeFrames(path string) (*frame.Session, func(func(*frame.Frame) error) error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	tr, err := tape.NewReader(bufio.NewReaderSize(f, 64<<10))
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	meta := tr.Session()
	return meta, func(fn func(*frame.Frame) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		tr, err := tape.NewReader(bufio.NewReaderSize(f, 64<<10))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for {
			fr, err := tr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if err := fn(fr); err != nil {
				return err
			}
		}
	}, nil
}
