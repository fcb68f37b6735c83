package playground

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// post asks the playground what the page asks (POST /api, with the
// token, from the page's origin) and returns the status and the answer.
func (p *playing) post(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	u, _ := url.Parse(p.url)
	base := "http://" + u.Host
	req, _ := http.NewRequest("POST", base+"/api", strings.NewReader(body))
	req.Header.Set("Origin", base)
	req.Header.Set("X-Tapedeck-Token", u.Query().Get("token"))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// stream is the page's event stream, as a test follows it.
type stream struct {
	events chan map[string]any
	body   interface{ Close() error }
}

// follow opens the page's event stream; it is closed at the test's end.
func (p *playing) follow(t *testing.T) *stream {
	t.Helper()
	u, _ := url.Parse(p.url)
	res, err := http.Get("http://" + u.Host + "/events?token=" + u.Query().Get("token"))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the event stream: %v %v", err, res)
	}
	s := &stream{events: make(chan map[string]any, 1<<16), body: res.Body}
	done := make(chan struct{})
	t.Cleanup(func() {
		res.Body.Close()
		<-done
	})
	go func() { // ends when the stream does (closed at the test's end)
		defer close(done)
		defer close(s.events)
		br := bufio.NewReaderSize(res.Body, 64<<10)
		for {
			line, err := br.ReadString('\n')
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var ev map[string]any
				if json.Unmarshal([]byte(data), &ev) == nil {
					select {
					case s.events <- ev:
					default: // a test that does not read them all
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// wait waits (within d) for an event pred takes, and returns it; nil
// when none came.
func (s *stream) wait(d time.Duration, pred func(map[string]any) bool) map[string]any {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return nil
			}
			if pred(ev) {
				return ev
			}
		case <-deadline.C:
			return nil
		}
	}
}

// waitUntil polls cond until it holds or d has passed, and reports
// whether it held.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z'
}
