// Package loopback owns a small HTTP/1.1 server that listens on
// 127.0.0.1 only, built on the system's sockets (package syscall) rather
// than package net: a program that links it does not link net, net/http
// or runtime/cgo, and stays a small static binary.
//
// It serves what a local page needs and no more: one request per
// connection (every response says Connection: close), bodies by
// Content-Length, a head and a body of bounded size read within a
// deadline, responses either whole (with their Content-Length) or
// streamed (server-sent events). A request it cannot read is answered
// 400 (or 408, 413, 431, 501, 505) and its connection closed; no handler
// sees it. Whoever uses it decides, per request, whom to answer (Host,
// Origin, a token): the server only guarantees where it listens.
package loopback

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Handler answers one request. It may block; it should return when the
// request's Context is done.
type Handler func(w *Response, r *Request)

// Config bounds what one client may make the server do. Every zero field
// means the default.
type Config struct {
	// ReadTimeout bounds reading a request, head and body, from the
	// connection's start (0: 10 s): a slow client holds a connection no
	// longer.
	ReadTimeout time.Duration
	// WriteTimeout bounds each write of a response (0: 10 s): a client
	// that stops reading is let go.
	WriteTimeout time.Duration
	// MaxHeaderBytes bounds the request line and the header lines (0:
	// 16 KiB); more is answered 431.
	MaxHeaderBytes int
	// MaxBodyBytes bounds a body (0: 1 MiB); a larger Content-Length is
	// answered 413 before the body is read.
	MaxBodyBytes int64
	// MaxConns is how many connections are served at once (0: 64); more
	// wait in the system's queue until one ends.
	MaxConns int
	// Log is told of a handler's panic, one line without its end (nil:
	// nowhere).
	Log func(line string)
}

// linger is how long a connection whose response is out waits for the
// client to close its end (so that the client reads the whole response
// rather than a reset), and closeGrace how long Close lets connections
// end by themselves.
const (
	linger     = 500 * time.Millisecond
	closeGrace = 2 * time.Second
	// drainMax is what a client may send after its request (ignored)
	// before its connection counts as gone.
	drainMax = 64 << 10
)

// Server is one listening socket on 127.0.0.1 and the connections it
// serves. Its goroutines end by Close.
type Server struct {
	handler  Handler
	cfg      Config
	listener *os.File
	rc       syscall.RawConn // the listener's
	port     int
	serving  sync.Once       // the accept loop is started (by Serve or, never, by Close)
	ctx      context.Context // done at Close
	cancel   context.CancelFunc
	slots    chan struct{} // one per connection being served
	stopped  chan struct{} // closed when the accept loop has ended
	closing  sync.Once
	// acceptErr is why the accept loop ended on its own (before Close);
	// it is written before stopped is closed.
	acceptErr error

	mu     sync.Mutex
	closed bool
	conns  map[*os.File]struct{}
	wg     sync.WaitGroup // the accept loop and every connection
}

// Listen listens on 127.0.0.1 on a free port; Serve starts answering.
func Listen(cfg Config) (*Server, error) {
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = 16 << 10
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 64
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	fd, port, err := listenLoopback()
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	ln := os.NewFile(uintptr(fd), "127.0.0.1:"+strconv.Itoa(port))
	rc, err := ln.SyscallConn()
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg: cfg, listener: ln, rc: rc, port: port, ctx: ctx, cancel: cancel,
		slots: make(chan struct{}, cfg.MaxConns), stopped: make(chan struct{}),
		conns: map[*os.File]struct{}{},
	}
	return s, nil
}

// Serve starts accepting connections, each answered by h, in a goroutine
// of the server's (Close ends it). Only the first call counts.
func (s *Server) Serve(h Handler) {
	s.serving.Do(func() {
		s.handler = h
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer close(s.stopped)
			s.acceptErr = s.acceptLoop(s.rc)
		}()
	})
}

// Addr is where the server listens: 127.0.0.1:PORT.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.port }

// Stopped is closed when the server no longer accepts connections: after
// Close, or when accepting failed (Close then says why).
func (s *Server) Stopped() <-chan struct{} { return s.stopped }

// Close stops listening, lets the connections end (their requests'
// Contexts are done; after a grace period they are closed) and waits for
// every goroutine of the server. Its error is why accepting had failed
// before, if it had.
func (s *Server) Close() error {
	s.closing.Do(func() {
		s.cancel()
		s.serving.Do(func() { close(s.stopped) }) // never served
		s.listener.Close()                        // wakes the accept loop
		ended := make(chan struct{})
		go func() {
			s.wg.Wait()
			close(ended)
		}()
		select {
		case <-ended:
		case <-time.After(closeGrace):
			s.mu.Lock()
			s.closed = true
			for c := range s.conns {
				c.Close() // wakes its reads and writes
			}
			s.mu.Unlock()
			<-ended
		}
	})
	s.wg.Wait()
	return s.acceptErr
}

