package playground

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/internal/browsertest"
)

// TestGuardRefusesStrangers: the playground listens on 127.0.0.1 only and
// answers 403 to a request without the token or with another one, from
// another origin, or to another host name (DNS rebinding); the page
// itself, by 127.0.0.1 or localhost, with the token, is served.
func TestGuardRefusesStrangers(t *testing.T) {
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
	}
	body := `{"do":"ui","element":"go","event":"click"}`
	for _, c := range []try{
		{"the page with its token", "GET", "/?token=" + token, "", "", "", 200},
		{"the page by localhost", "GET", "/?token=" + token, "localhost:" + u.Port(), "", "", 200},
		{"the page without a token", "GET", "/", "", "", "", 403},
		{"the page with another token", "GET", "/?token=" + strings.Repeat("0", 32), "", "", "", 403},
		{"the page with a token one character short", "GET", "/?token=" + token[:31], "", "", "", 403},
		{"the events without a token", "GET", "/events", "", "", "", 403},
		{"an action without a token", "POST", "/api", "", base, "", 403},
		{"an action from another origin", "POST", "/api", "", "http://evil.example", token, 403},
		{"an action from another port of this machine", "POST", "/api", "", "http://127.0.0.1:1", token, 403},
		{"an action under another host name (DNS rebinding)", "POST", "/api", "evil.example:" + u.Port(), base, token, 403},
		{"the page under another host name", "GET", "/?token=" + token, "evil.example:" + u.Port(), "", "", 403},
		{"an action from a cross-site page without Origin", "POST", "/api", "", "", token, 403},
		{"an action of the page's own", "POST", "/api", "", base, token, 200},
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
		if c.what == "an action from a cross-site page without Origin" {
			req.Header.Set("Sec-Fetch-Site", "cross-site")
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
