package playground

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/internal/browsertest"
)

// TestGuardRefusesStrangers: the playground listens on 127.0.0.1 only and
// answers 403 to a request without the token or with another one, from
// another origin, or to another host name (DNS rebinding); the page
// itself, by 127.0.0.1 or localhost, with the token, is served.
func TestGuardRefusesStrangers(t *testing.T) {
	t.Parallel()
	needNode(t)
	p := play(t, copyPlugin(t, "widgets-node"), nil)
	u, err := url.Parse(p.url)
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" || u.Port() == "" || len(u.Query().Get("token")) != 32 {
		t.Fatalf("the URL %s is not 127.0.0.1:PORT with a 128-bit token", p.url)
	}
	token := u.Query().Get("token")
	base := "http://" + u.Host
	type try struct {
		what, method, path, host, origin, header string
		want                                     int
		fetch                                    string // Sec-Fetch-Site, -Mode and -Dest, as a browser sends them
	}
	body := `{"do":"ui","element":"go","event":"click"}`
	for _, c := range []try{
		{"the page with its token", "GET", "/?token=" + token, "", "", "", 200, ""},
		{"the page by localhost", "GET", "/?token=" + token, "localhost:" + u.Port(), "", "", 200, ""},
		{"the page without a token", "GET", "/", "", "", "", 403, ""},
		{"the page with another token", "GET", "/?token=" + strings.Repeat("0", 32), "", "", "", 403, ""},
		{"the page with a token one character short", "GET", "/?token=" + token[:31], "", "", "", 403, ""},
		{"the events without a token", "GET", "/events", "", "", "", 403, ""},
		{"an action without a token", "POST", "/api", "", base, "", 403, ""},
		{"an action from another origin", "POST", "/api", "", "http://evil.example", token, 403, ""},
		{"an action from another port of this machine", "POST", "/api", "", "http://127.0.0.1:1", token, 403, ""},
		{"an action under another host name (DNS rebinding)", "POST", "/api", "evil.example:" + u.Port(), base, token, 403, ""},
		{"the page under another host name", "GET", "/?token=" + token, "evil.example:" + u.Port(), "", "", 403, ""},
		{"an action from a cross-site page without Origin", "POST", "/api", "", "", token, 403, "cross-site cors empty"},
		{"an action of the page's own", "POST", "/api", "", base, token, 200, ""},
		{"the page opened from another site (the file --open writes)", "GET", "/?token=" + token, "", "", "", 200, "cross-site navigate document"},
		{"the page opened from another site without the token", "GET", "/", "", "", "", 403, "cross-site navigate document"},
		{"the page fetched by another site's script", "GET", "/?token=" + token, "", "", "", 403, "cross-site no-cors empty"},
		{"the events opened from another site", "GET", "/events?token=" + token, "", "", "", 403, "cross-site navigate document"},
		{"the page framed by another site", "GET", "/?token=" + token, "", "", "", 403, "cross-site navigate iframe"},
	} {
		req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if c.host != "" {
			req.Host = c.host
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.header != "" {
			req.Header.Set("X-Tapedeck-Token", c.header)
		}
		if f := strings.Fields(c.fetch); len(f) == 3 {
			req.Header.Set("Sec-Fetch-Site", f[0])
			req.Header.Set("Sec-Fetch-Mode", f[1])
			req.Header.Set("Sec-Fetch-Dest", f[2])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.what, res.StatusCode, b, c.want)
		}
		if c.want == 403 && strings.Contains(string(b), token) {
			t.Errorf("%s: the refusal shows the token", c.what)
		}
	}
	// Nothing else listens: the port is not open on another address.
	if conn, err := (&http.Client{}).Get("http://[::1]:" + u.Port() + "/"); err == nil {
		conn.Body.Close()
		t.Error("the playground answers on ::1 too; it must listen on 127.0.0.1 only")
	}
}

