package playground

// The page's HTTP server (net/http): where it listens, what one client may
// make it do, which connections it keeps, and how it ends. Whom it
// answers (Host, Origin, the token) is the guard's (http.go).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// limits bound what one client may make the page's server do.
type limits struct {
	// readHeader bounds reading a request's head, read its head and body
	// (http.Server's ReadHeaderTimeout and ReadTimeout): a slow client
	// holds a connection no longer.
	readHeader, read time.Duration
	// write bounds writing a response, and each write of the event
	// stream: a client that stops reading is let go.
	write time.Duration
	// idle bounds how long a kept-alive connection waits for its next
	// request.
	idle time.Duration
	// headerBytes bounds a request's head (net/http allows 4 KiB of
	// slack); more is answered 431.
	headerBytes int
	// strangers is how many connections that have not shown the token
	// may be open at once: a new one closes the one of them that has
	// waited longest, so that idle connections (anyone on this machine
	// may open them) never keep the page out.
	strangers int
	// closeGrace is how long Close lets requests end by themselves.
	closeGrace time.Duration
}

func defaultLimits() limits {
	return limits{
		readHeader: 5 * time.Second, read: 10 * time.Second, write: 10 * time.Second,
		idle: 30 * time.Second, headerBytes: 16 << 10, strangers: 32, closeGrace: 2 * time.Second,
	}
}

// httpServer is the page's server: net/http on a socket of 127.0.0.1, its
// connections, and the handlers running. Its goroutines end by Close.
type httpServer struct {
	srv     *http.Server
	ln      net.Listener
	addr    string
	logw    io.Writer // told of a handler's panic
	serving sync.Once // Serve is started (by serve or, never, by Close)
	conns   *connTable
	grace   time.Duration      // how long Close lets requests end by themselves
	cancel  context.CancelFunc // done at Close: every request's Context
	stopped chan struct{}      // closed when Serve has returned
	// serveErr is why Serve ended on its own (before Close); it is
	// written before stopped is closed.
	serveErr error

	mu       sync.Mutex
	closed   bool           // no handler starts any more
	handlers sync.WaitGroup // the handlers running (added under mu)
}

// listen listens on 127.0.0.1, on a free port (never beyond this
// machine), for a server within lim; serve starts answering. A handler's
// panic is told to logw, one line, and answered 500 when nothing was sent
// yet.
func listen(lim limits, logw io.Writer) (*httpServer, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	base, cancel := context.WithCancel(context.Background())
	hs := &httpServer{
		ln: ln, addr: ln.Addr().String(), conns: &connTable{max: lim.strangers, open: map[net.Conn]*connInfo{}},
		grace: lim.closeGrace, cancel: cancel, stopped: make(chan struct{}), logw: logw,
	}
	// HTTP/1.1 only: no h2c on a plain socket.
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	hs.srv = &http.Server{
		ReadHeaderTimeout: lim.readHeader,
		ReadTimeout:       lim.read,
		WriteTimeout:      lim.write,
		IdleTimeout:       lim.idle,
		MaxHeaderBytes:    lim.headerBytes,
		Protocols:         &protocols,
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, &connRef{hs.conns, c})
		},
		ConnState: hs.conns.state,
		// What net/http says of its clients (malformed requests, TLS
		// attempts, closed connections) any user of this machine can
		// provoke: it would only fill the person's terminal. Panics are
		// told by wrap.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	return hs, nil
}

// serve starts answering with h, in a goroutine of the server's (Close
// waits for it). Only the first call counts.
func (hs *httpServer) serve(h http.Handler) {
	hs.serving.Do(func() {
		hs.srv.Handler = hs.wrap(h)
		go func() {
			defer close(hs.stopped)
			if err := hs.srv.Serve(hs.ln); !errors.Is(err, http.ErrServerClosed) {
				hs.serveErr = fmt.Errorf("serve on %s: %w", hs.addr, err)
			}
		}()
	})
}

// Addr is where the server listens: 127.0.0.1:PORT.
func (hs *httpServer) Addr() string { return hs.addr }

// Stopped is closed when the server no longer accepts connections: after
// Close, or when accepting failed (Close then says why).
func (hs *httpServer) Stopped() <-chan struct{} { return hs.stopped }

