package loopback

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Request is one request, read whole: its head and its body.
type Request struct {
	Method string // e.g. GET, POST (a token, as sent)
	Path   string // the target's path, percent-decoded; always starts with "/"
	// RawQuery is the target's query as sent (after "?", without it).
	RawQuery string
	// Host is the Host header ("" only for an HTTP/1.0 request without one).
	Host   string
	Header Header
	Body   []byte // Content-Length bytes; nil without a body

	query map[string][]string
	ctx   context.Context
}

// Query is the first value of the query parameter name, decoded ("" when
// absent).
func (r *Request) Query(name string) string {
	if v := r.query[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Context is done when the client has closed its end of the connection or
// the server is closing.
func (r *Request) Context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// Header holds a message's fields by lower-case name.
type Header map[string][]string

// Get is the first value of the field name (any case), or "".
func (h Header) Get(name string) string {
	if v := h[strings.ToLower(name)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set replaces the field name's values with value.
func (h Header) Set(name, value string) { h[strings.ToLower(name)] = []string{value} }

// Add adds value to the field name's values.
func (h Header) Add(name, value string) {
	k := strings.ToLower(name)
	h[k] = append(h[k], value)
}

// Del removes the field name.
func (h Header) Del(name string) { delete(h, strings.ToLower(name)) }

// requestError is a request refused before any handler sees it: the
// status to answer with and why.
type requestError struct {
	status int // 0: nothing to answer (the client sent nothing)
	why    string
	cause  error // the read's error, if one ended the request
}

func (e *requestError) Error() string { return fmt.Sprintf("%d %s", e.status, e.why) }

func refuse(status int, format string, args ...any) *requestError {
	return &requestError{status: status, why: fmt.Sprintf(format, args...)}
}

// limits bound what one request may make the server read and hold.
type limits struct {
	headerBytes int   // the request line and every header line, with their line ends
	bodyBytes   int64 // a Content-Length larger than this is refused
}

// readHead reads the request line and the header fields, at most
// lim.headerBytes of them. The body is not read: see readBody.
func readHead(br *bufio.Reader, lim limits) (*Request, *requestError) {
	budget := lim.headerBytes
	line, rerr := readLine(br, &budget)
	if rerr != nil {
		return nil, rerr
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, version, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || method == "" || target == "" {
		return nil, refuse(400, "the request line is not METHOD TARGET VERSION")
	}
	if !isToken(method) {
		return nil, refuse(400, "the method is not a token")
	}
	if version != "HTTP/1.1" && version != "HTTP/1.0" {
		if strings.HasPrefix(version, "HTTP/") {
			return nil, refuse(505, "only HTTP/1.1 and HTTP/1.0 are served")
		}
		return nil, refuse(400, "the request line is not METHOD TARGET VERSION")
	}
	req := &Request{Method: method, Header: Header{}}
	if rerr := req.parseTarget(target); rerr != nil {
		return nil, rerr
	}
	for {
		line, rerr := readLine(br, &budget)
		if rerr != nil {
			return nil, rerr
		}
		if line == "" {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, refuse(400, "a header field is folded over lines")
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) {
			return nil, refuse(400, "a header line is not NAME: VALUE")
		}
		value = strings.Trim(value, " \t")
		for i := 0; i < len(value); i++ {
			if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
				return nil, refuse(400, "the header field %s has a control character", name)
			}
		}
		req.Header.Add(name, value)
	}
	hosts := req.Header["host"]
	switch {
	case len(hosts) > 1:
		return nil, refuse(400, "more than one Host header")
	case len(hosts) == 1:
		req.Host = hosts[0]
	case version == "HTTP/1.1":
		return nil, refuse(400, "an HTTP/1.1 request without Host")
	}
	return req, nil
}

// bodyLength is the request's Content-Length (0 without one), checked
// against the limit.
func (r *Request) bodyLength(lim limits) (int64, *requestError) {
	if len(r.Header["transfer-encoding"]) > 0 {
		return 0, refuse(501, "a body with a Transfer-Encoding (send Content-Length)")
	}
	values := r.Header["content-length"]
	if len(values) == 0 {
		return 0, nil
	}
	for _, v := range values[1:] {
		if v != values[0] {
			return 0, refuse(400, "Content-Length headers that differ")
		}
	}
	v := values[0]
	if v == "" || len(v) > 18 || strings.Trim(v, "0123456789") != "" {
		return 0, refuse(400, "the Content-Length is not a number")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, refuse(400, "the Content-Length is not a number")
	}
	if n > lim.bodyBytes {
		return 0, refuse(413, "a body of %d bytes (at most %d)", n, lim.bodyBytes)
	}
	return n, nil
}

// readBody reads the n bytes of the body.
func (r *Request) readBody(br *bufio.Reader, n int64) *requestError {
	if n == 0 {
		return nil
	}
	r.Body = make([]byte, n)
	if _, err := io.ReadFull(br, r.Body); err != nil {
		r.Body = nil
		e := refuse(400, "the body ends before its Content-Length")
		e.cause = err
		return e
	}
	return nil
}

// expectsContinue says the client waits for a 100 Continue before it
// sends the body.
func (r *Request) expectsContinue() bool {
	return strings.EqualFold(r.Header.Get("expect"), "100-continue")
}

// parseTarget takes the origin-form target apart: the path, decoded, and
// the query, decoded.
func (r *Request) parseTarget(target string) *requestError {
	if target[0] != '/' {
		return refuse(400, "the target is not a path")
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c == 0x7f || c == '#' {
			return refuse(400, "the target has a character a URL may not")
		}
	}
	path, query, _ := strings.Cut(target, "?")
	p, err := unescape(path, false)
	if err != nil {
		return refuse(400, "the path: %v", err)
	}
	q, err := parseQuery(query)
	if err != nil {
		return refuse(400, "the query: %v", err)
	}
	r.Path, r.RawQuery, r.query = p, query, q
	return nil
}

// readLine reads one line, CRLF (or a bare LF) ended, and takes its length
// from budget; a line that would overdraw it is refused with 431.
func readLine(br *bufio.Reader, budget *int) (string, *requestError) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > *budget {
			return "", refuse(431, "the request's head is longer than its limit")
		}
		*budget -= len(chunk)
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			e := refuse(400, "the request's head ends before its blank line")
			e.cause = err
			return "", e
		}
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	for _, c := range line {
		if c == '\r' || c == 0 {
			return "", refuse(400, "a CR or NUL inside a line of the head")
		}
	}
	return string(line), nil
}

// isToken says s is an RFC 9110 token (a method, a field name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// parseQuery decodes an application/x-www-form-urlencoded query: pairs
// separated by "&", "+" a space, %XX a byte. A pair without "=" has the
// value "".
func parseQuery(raw string) (map[string][]string, error) {
	q := map[string][]string{}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := unescape(k, true)
		if err != nil {
			return nil, err
		}
		value, err := unescape(v, true)
		if err != nil {
			return nil, err
		}
		q[key] = append(q[key], value)
	}
	return q, nil
}

// unescape decodes %XX escapes (and, in a query, "+" as a space).
func unescape(s string, plusSpace bool) (string, error) {
	if strings.IndexByte(s, '%') < 0 && (!plusSpace || strings.IndexByte(s, '+') < 0) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				end := min(i+3, len(s))
				return "", fmt.Errorf("the escape %q is not %%XX", s[i:end])
			}
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		case c == '+' && plusSpace:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