func (s *Server) acceptLoop(rc syscall.RawConn) error {
	pause := 5 * time.Millisecond
	for {
		select {
		case s.slots <- struct{}{}:
		case <-s.ctx.Done():
			return nil
		}
		fd, err := acceptOne(rc)
		if err != nil {
			<-s.slots
			if s.ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, syscall.ECONNABORTED) {
				continue
			}
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) {
				// Out of descriptors or memory: try again a little later.
				select {
				case <-time.After(pause):
				case <-s.ctx.Done():
					return nil
				}
				pause = min(2*pause, time.Second)
				continue
			}
			return fmt.Errorf("accept a connection on %s: %w", s.Addr(), err)
		}
		pause = 5 * time.Millisecond
		conn := os.NewFile(uintptr(fd), "connection to "+s.Addr())
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			<-s.slots
			continue
		}
		s.conns[conn] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.slots }()
			defer s.forget(conn)
			s.serve(conn)
		}()
	}
}

// acceptOne accepts a connection, waiting (in Go's poller) for one to
// come; closing the listener ends the wait with an error.
func acceptOne(rc syscall.RawConn) (int, error) {
	var fd int
	var aerr error
	err := rc.Read(func(lfd uintptr) bool {
		for {
			fd, aerr = accept(int(lfd))
			if aerr != syscall.EINTR {
				return aerr != syscall.EAGAIN
			}
		}
	})
	if err != nil {
		return -1, err
	}
	return fd, aerr
}

func (s *Server) forget(conn *os.File) {
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
	conn.Close()
}

// serve reads one request from conn, answers it and closes the
// connection the polite way (the client's end first).
func (s *Server) serve(conn *os.File) {
	w := &Response{conn: conn, writeTimeout: s.cfg.WriteTimeout, header: Header{}}
	req, rerr := s.read(conn, w)
	if rerr != nil {
		if rerr.status != 0 {
			Error(w, statusText(rerr.status)+": "+rerr.why, rerr.status)
			w.finish()
		}
		s.closeWrite(conn)
		drain(conn)
		return
	}
	// The client's end is watched from here on: when it closes (or sends
	// more than a little), the request's Context is done.
	conn.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	req.ctx = ctx
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		defer cancel()
		drain(conn)
	}()
	s.run(w, req)
	w.finish()
	s.closeWrite(conn)
	<-watched
}

// read reads the request within the read timeout: the head, then (after a
// 100 Continue when the client waits for one) the body.
func (s *Server) read(conn *os.File, w *Response) (*Request, *requestError) {
	if err := conn.SetReadDeadline(time.Now().Add(s.cfg.ReadTimeout)); err != nil {
		return nil, &requestError{}
	}
	br := bufio.NewReaderSize(conn, 4096)
	lim := limits{headerBytes: s.cfg.MaxHeaderBytes, bodyBytes: s.cfg.MaxBodyBytes}
	if _, err := br.Peek(1); err != nil {
		return nil, timedOut(&requestError{cause: err}) // nothing sent: nothing to answer
	}
	req, rerr := readHead(br, lim)
	if rerr != nil {
		return nil, timedOut(rerr)
	}
	n, rerr := req.bodyLength(lim)
	if rerr != nil {
		return nil, rerr
	}
	if n > 0 && req.expectsContinue() && br.Buffered() == 0 {
		if _, err := w.send([]byte("HTTP/1.1 100 Continue\r\n\r\n")); err != nil {
			return nil, &requestError{}
		}
	}
	if rerr := req.readBody(br, n); rerr != nil {
		return nil, timedOut(rerr)
	}
	return req, nil
}

// timedOut is a 408 when the read deadline ended the request, otherwise
// rerr.
func timedOut(rerr *requestError) *requestError {
	if errors.Is(rerr.cause, os.ErrDeadlineExceeded) {
		return refuse(408, "the request was not sent within the read timeout")
	}
	return rerr
}

// run calls the handler; a panic is told to the log and answered 500 when
// nothing was sent yet.
func (s *Server) run(w *Response, req *Request) {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.Log(fmt.Sprintf("the handler of %s %s panicked: %v", req.Method, req.Path, p))
			if !w.sent && !w.streaming {
				w.header, w.status = Header{}, 0
				Error(w, "internal error", 500)
			}
		}
	}()
	s.handler(w, req)
}

// closeWrite ends the server's side of the connection and bounds how long
// the client's end is waited for.
func (s *Server) closeWrite(conn *os.File) {
	if rc, err := conn.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { shutdownWrite(int(fd)) })
	}
	conn.SetReadDeadline(time.Now().Add(linger))
}

// drain reads and drops what the client sends until it closes its end, an
// error or deadline, or drainMax bytes.
func drain(conn *os.File) {
	buf := make([]byte, 4096)
	for total := 0; total < drainMax; {
		n, err := conn.Read(buf)
		total += n
		if err != nil {
			return
		}
	}
}
