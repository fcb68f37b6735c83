//go:build !linux

package cli

import (
	"errors"
	"os"
)

func openPTY() (master, slave *os.File, err error) {
	return nil, nil, errors.New("pseudo-terminals are only opened on Linux in these tests")
}

func setPTYSize(m *os.File, rows, cols int) error {
	return errors.New("pseudo-terminals are only sized on Linux in these tests")
}
