package loopback

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serve runs a server of h for the test; it is closed at the test's end,
// and Close must return (every goroutine of the server ended) in time.
func serve(t *testing.T, cfg Config, h Handler) *Server {
	t.Helper()
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Serve(h)
	t.Cleanup(func() {
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("Close: %v", err)
			}
		case <-time.After(closeGrace + 10*time.Second):
			t.Error("Close did not return within its grace period and 10 s")
		}
	})
	return s
}

// exchange sends raw on a new connection and reads until the server
// closes it.
func exchange(t *testing.T, s *Server, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read the answer to %q: %v (so far %q)", raw, err, b)
	}
	return string(b)
}

func echo(w *Response, r *Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Evil", "a\r\nSet-Cookie: x=1")
	fmt.Fprintf(w, "%s %s token=%s host=%s body=%s", r.Method, r.Path, r.Query("token"), r.Host, r.Body)
}

// TestServesAndCloses: a request through a real client is answered with
// its Content-Length and Connection: close, a header value cannot split
// the header, and the connection is closed after the one response.
func TestServesAndCloses(t *testing.T) {
	s := serve(t, Config{}, echo)
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") || s.Port() == 0 {
		t.Fatalf("listens on %s", s.Addr())
	}
	res, err := http.Post("http://"+s.Addr()+"/x%2Fy?token=a%20b", "text/plain", strings.NewReader("hi"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := "POST /x/y token=a b host=" + s.Addr() + " body=hi"; string(b) != want {
		t.Errorf("body %q, want %q", b, want)
	}
	if res.StatusCode != 200 || res.ContentLength != int64(len(b)) || !res.Close || res.Header.Get("Set-Cookie") != "" {
		t.Errorf("status %d, length %d, close %v, header %v", res.StatusCode, res.ContentLength, res.Close, res.Header)
	}
	// One request per connection: a second one on it is not answered.
	got := exchange(t, s, "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n")
	if strings.Count(got, "HTTP/1.1 200") != 1 || !strings.Contains(got, "GET /1 ") {
		t.Errorf("two requests on one connection: %q", got)
	}
}

// TestRefusesBadRequests: a malformed, oversized or chunked request is
// answered with its status and a closed connection, and no handler sees
// it.
func TestRefusesBadRequests(t *testing.T) {
	called := make(chan string, 16)
	s := serve(t, Config{MaxHeaderBytes: 1024, MaxBodyBytes: 10}, func(w *Response, r *Request) { called <- r.Path })
	for _, c := range []struct{ raw, status string }{
		{"garbage\r\n\r\n", "400"},
		{"GET / HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("a", 2000) + "\r\n\r\n", "431"},
		{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n" + strings.Repeat("a", 11), "413"},
		{"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "501"},
		{"GET /?token=%zz HTTP/1.1\r\nHost: h\r\n\r\n", "400"},
	} {
		got := exchange(t, s, c.raw)
		if !strings.HasPrefix(got, "HTTP/1.1 "+c.status+" ") || !strings.Contains(got, "Connection: close\r\n") {
			t.Errorf("%.40q: %q, want %s", c.raw, got, c.status)
		}
	}
	select {
	case p := <-called:
		t.Errorf("the handler was called for %q", p)
	default:
	}
}

// TestSlowClientIsLetGo: a client that does not finish its request
// within the read timeout gets 408 and a closed connection.
func TestSlowClientIsLetGo(t *testing.T) {
	s := serve(t, Config{ReadTimeout: 200 * time.Millisecond}, echo)
	start := time.Now()
	got := exchange(t, s, "GET / HTTP/1.1\r\nHost: h\r\n") // no blank line: never ends
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") {
		t.Errorf("a request never finished: %q", got)
	}
	if d := time.Since(start); d > 200*time.Millisecond+5*time.Second {
		t.Errorf("let go after %v (timeout 200 ms)", d)
	}
	// A body that never comes, likewise.
	got = exchange(t, s, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nab")
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") {
		t.Errorf("a body never finished: %q", got)
	}
}

// TestExpectContinue: a client that waits for 100 Continue gets it and
// then its answer.
func TestExpectContinue(t *testing.T) {
	s := serve(t, Config{}, echo)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, "POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	io.WriteString(c, "abc")
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "HTTP/1.1 200 OK") || !strings.HasSuffix(string(rest), "body=abc") {
		t.Errorf("after 100 Continue: %q", rest)
	}
}

// TestStreamsAndSeesTheClientGo: a streamed response reaches the client
// write by write, while the handler still runs; when the client hangs up,
// the request's Context is done and the handler ends.
func TestStreamsAndSeesTheClientGo(t *testing.T) {
	next := make(chan struct{})
	ended := make(chan struct{})
	s := serve(t, Config{}, func(w *Response, r *Request) {
		defer close(ended)
		w.Header().Set("Content-Type", "text/event-stream")
		if err := w.Stream(); err != nil {
			t.Error(err)
			return
		}
		for i := 1; ; i++ {
			fmt.Fprintf(w, "data: %d\n\n", i)
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
	})
	res, err := http.Get("http://" + s.Addr() + "/events")
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
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not see the client go within 10 s")
	}
}

// TestCloseEndsStreams: Close makes the requests' Contexts done, so a
// stream's handler ends, and returns once every connection has ended; the
// port is closed then.
func TestCloseEndsStreams(t *testing.T) {
	s, err := Listen(Config{})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	s.Serve(func(w *Response, r *Request) {
		w.Stream()
		close(started)
		<-r.Context().Done()
	})
	res, err := http.Get("http://" + s.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	<-started
	begun := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begun); d > closeGrace+5*time.Second {
		t.Errorf("Close took %v", d)
	}
	select {
	case <-s.Stopped():
	default:
		t.Error("Stopped is not closed after Close")
	}
	if c, err := net.Dial("tcp", s.Addr()); err == nil {
		c.Close()
		t.Error("the port still accepts after Close")
	}
	// A server never served closes too.
	idle, err := Listen(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	<-idle.Stopped()
}

// TestPanicIsAnswered500: a handler's panic is told to the log and
// answered 500; the server goes on.
func TestPanicIsAnswered500(t *testing.T) {
	logged := make(chan string, 1)
	s := serve(t, Config{Log: func(l string) { logged <- l }}, func(w *Response, r *Request) {
		if r.Path == "/boom" {
			panic("boom")
		}
		echo(w, r)
	})
	if got := exchange(t, s, "GET /boom HTTP/1.1\r\nHost: h\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 500 ") {
		t.Errorf("a panic: %q", got)
	}
	if l := <-logged; !strings.Contains(l, "GET /boom panicked: boom") {
		t.Errorf("logged %q", l)
	}
	if got := exchange(t, s, "GET /ok HTTP/1.1\r\nHost: h\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 200 ") {
		t.Errorf("after a panic: %q", got)
	}
}

// TestListensOnLoopbackOnly: the port is open on 127.0.0.1 and on no other
// address of this machine (IPv6 loopback, the interfaces' addresses).
func TestListensOnLoopbackOnly(t *testing.T) {
	s := serve(t, Config{}, echo)
	port := strconv.Itoa(s.Port())
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
	if c, err := net.Dial("tcp", s.Addr()); err != nil {
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
	t.Logf("not open on %v", others)
}
