package loopback

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// Response is what a handler answers. By default it is held whole and sent
// when the handler returns, with its Content-Length; after Stream, each
// Write goes out at once and the body ends when the connection closes.
// Every response closes its connection.
type Response struct {
	conn         *os.File
	writeTimeout time.Duration
	header       Header
	status       int
	body         bytes.Buffer
	streaming    bool
	sent         bool // the status line and header are out
	err          error
}

// errSent is Stream's error when the response has already been sent.
var errSent = errors.New("the response has already been sent")

// Header is the response's header, to set before the first Write after
// Stream or before the handler returns.
func (w *Response) Header() Header { return w.header }

// WriteHeader sets the status (200 when never set). The first call wins.
func (w *Response) WriteHeader(status int) {
	if w.status == 0 && status >= 100 && status <= 999 {
		w.status = status
	}
}

// Write adds p to the body; after Stream it sends p at once (within the
// server's write timeout).
func (w *Response) Write(p []byte) (int, error) {
	if !w.streaming {
		return w.body.Write(p)
	}
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.send(p)
	if err != nil {
		w.err = fmt.Errorf("stream the response: %w", err)
	}
	return n, w.err
}

// Stream sends the status and the header now; what is written after goes
// out as it is written, and the body ends when the handler returns and
// the connection closes (no Content-Length: for server-sent events).
func (w *Response) Stream() error {
	if w.sent || w.streaming {
		return errSent
	}
	w.streaming = true
	w.header.Del("content-length")
	head := w.head(-1)
	w.sent = true
	if _, err := w.send(head); err != nil {
		w.err = fmt.Errorf("stream the response: %w", err)
	}
	return w.err
}

// finish sends a held response whole.
func (w *Response) finish() error {
	if w.sent {
		return w.err
	}
	w.sent = true
	msg := append(w.head(w.body.Len()), w.body.Bytes()...)
	_, err := w.send(msg)
	return err
}

func (w *Response) send(p []byte) (int, error) {
	if err := w.conn.SetWriteDeadline(time.Now().Add(w.writeTimeout)); err != nil {
		return 0, err
	}
	return w.conn.Write(p)
}

// head is the status line and the header fields; length < 0 leaves out
// Content-Length.
func (w *Response) head(length int) []byte {
	status := w.status
	if status == 0 {
		status = 200
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %03d %s\r\n", status, statusText(status))
	names := make([]string, 0, len(w.header))
	for k := range w.header {
		if k != "connection" && k != "content-length" && isToken(k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range w.header[k] {
			b.WriteString(canonicalName(k))
			b.WriteString(": ")
			b.WriteString(fieldValue(v))
			b.WriteString("\r\n")
		}
	}
	if length >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	}
	b.WriteString("Connection: close\r\n\r\n")
	return b.Bytes()
}

// canonicalName spells a lower-case field name the usual way:
// content-type as Content-Type.
func canonicalName(k string) string {
	b := []byte(k)
	upper := true
	for i, c := range b {
		if upper && 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		upper = c == '-'
	}
	return string(b)
}

// fieldValue is v with every control character (CR and LF above all: no
// header can be split) made a space.
func fieldValue(v string) string {
	return strings.Map(func(r rune) rune {
		if (r < ' ' && r != '\t') || r == 0x7f {
			return ' '
		}
		return r
	}, v)
}

// Error answers status with the one line msg, as plain text.
func Error(w *Response, msg string, status int) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.body.Reset()
	w.body.WriteString(msg)
	w.body.WriteByte('\n')
}

func statusText(status int) string {
	switch status {
	case 100:
		return "Continue"
	case 200:
		return "OK"
	case 204:
		return "No Content"
	case 400:
		return "Bad Request"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 408:
		return "Request Timeout"
	case 413:
		return "Content Too Large"
	case 431:
		return "Request Header Fields Too Large"
	case 500:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case 503:
		return "Service Unavailable"
	case 505:
		return "HTTP Version Not Supported"
	}
	return "Status " + fmt.Sprint(status)
}
