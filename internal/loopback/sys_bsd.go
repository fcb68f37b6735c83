//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package loopback

import "syscall"

// listenLoopback is a non-blocking, close-on-exec TCP socket listening on
// 127.0.0.1, and its port. (These systems' socket(2) take no flags: the
// fork lock keeps a child started meanwhile from inheriting the socket.)
func listenLoopback() (int, int, error) {
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, 0, err
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	return bindLoopback(fd)
}

// accept is a connection of the listening socket fd, non-blocking and
// close-on-exec (EAGAIN when none is waiting).
func accept(fd int) (int, error) {
	syscall.ForkLock.RLock()
	nfd, _, err := syscall.Accept(fd)
	if err == nil {
		syscall.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	if err := syscall.SetNonblock(nfd, true); err != nil {
		syscall.Close(nfd)
		return -1, err
	}
	noDelay(nfd)
	return nfd, nil
}
