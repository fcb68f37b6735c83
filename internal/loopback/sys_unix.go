//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package loopback

import (
	"fmt"
	"syscall"
)

// bindLoopback binds the socket fd to 127.0.0.1 on a free port, listens
// and says which port; on an error fd is closed.
func bindLoopback(fd int) (int, int, error) {
	fail := func(what string, err error) (int, int, error) {
		syscall.Close(fd)
		return -1, 0, fmt.Errorf("%s: %w", what, err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail("bind", err)
	}
	if err := syscall.Listen(fd, syscall.SOMAXCONN); err != nil {
		return fail("listen", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok || in4.Addr != [4]byte{127, 0, 0, 1} || in4.Port == 0 {
		return fail("getsockname", fmt.Errorf("the socket is not bound to 127.0.0.1 on a port: %#v", sa))
	}
	return fd, in4.Port, nil
}

// noDelay sends each write at once (no Nagle delay: a stream's events are
// small).
func noDelay(fd int) {
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
}

func shutdownWrite(fd int) { syscall.Shutdown(fd, syscall.SHUT_WR) }
