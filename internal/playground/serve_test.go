package playground

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testLimits are the page server's limits, with short times for tests.
func testLimits() limits {
	lim := defaultLimits()
	lim.readHeader, lim.read, lim.write, lim.idle = 300*time.Millisecond, 600*time.Millisecond, 300*time.Millisecond, 5*time.Second
	lim.headerBytes = 1024
	lim.strangers = 4
	return lim
}

// serveTest serves h within lim for the test; it is closed at the test's
// end, and Close must return (every handler ended) in time.
func serveTest(t *testing.T, lim limits, h http.HandlerFunc) (*httpServer, *syncBuffer) {
	t.Helper()
	logw := &syncBuffer{}
	hs, err := listen(lim, logw)
	if err != nil {
		t.Fatal(err)
	}
	hs.serve(h)
	t.Cleanup(func() {
		closed := make(chan error, 1)
		go func() { closed <- hs.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("Close: %v", err)
			}
		case <-time.After(lim.closeGrace + 10*time.Second):
			t.Error("Close did not return within its grace period and 10 s")
		}
	})
	return hs, logw
}

// exchange sends raw on a new connection and reads until the server
// closes it (20 s at most).
func exchange(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil && !isReset(err) {
		t.Fatalf("read the answer to %.60q: %v (so far %q)", raw, err, b)
	}
	return string(b)
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

// closedWithin waits until the server closes c (a read ends), d at most,
// and says how long that took.
func closedWithin(t *testing.T, c net.Conn, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(d))
	if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server kept the connection open for %v", d)
	}
	return time.Since(start)
}

// TestServeRefusesBadRequests: a malformed or oversized request is
// answered with its status (or the connection closed) and no handler sees
// it.
func TestServeRefusesBadRequests(t *testing.T) {
	t.Parallel()
	called := make(chan string, 16)
	hs, _ := serveTest(t, testLimits(), func(w http.ResponseWriter, r *http.Request) { called <- r.URL.Path })
	for _, c := range []struct{ what, raw, status string }{
		{"garbage", "garbage\r\n\r\n", "400"},
		{"a head over the limit", "GET / HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("a", 8000) + "\r\n\r\n", "431"},
		{"no Host in HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", "400"},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "400"},
		{"a bad Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", "400"},
		{"Content-Lengths that differ", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "400"},
		{"another version", "GET / HTTP/3.0\r\nHost: h\r\n\r\n", "505"},
		{"a bad escape in the path", "GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n", "400"},
	} {
		got := exchange(t, hs.Addr(), c.raw)
		if !strings.HasPrefix(got, "HTTP/1.1 "+c.status+" ") {
			t.Errorf("%s: %.80q, want %s", c.what, got, c.status)
		}
	}
	select {
	case p := <-called:
		t.Errorf("the handler was called for %q", p)
	default:
	}
}