// TestGuardRefusesAnotherSitesPage: a page of another origin in the same
// browser, even one that knows the token, cannot act: its request is
// refused and the plugin hears nothing of it.
func TestGuardRefusesAnotherSitesPage(t *testing.T) {
	needNode(t)
	bctx := browsertest.Start(t)
	p := play(t, copyPlugin(t, "widgets-node"), nil)
	ctx := p.page(t, bctx)
	u, _ := url.Parse(p.url)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><body><script>
fetch(%q, {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: '{"do":"ui","element":"evil","event":"click"}'})
  .then(function () { document.body.dataset.sent = 'yes'; }, function () { document.body.dataset.sent = 'failed'; });
</script></body>`, "http://"+u.Host+"/api?token="+u.Query().Get("token"))
	}))
	defer evil.Close()
	other := browsertest.Tab(t, bctx)
	browsertest.Open(t, other, evil.URL, "body[data-sent]")
	// The page's own action after it: once it is in, the evil one would
	// have been too.
	do(t, ctx, "click go", chromedp.Click(chromedp.CSS(`.live-panel .el-button[data-id=go]`)))
	lastSays(t, ctx, "go click")
	if browsertest.Eval[bool](t, ctx, `window.tapedeckPlay.received.some(f => f.r.includes('"evil"'))`) {
		t.Error("a page of another origin sent a ui/event to the plugin")
	}
}

// TestIdleConnectionsDoNotBlockThePage: 64 idle connections (any user of
// this machine may open them) keep neither the page, nor its event
// stream, nor an action out: each is answered within 3 s. (Before, the
// server served 64 connections at once, and the page waited for an idle
// one's read timeout.)
func TestIdleConnectionsDoNotBlockThePage(t *testing.T) {
	t.Parallel()
	needNode(t)
	p := play(t, copyPlugin(t, "widgets-node"), nil)
	u, _ := url.Parse(p.url)
	token, base := u.Query().Get("token"), "http://"+u.Host
	for range 64 {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	client := &http.Client{Timeout: 3 * time.Second}
	start := time.Now()
	res, err := client.Get(p.url)
	if err != nil {
		t.Fatalf("the page after 64 idle connections: %v", err)
	}
	res.Body.Close()
	pageIn := time.Since(start)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/events?token="+token, nil)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the event stream after 64 idle connections: %v", err)
	}
	first, err := bufio.NewReader(res.Body).ReadString('\n')
	res.Body.Close()
	if err != nil || !strings.HasPrefix(first, "data: ") {
		t.Fatalf("the event stream after 64 idle connections: %q %v", first, err)
	}

	req, _ = http.NewRequest("POST", base+"/api", strings.NewReader(`{"do":"ui","element":"go","event":"click"}`))
	req.Header.Set("Origin", base)
	req.Header.Set("X-Tapedeck-Token", token)
	res, err = client.Do(req)
	if err != nil {
		t.Fatalf("an action after 64 idle connections: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("an action after 64 idle connections: %d", res.StatusCode)
	}
	t.Logf("after 64 idle connections: the page in %v; its events and an action within 3 s", pageIn.Round(time.Microsecond))
}

// TestBodiesAreReadOnlyWithTheToken: 60 actions of 4 MiB sent at once
// without the token are refused with their bodies unread: the server
// allocates a few MiB, not 60 × 4 MiB (before, every body was read whole
// before the guard looked at the request: 263 MB held). With the token,
// an action over 4 MiB is refused 413, by its Content-Length or, sent in
// chunks, once past the limit.
func TestBodiesAreReadOnlyWithTheToken(t *testing.T) {
	// Not parallel: it reads the whole process's allocations, which
	// tests beside it would add to.
	needNode(t)
	p := play(t, copyPlugin(t, "widgets-node"), nil)
	u, _ := url.Parse(p.url)
	token, base := u.Query().Get("token"), "http://"+u.Host

	const n, size = 60, 4 << 20
	chunk := make([]byte, 64<<10)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	answers := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			c, err := net.Dial("tcp", u.Host)
			if err != nil {
				answers <- err.Error()
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))
			fmt.Fprintf(c, "POST /api HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", u.Host, base, size)
			for sent := 0; sent < size; sent += len(chunk) {
				if _, err := c.Write(chunk); err != nil {
					break // the server closed the connection: the body is not wanted
				}
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			answers <- strings.TrimSpace(line)
		})
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	close(answers)
	for a := range answers {
		if a != "" && !strings.HasPrefix(a, "HTTP/1.1 403 ") {
			t.Errorf("an action of 4 MiB without the token: %q, want 403 (or the connection closed)", a)
		}
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d actions of 4 MiB without the token: %.1f MiB allocated in this process (their bodies: %d MiB)", n, float64(alloc)/(1<<20), n*size>>20)
	if alloc > 32<<20 {
		t.Errorf("%d actions of 4 MiB without the token made the server allocate %.1f MiB: their bodies were read", n, float64(alloc)/(1<<20))
	}

	for _, c := range []struct {
		what   string
		length int64 // -1: sent in chunks
	}{{"by its Content-Length", maxAction + 1}, {"sent in chunks", -1}} {
		body := io.MultiReader(strings.NewReader(`{"do":"ui","element":"go","event":"click","value":"`), io.LimitReader(zeros{}, maxAction), strings.NewReader(`"}`))
		req, _ := http.NewRequest("POST", base+"/api", body)
		req.ContentLength = c.length
		if c.length > 0 {
			req.Body = io.NopCloser(io.LimitReader(body, c.length))
		}
		req.Header.Set("Origin", base)
		req.Header.Set("X-Tapedeck-Token", token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			if isReset(err) {
				t.Logf("an action over 4 MiB %s: the connection was closed before the whole body was sent (%v)", c.what, err)
				continue // refused before the whole body was sent
			}
			t.Fatalf("an action over 4 MiB %s: %v", c.what, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 413 || !strings.Contains(string(b), "an action of more than 4194304 bytes") {
			t.Errorf("an action over 4 MiB %s: %d %s, want 413", c.what, res.StatusCode, b)
		}
	}
}

// zeros reads as an endless run of '0'.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}