// Close stops listening, makes every request's Context done (so that
// streams end), lets the requests end for closeGrace, then closes every
// connection, and waits for the handlers still running. Its error is why
// serving had failed before, if it had.
func (hs *httpServer) Close() error {
	hs.cancel()
	hs.serving.Do(func() { // never served
		hs.ln.Close()
		close(hs.stopped)
	})
	ctx, cancel := context.WithTimeout(context.Background(), hs.grace)
	defer cancel()
	if hs.srv.Shutdown(ctx) != nil {
		hs.srv.Close()
	}
	<-hs.stopped
	hs.mu.Lock()
	hs.closed = true
	hs.mu.Unlock()
	hs.handlers.Wait()
	return hs.serveErr
}

// wrap runs h for each request, counted (Close waits for them), marked
// busy on its connection (a connection being answered is never closed
// for a newcomer), and with its panic told and answered.
func (hs *httpServer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs.mu.Lock()
		if hs.closed {
			hs.mu.Unlock()
			w.Header().Set("Connection", "close")
			http.Error(w, "tapedeck play is ending", http.StatusServiceUnavailable)
			return
		}
		hs.handlers.Add(1)
		hs.mu.Unlock()
		defer hs.handlers.Done()
		if ref, ok := r.Context().Value(connKey{}).(*connRef); ok {
			ref.t.busy(ref.c, true)
			defer ref.t.busy(ref.c, false)
		}
		sw := &sentWriter{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			fmt.Fprintf(hs.logw, "tapedeck: play: the handler of %s %s panicked: %v\n", r.Method, r.URL.Path, p)
			if sw.sent {
				panic(http.ErrAbortHandler) // net/http closes the connection and says nothing
			}
			sw.Header().Set("Connection", "close")
			http.Error(sw, "internal error", http.StatusInternalServerError)
		}()
		h.ServeHTTP(sw, r)
	})
}

// trust notes that a request of r's connection showed the token: the
// connection is the page's and no newcomer closes it.
func trust(r *http.Request) {
	if ref, ok := r.Context().Value(connKey{}).(*connRef); ok {
		ref.t.trust(ref.c)
	}
}

// sentWriter notes whether anything of the response went out.
type sentWriter struct {
	http.ResponseWriter
	sent bool
}

func (w *sentWriter) WriteHeader(status int) {
	w.sent = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *sentWriter) Write(p []byte) (int, error) {
	w.sent = true
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer
// (flushes, write deadlines).
func (w *sentWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// connKey is the request Context's key of its connection (a *connRef).
type connKey struct{}

type connRef struct {
	t *connTable
	c net.Conn
}

// connTable is the server's open connections: which showed the token,
// which are being answered, in the order they came.
type connTable struct {
	max  int
	mu   sync.Mutex
	seq  uint64
	open map[net.Conn]*connInfo
}

type connInfo struct {
	seq     uint64 // the order it came in
	trusted bool   // a request of it showed the token
	busy    bool   // a handler is answering a request of it
}

// state follows net/http's connections (its ConnState hook). A new one
// past the number of strangers allowed closes the stranger that came
// first and is not being answered.
func (t *connTable) state(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case http.StateNew:
		t.seq++
		t.open[c] = &connInfo{seq: t.seq}
		strangers := 0
		var oldest net.Conn
		var oldestSeq uint64
		for oc, info := range t.open {
			if info.trusted {
				continue
			}
			strangers++
			if !info.busy && oc != c && (oldest == nil || info.seq < oldestSeq) {
				oldest, oldestSeq = oc, info.seq
			}
		}
		if strangers > t.max && oldest != nil {
			oldest.Close() // its serving goroutine sees the error and ends: StateClosed
			delete(t.open, oldest)
		}
	case http.StateHijacked, http.StateClosed:
		delete(t.open, c)
	}
}

func (t *connTable) trust(c net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if info := t.open[c]; info != nil {
		info.trusted = true
	}
}

func (t *connTable) busy(c net.Conn, b bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if info := t.open[c]; info != nil {
		info.busy = b
	}
}
