//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package loopback

import (
	"errors"
	"runtime"
)

func listenLoopback() (int, int, error) {
	return -1, 0, errors.New("the loopback server is not built for " + runtime.GOOS)
}

func accept(int) (int, error) { return -1, errors.ErrUnsupported }

func shutdownWrite(int) {}
