package loopback

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
)

var testLimits = limits{headerBytes: 1024, bodyBytes: 64}

// parse reads a request from raw as the server does: head, length, body.
func parse(raw string, lim limits) (*Request, *requestError) {
	br := bufio.NewReaderSize(strings.NewReader(raw), 16)
	req, rerr := readHead(br, lim)
	if rerr != nil {
		return nil, rerr
	}
	n, rerr := req.bodyLength(lim)
	if rerr != nil {
		return nil, rerr
	}
	if rerr := req.readBody(br, n); rerr != nil {
		return nil, rerr
	}
	return req, nil
}

// TestReadRequest: a request is taken apart (the path and the query
// decoded, the fields by lower-case name, the body by Content-Length),
// and each kind of malformed or oversized request is refused with its
// status.
func TestReadRequest(t *testing.T) {
	req, rerr := parse("POST /a%20b/c?token=ab%2Fc+d&flag&token=second HTTP/1.1\r\nHost: 127.0.0.1:9\r\nX-Thing:  v 1 \r\nx-thing: v2\r\nContent-Length: 5\r\n\r\nhello", testLimits)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if req.Method != "POST" || req.Path != "/a b/c" || req.Host != "127.0.0.1:9" || string(req.Body) != "hello" {
		t.Errorf("got %s %q host %q body %q", req.Method, req.Path, req.Host, req.Body)
	}
	if req.RawQuery != "token=ab%2Fc+d&flag&token=second" || req.Query("token") != "ab/c d" || req.Query("flag") != "" || req.Query("none") != "" {
		t.Errorf("query %q: token %q", req.RawQuery, req.Query("token"))
	}
	if got := strings.Join(req.Header["x-thing"], "|"); got != "v 1|v2" || req.Header.Get("X-THING") != "v 1" {
		t.Errorf("X-Thing: %q", got)
	}
	// A bare LF ends a line too; HTTP/1.0 needs no Host.
	if req, rerr := parse("GET / HTTP/1.0\n\n", testLimits); rerr != nil || req.Path != "/" || req.Host != "" || req.Body != nil {
		t.Errorf("HTTP/1.0 with bare LFs: %v %+v", rerr, req)
	}
	long := "GET / HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("a", 1024) + "\r\n\r\n"
	for _, c := range []struct {
		what, raw string
		status    int
	}{
		{"no version", "GET /\r\n\r\n", 400},
		{"HTTP/2", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
		{"not HTTP", "GET / FTP/1.0\r\nHost: h\r\n\r\n", 400},
		{"a method with a slash", "G/T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"an absolute target", "GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"a fragment", "GET /#x HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"a control character in the target", "GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"a bad escape in the path", "GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"a bad escape in the query", "GET /?token=%4 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"no Host in HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", 400},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"a folded field", "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n", 400},
		{"a space before the colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400},
		{"a line without a colon", "GET / HTTP/1.1\r\nHost h\r\n\r\n", 400},
		{"a NUL in a value", "GET / HTTP/1.1\r\nHost: h\x00\r\n\r\n", 400},
		{"a lone CR in a line", "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400},
		{"a head without its blank line", "GET / HTTP/1.1\r\nHost: h\r\n", 400},
		{"a head over the limit", long, 431},
		{"a body over the limit", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 65\r\n\r\n", 413},
		{"a huge Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400},
		{"a negative Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400},
		{"Content-Lengths that differ", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"a chunked body", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501},
		{"a body shorter than its length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc", 400},
	} {
		req, rerr := parse(c.raw, testLimits)
		if rerr == nil {
			t.Errorf("%s: read as %+v, want %d", c.what, req, c.status)
		} else if rerr.status != c.status {
			t.Errorf("%s: %d (%s), want %d", c.what, rerr.status, rerr.why, c.status)
		}
	}
}

// TestUnescape: %XX decodes in either case, "+" is a space in a query
// only, and a cut or non-hex escape is an error.
func TestUnescape(t *testing.T) {
	for _, c := range []struct {
		in, want string
		plus     bool
	}{
		{"a%2fb%2Fc", "a/b/c", false}, {"a+b", "a+b", false}, {"a+b", "a b", true},
		{"%e2%82%ac", "€", true}, {"%25", "%", true}, {"", "", true},
	} {
		if got, err := unescape(c.in, c.plus); err != nil || got != c.want {
			t.Errorf("unescape(%q, %v) = %q, %v; want %q", c.in, c.plus, got, err, c.want)
		}
	}
	for _, bad := range []string{"%", "%4", "a%g0", "%%"} {
		if got, err := unescape(bad, true); err == nil {
			t.Errorf("unescape(%q) = %q, want an error", bad, got)
		}
	}
}

// FuzzReadRequest: whatever the bytes, reading them neither panics nor
// exceeds the limits; a refusal has a status the server answers with; a
// request read is what it says (a token method, a path from "/", a body
// of its Content-Length), and written out again it reads the same.
func FuzzReadRequest(f *testing.F) {
	for _, seed := range []string{
		"GET /?token=abc HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n",
		"POST /api HTTP/1.1\r\nHost: localhost:1\r\nOrigin: http://localhost:1\r\nContent-Length: 2\r\n\r\n{}",
		"GET /a%20b?x=%zz HTTP/1.0\n\n",
		"GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := limits{headerBytes: 512, bodyBytes: 128}
		req, rerr := parse(string(data), lim)
		if rerr != nil {
			switch rerr.status {
			case 400, 413, 431, 501, 505:
			default:
				t.Fatalf("refused with %d (%s)", rerr.status, rerr.why)
			}
			return
		}
		if !isToken(req.Method) || !strings.HasPrefix(req.Path, "/") || int64(len(req.Body)) > lim.bodyBytes {
			t.Fatalf("read %q %q with a body of %d", req.Method, req.Path, len(req.Body))
		}
		again, rerr := parse(string(reserialize(req)), limits{headerBytes: 1 << 20, bodyBytes: lim.bodyBytes})
		if rerr != nil {
			t.Fatalf("the request written out again is refused: %v\n%q", rerr, reserialize(req))
		}
		if again.Method != req.Method || again.Path != req.Path || again.RawQuery != req.RawQuery || again.Host != req.Host ||
			!bytes.Equal(again.Body, req.Body) || fmt.Sprint(again.Header) != fmt.Sprint(req.Header) || fmt.Sprint(again.query) != fmt.Sprint(req.query) {
			t.Fatalf("read again differently:\n%+v\n%+v", req, again)
		}
	})
}

// reserialize writes a request read back out (the path escaped again,
// the query as sent, the fields in name order).
func reserialize(r *Request) []byte {
	var b bytes.Buffer
	target := escapePath(r.Path)
	if r.RawQuery != "" {
		target += "?" + r.RawQuery
	}
	version := "HTTP/1.1"
	if len(r.Header["host"]) == 0 {
		version = "HTTP/1.0"
	}
	fmt.Fprintf(&b, "%s %s %s\r\n", r.Method, target, version)
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range r.Header[k] {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	b.Write(r.Body)
	return b.Bytes()
}

// escapePath percent-encodes every byte of p but the unreserved ones and "/".
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
