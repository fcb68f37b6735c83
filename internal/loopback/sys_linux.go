package loopback

import "syscall"

// listenLoopback is a non-blocking, close-on-exec TCP socket listening on
// 127.0.0.1, and its port.
func listenLoopback() (int, int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, err
	}
	return bindLoopback(fd)
}

// accept is a connection of the listening socket fd, non-blocking and
// close-on-exec (EAGAIN when none is waiting).
func accept(fd int) (int, error) {
	nfd, _, err := syscall.Accept4(fd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
	if err != nil {
		return -1, err
	}
	noDelay(nfd)
	return nfd, nil
}