// TestServeLetsSlowClientsGo: a client that does not finish its request's
// head within the head's limit, or its body within the request's, is let
// go: its connection is closed, the handler's read of the body ends.
func TestServeLetsSlowClientsGo(t *testing.T) {
	t.Parallel()
	lim := testLimits()
	bodyRead := make(chan error, 1)
	hs, _ := serveTest(t, lim, func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		bodyRead <- err
	})
	c, err := net.Dial("tcp", hs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n") // no blank line: never ends
	if d := closedWithin(t, c, lim.readHeader+5*time.Second); d < lim.readHeader/2 {
		t.Errorf("closed after %v, before the head's limit %v", d, lim.readHeader)
	}

	b, err := net.Dial("tcp", hs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	io.WriteString(b, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nab") // the body never ends
	select {
	case err := <-bodyRead:
		if err == nil {
			t.Error("the handler read a body that never ended without an error")
		}
	case <-time.After(lim.read + 5*time.Second):
		t.Fatalf("the handler's read of a body that never ends lasted more than %v", lim.read+5*time.Second)
	}
	closedWithin(t, b, 5*time.Second)
}

// TestServeStreamsAndSeesTheClientGo: a stream reaches the client write by
// write while the handler runs; when the client hangs up, the request's
// Context is done and the handler ends; a client that stops reading is
// let go after the write limit.
func TestServeStreamsAndSeesTheClientGo(t *testing.T) {
	t.Parallel()
	lim := testLimits()
	next := make(chan struct{})
	ended := make(chan string, 2)
	hs, _ := serveTest(t, lim, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		chunk := []byte("data: " + strings.Repeat("x", 64<<10) + "\n\n")
		for i := 1; ; i++ {
			rc.SetWriteDeadline(time.Now().Add(lim.write))
			var err error
			if r.URL.Path == "/flood" {
				_, err = w.Write(chunk)
			} else {
				_, err = fmt.Fprintf(w, "data: %d\n\n", i)
			}
			if err == nil {
				err = rc.Flush()
			}
			if err != nil {
				ended <- r.URL.Path + ": a write failed"
				return
			}
			if r.URL.Path == "/flood" {
				continue
			}
			select {
			case <-next:
			case <-r.Context().Done():
				ended <- r.URL.Path + ": the client went"
				return
			}
		}
	})
	res, err := http.Get("http://" + hs.Addr() + "/events")
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Get("Content-Type") != "text/event-stream" || res.ContentLength != -1 {
		t.Errorf("header %v, length %d", res.Header, res.ContentLength)
	}
	br := bufio.NewReader(res.Body)
	for i := 1; i <= 3; i++ {
		line, err := br.ReadString('\n')
		if err != nil || line != "data: "+strconv.Itoa(i)+"\n" {
			t.Fatalf("event %d: %q %v", i, line, err)
		}
		br.ReadString('\n')
		next <- struct{}{} // the handler writes the next only now
	}
	res.Body.Close()
	select {
	case got := <-ended:
		if got != "/events: the client went" {
			t.Errorf("the stream ended with %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not see the client go within 10 s")
	}

	// A client that reads nothing: the handler's writes stop going out,
	// and one of them fails after the write limit.
	c, err := net.Dial("tcp", hs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /flood HTTP/1.1\r\nHost: h\r\n\r\n")
	select {
	case got := <-ended:
		if got != "/flood: a write failed" {
			t.Errorf("the flood ended with %q", got)
		}
	case <-time.After(lim.write + 10*time.Second):
		t.Fatal("a client that reads nothing held the stream for more than the write limit and 10 s")
	}
}

// TestServeCloseEndsStreams: Close makes the requests' Contexts done, so a
// stream's handler ends, and returns once every handler has; the port is
// closed then. A server never served closes too.
func TestServeCloseEndsStreams(t *testing.T) {
	t.Parallel()
	lim := testLimits()
	hs, err := listen(lim, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var handlerEnded sync.WaitGroup
	handlerEnded.Add(1)
	hs.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer handlerEnded.Done()
		w.WriteHeader(200)
		http.NewResponseController(w).Flush()
		close(started)
		<-r.Context().Done()
	}))
	res, err := http.Get("http://" + hs.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	<-started
	begun := time.Now()
	if err := hs.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begun); d > lim.closeGrace+5*time.Second {
		t.Errorf("Close took %v", d)
	}
	handlerEnded.Wait() // Close waited for it: this returns at once
	select {
	case <-hs.Stopped():
	default:
		t.Error("Stopped is not closed after Close")
	}
	if c, err := net.Dial("tcp", hs.Addr()); err == nil {
		c.Close()
		t.Error("the port still accepts after Close")
	}
	idle, err := listen(lim, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	<-idle.Stopped()
}

// TestServePanicIsAnswered500: a handler's panic is told to the log, one
// line, and answered 500; the server goes on.
func TestServePanicIsAnswered500(t *testing.T) {
	t.Parallel()
	hs, logw := serveTest(t, testLimits(), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/boom" {
			panic("boom")
		}
		io.WriteString(w, "ok")
	})
	if got := exchange(t, hs.Addr(), "GET /boom HTTP/1.1\r\nHost: h\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 500 ") {
		t.Errorf("a panic: %q", got)
	}
	if l := logw.String(); l != "tapedeck: play: the handler of GET /boom panicked: boom\n" {
		t.Errorf("logged %q", l)
	}
	if got := exchange(t, hs.Addr(), "GET /ok HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 200 ") {
		t.Errorf("after a panic: %q", got)
	}
}

// TestServeListensOnLoopbackOnly: the port is open on 127.0.0.1 and on no
// other address of this machine (IPv6 loopback, the interfaces'
// addresses).
func TestServeListensOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	hs, _ := serveTest(t, testLimits(), func(http.ResponseWriter, *http.Request) {})
	host, port, _ := net.SplitHostPort(hs.Addr())
	if host != "127.0.0.1" {
		t.Fatalf("listens on %s", hs.Addr())
	}
	others := []string{"[::1]:" + port}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && !ip.IP.IsLoopback() {
			others = append(others, net.JoinHostPort(ip.IP.String(), port))
		}
	}
	if c, err := net.Dial("tcp", hs.Addr()); err != nil {
		t.Fatalf("127.0.0.1: %v", err)
	} else {
		c.Close()
	}
	for _, o := range others {
		if c, err := net.DialTimeout("tcp", o, 5*time.Second); err == nil {
			c.Close()
			t.Errorf("the server answers on %s; it must listen on 127.0.0.1 only", o)
		}
	}
}

// TestServeStrangersCannotCrowdOutThePage: connections that never showed
// the token are at most lim.strangers; each newcomer past that closes the
// one that came first, so that idle connections never keep a request out
// (they used to take every slot until the read timeout). The page's own
// kept-alive connection, which showed the token, is never closed for
// them.
func TestServeStrangersCannotCrowdOutThePage(t *testing.T) {
	t.Parallel()
	lim := testLimits()
	lim.readHeader, lim.read = 30*time.Second, 30*time.Second // idle strangers stay, but for the cap
	hs, _ := serveTest(t, lim, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Tapedeck-Token") == "yes" {
			trust(r)
		}
		io.WriteString(w, "ok")
	})
	// The page's connection, kept alive, shown the token once.
	page, err := net.Dial("tcp", hs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	pr := bufio.NewReader(page)
	ask := func(what string) {
		t.Helper()
		page.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(page, "GET / HTTP/1.1\r\nHost: h\r\nX-Tapedeck-Token: yes\r\n\r\n")
		res, err := http.ReadResponse(pr, nil)
		if err != nil {
			t.Fatalf("%s: the page's kept-alive connection: %v", what, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	ask("before the strangers")

	var strangers []net.Conn
	for range 64 {
		c, err := net.Dial("tcp", hs.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		strangers = append(strangers, c)
	}
	// The first ones are closed, the last lim.strangers stay.
	for i, c := range strangers[:64-lim.strangers-1] {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF && !isReset(err) {
			t.Fatalf("stranger %d of 64: read %v, want the server to have closed it", i+1, err)
		}
	}
	// A newcomer is answered at once, and the page's connection too.
	start := time.Now()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + hs.Addr() + "/")
	if err != nil {
		t.Fatalf("a request after 64 idle connections: %v", err)
	}
	res.Body.Close()
	ask("after the strangers")
	t.Logf("a request after 64 idle connections answered in %v", time.Since(start).Round(time.Microsecond))
}

// TestASlowActionIsAnswered: the write limit bounds writing an answer,
// not the action before it: a restart that waits longer than the limit
// for the plugin to stop is answered, not cut off (on a machine at load
// 13 a restart took more than the 10 s limit, and the page's connection
// was closed with no answer).
func TestASlowActionIsAnswered(t *testing.T) {
	t.Parallel()
	lim := testLimits()
	lim.write = 200 * time.Millisecond
	// The plugin takes a second to exit once its stdin closes, five
	// times the write limit.
	script := `while IFS= read -r l; do case "$l" in *'"initialize"'*) echo '{"jsonrpc":"2.0","id":1,"result":{}}';; esac; done; sleep 1`
	p := play(t, t.TempDir(), func(o *Options) { o.Command = []string{"sh", "-c", script}; o.limits = &lim })
	ev := p.follow(t)
	ev.says(t, `"id":1`)
	begin := time.Now()
	if status, res := p.post(t, `{"do":"restart"}`); status != 200 {
		t.Fatalf("restart: %d %v", status, res)
	}
	if took := time.Since(begin); took < lim.write {
		t.Fatalf("the restart took %v, less than the write limit %v: the test shows nothing", took, lim.write)
	}
}
