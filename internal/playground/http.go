package playground

// The page's server: the guard every request passes, the page, the event
// stream, the host's actions.

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/internal/htmlreport"
)

// maxAction bounds one action's body (an answer the page edits may be
// large).
const maxAction = 4 << 20

//go:embed assets
var assets embed.FS

// guard lets a request through only when it comes to this playground by
// its own name (Host is 127.0.0.1:PORT or localhost:PORT: a page of
// another site that rebinds its DNS name to 127.0.0.1 sends its own name),
// from its own page (Origin, when sent, is this server), with the token.
// Anything else gets 403 and its connection closed, its body unread; the
// page asked for without the token gets the refusal as a small page that
// brings the token back from the tab's session storage (a reload: the
// page keeps its token there, not in the address bar).
func (s *server) guard(next http.Handler, page *pageData) http.Handler {
	_, port, _ := strings.Cut(s.addr, ":")
	hosts := map[string]bool{"127.0.0.1:" + port: true, "localhost:" + port: true}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		switch {
		case !hosts[req.Host]:
			refuse(w, "tapedeck play: refused: this server answers to 127.0.0.1:"+port+" only")
		case !sameOrigin(req, hosts):
			refuse(w, "tapedeck play: refused: a request from another origin")
		case !s.hasToken(req):
			if req.Method == http.MethodGet && req.URL.Path == "/" {
				h.Set("Connection", "close")
				h.Set("Content-Type", "text/html; charset=utf-8")
				h.Set("Content-Security-Policy", page.againCSP)
				h.Set("X-Frame-Options", "DENY")
				w.WriteHeader(http.StatusForbidden)
				w.Write(page.again)
				return
			}
			refuse(w, "tapedeck play: refused: no token, or the wrong one (open the URL tapedeck play printed)")
		default:
			trust(req)
			next.ServeHTTP(w, req)
		}
	})
}

// refuse answers 403 with the one line msg and closes the connection
// without reading the request's body.
func refuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, http.StatusForbidden)
}

// routes sends each request to what answers it: the page, its event
// stream, its actions (404 for another path, 405 for another method).
func (s *server) routes(page *pageData) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { s.servePage(w, page) })
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("POST /api", s.api)
	return s.guard(mux, page)
}

// sameOrigin says the request comes from this server's own page, or from
// no page at all (a person typing the URL, a program).
func sameOrigin(req *http.Request, hosts map[string]bool) bool {
	o := req.Header.Get("Origin")
	if o == "" {
		// A browser sends Origin with every POST and EventSource of
		// another page; Sec-Fetch-Site says the rest. Opening the page
		// itself is allowed from anywhere (the file --open writes is
		// another site): a navigation shows the page to the person and
		// to no one else, and it cannot be framed.
		site := req.Header.Get("Sec-Fetch-Site")
		if site == "" || site == "same-origin" || site == "none" {
			return true
		}
		return req.Method == http.MethodGet && req.URL.Path == "/" &&
			req.Header.Get("Sec-Fetch-Mode") == "navigate" && req.Header.Get("Sec-Fetch-Dest") == "document"
	}
	u, err := url.Parse(o)
	return err == nil && u.Scheme == "http" && hosts[u.Host]
}

func (s *server) hasToken(req *http.Request) bool {
	t := req.Header.Get("X-Tapedeck-Token")
	if t == "" {
		t = req.URL.Query().Get("token")
	}
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// pageData is the page: the template filled with the report's style
// sheet and the shared script around the playground's own code; and the
// page that answers a request for it without the token.
type pageData struct {
	html     []byte
	again    []byte
	againCSP string
}

func (s *server) page() (*pageData, error) {
	own, err := assets.ReadFile("assets/play.js")
	if err != nil {
		return nil, fmt.Errorf("read playground assets: %w", err)
	}
	js, err := htmlreport.Script(own)
	if err != nil {
		return nil, err
	}
	css, err := htmlreport.CSS()
	if err != nil {
		return nil, err
	}
	playCSS, err := assets.ReadFile("assets/play.css")
	if err != nil {
		return nil, fmt.Errorf("read playground assets: %w", err)
	}
	t, err := template.ParseFS(assets, "assets/play.html", "assets/again.html")
	if err != nil {
		return nil, fmt.Errorf("parse the playground's page: %w", err)
	}
	title := "tapedeck play · " + s.plugin.ID
	var b bytes.Buffer
	err = t.ExecuteTemplate(&b, "play.html", struct {
		Title string
		CSP   string
		CSS   template.CSS
		JS    template.JS
	}{
		Title: title,
		CSP:   "default-src 'none'; connect-src 'self'; style-src 'unsafe-inline'; img-src data:; script-src " + scriptHash(js) + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		CSS:   template.CSS(append(append(css, '\n'), playCSS...)),
		JS:    template.JS(js),
	})
	if err != nil {
		return nil, fmt.Errorf("write the playground's page: %w", err)
	}
	againJS, err := assets.ReadFile("assets/again.js")
	if err != nil {
		return nil, fmt.Errorf("read playground assets: %w", err)
	}
	var a bytes.Buffer
	if err := t.ExecuteTemplate(&a, "again.html", struct{ JS template.JS }{template.JS(againJS)}); err != nil {
		return nil, fmt.Errorf("write the playground's refusal page: %w", err)
	}
	return &pageData{
		html: b.Bytes(), again: a.Bytes(),
		againCSP: "default-src 'none'; script-src " + scriptHash(againJS) + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	}, nil
}

// scriptHash is a Content-Security-Policy source that allows the inline
// script js and no other.
func scriptHash(js []byte) string {
	sum := sha256.Sum256(js)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func (s *server) servePage(w http.ResponseWriter, p *pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Write(p.html)
}

// events streams what happens to the page (server-sent events): first a
// reset with everything so far, then each frame, finding and change as it
// happens. It ends when the client goes, when a write does not go out
// within the write limit (a client that stops reading), or when the
// playground ends.
func (s *server) events(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	write := func(b []byte) bool {
		if err := rc.SetWriteDeadline(time.Now().Add(s.limits.write)); err != nil {
			return false
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	ch := make(chan []byte, 1024)
	s.mu.Lock()
	first, err := json.Marshal(s.resetLocked())
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if _, ok := s.subs[ch]; ok {
			delete(s.subs, ch)
			close(ch)
		}
		s.mu.Unlock()
	}()
	if err != nil {
		http.Error(w, "tapedeck play: "+err.Error(), http.StatusInternalServerError)
		return
	}
	event := func(b []byte) bool { return write(fmt.Appendf(nil, "data: %s\n\n", b)) }
	if !event(first) {
		return
	}
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case b, ok := <-ch:
			if !ok || !event(b) {
				return
			}
		case <-keepAlive.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		case <-req.Context().Done():
			return
		case <-s.over:
			return
		}
	}
}

// action is what the page asks of the host.
type action struct {
	Do      string          `json:"do"`
	Element string          `json:"element"`
	Event   string          `json:"event"`
	Value   json.RawMessage `json:"value"`
	Item    json.RawMessage `json:"item"`
	Action  json.RawMessage `json:"action"`
	Context json.RawMessage `json:"context"`
	Command string          `json:"command"`
	Args    json.RawMessage `json:"args"`
	URL     string          `json:"url"`
	Method  string          `json:"method"`
	Answer  json.RawMessage `json:"answer"`
	Name    string          `json:"name"`
	// Overwrite lets keep replace NAME's files (the page asked).
	Overwrite bool `json:"overwrite"`
}

// api does one action of the page's and answers {} or {"error": "…"}.
// Its body is read only now, past the guard, and at most maxAction bytes
// of it (413 beyond).
func (s *server) api(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fail := func(status int, msg string) {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	tooLarge := fmt.Sprintf("an action of more than %d bytes", maxAction)
	if req.ContentLength > maxAction {
		w.Header().Set("Connection", "close")
		fail(http.StatusRequestEntityTooLarge, tooLarge)
		return
	}
	var a action
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxAction))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(http.StatusRequestEntityTooLarge, tooLarge)
			return
		}
		fail(http.StatusBadRequest, "bad request: "+err.Error())
		return
	}
	res, err := s.do(&a)
	// The write limit bounds writing the answer, not the action: a
	// restart waits for the plugin to stop and a Keep it replays, which
	// on a loaded machine took more than the limit, and the page got
	// its connection closed instead of the answer. (A writer without
	// deadlines keeps none.)
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.limits.write))
	var exists *existsError
	if errors.As(err, &exists) {
		// A question for the person: the page asks, and keeps again
		// with the overwrite flag.
		w.WriteHeader(http.StatusConflict)
		json.NewEncoder(w).Encode(map[string]any{"error": err.Error(), "exists": exists.Paths})
		return
	}
	if err != nil {
		fail(http.StatusBadRequest, err.Error())
		return
	}
	if res == nil {
		res = struct{}{}
	}
	json.NewEncoder(w).Encode(res)
}

var uiEvents = map[string]bool{"click": true, "change": true, "submit": true, "select": true, "action": true,
	"close": true, "move": true, "insert": true, "resize": true, "add": true}

// isKeepName says name may name a kept session: a file name of a letter
// or digit and then at most 80 letters, digits, dots, underscores and
// dashes. (A function, not a regular expression: the expression's
// eighty-fold repetition cost every start of the binary, the capture
// shim's too, a thousand allocations.)
func isKeepName(name string) bool {
	if name == "" || len(name) > 81 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}

// do does one action of the page's: keep, restart and quit on their own,
// the others (what the host sends the plugin, the answers it gives) on
// the current run, under s.mu.
func (s *server) do(a *action) (any, error) {
	switch a.Do {
	case "keep":
		return s.keep(a.Name, a.Overwrite)
	case "restart":
		return nil, s.restart(nil)
	case "quit":
		s.quit()
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.cur
	r.actedLocked()
	switch a.Do {
	case "ui":
		return nil, s.uiEventLocked(r, a)
	case "panel/open", "panel/close":
		return nil, s.sendLocked(r, s.notification(a.Do, map[string]json.RawMessage{"context": s.hostCtx}))
	case "context/changed":
		return nil, s.contextChangedLocked(r, a.Context)
	case "command/execute":
		return nil, s.executeLocked(r, a.Command, a.Args)
	case "url/open":
		return nil, s.openURLLocked(r, a.URL)
	case "shutdown":
		s.stopLocked(r)
		return nil, nil
	case "answer":
		return nil, s.setAnswerLocked(a.Method, a.Answer)
	}
	return nil, fmt.Errorf("unknown action %q", a.Do)
}

// uiEventLocked sends the plugin a ui/event, its members in the host's
// order: element, event, value, item, action, context.
func (s *server) uiEventLocked(r *run, a *action) error {
	if a.Element == "" || !uiEvents[a.Event] {
		return fmt.Errorf("ui/event needs an element and one of the events click, change, submit, select, action, close, move, insert, resize, add")
	}
	var b bytes.Buffer
	b.WriteString(`{"element":`)
	el, _ := json.Marshal(a.Element)
	b.Write(el)
	b.WriteString(`,"event":`)
	ev, _ := json.Marshal(a.Event)
	b.Write(ev)
	for _, m := range []struct {
		name string
		v    json.RawMessage
	}{{"value", a.Value}, {"item", a.Item}, {"action", a.Action}} {
		if len(m.v) > 0 && json.Valid(m.v) {
			b.WriteString(`,"` + m.name + `":`)
			b.Write(compact(m.v))
		}
	}
	b.WriteString(`,"context":`)
	b.Write(s.hostCtx)
	b.WriteByte('}')
	return s.sendLocked(r, s.notification("ui/event", json.RawMessage(b.Bytes())))
}

// contextChangedLocked takes ctx (a JSON object) as the host's context,
// shows it on the pages and sends the plugin context/changed.
func (s *server) contextChangedLocked(r *run, ctx json.RawMessage) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(ctx, &obj) != nil || obj == nil {
		return fmt.Errorf("the context must be a JSON object such as %s", defaultContext)
	}
	s.hostCtx = compact(ctx)
	s.broadcastLocked(struct {
		T       string          `json:"t"`
		Context json.RawMessage `json:"context"`
	}{"context", s.hostCtx})
	return s.sendLocked(r, s.notification("context/changed", map[string]json.RawMessage{"context": s.hostCtx}))
}

// executeLocked sends the plugin command/execute of command with args (a
// JSON array; none is []).
func (s *server) executeLocked(r *run, command string, args json.RawMessage) error {
	if command == "" {
		return fmt.Errorf("command/execute needs a command")
	}
	if len(args) == 0 {
		args = json.RawMessage("[]")
	} else if !json.Valid(args) || compact(args)[0] != '[' {
		return fmt.Errorf("the command's args must be a JSON array")
	}
	return s.sendLocked(r, s.notification("command/execute", struct {
		Command string          `json:"command"`
		Args    json.RawMessage `json:"args"`
		Context json.RawMessage `json:"context"`
	}{command, compact(args), s.hostCtx}))
}

// openURLLocked sends the plugin url/open of rawURL, its path and query
// taken apart as the host does (the first value of each name).
func (s *server) openURLLocked(r *run, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || rawURL == "" {
		return fmt.Errorf("url/open needs a URL such as agentty://%s/path?q=1", s.plugin.ID)
	}
	query := map[string]string{}
	for k, v := range u.Query() {
		query[k] = v[0]
	}
	return s.sendLocked(r, s.notification("url/open", struct {
		Path    string            `json:"path"`
		Query   map[string]string `json:"query"`
		URL     string            `json:"url"`
		Context json.RawMessage   `json:"context"`
	}{u.Path, query, rawURL, s.hostCtx}))
}

// setAnswerLocked makes answer (a result or an error) what the host
// answers to the plugin's method from now on, and shows it on the pages.
func (s *server) setAnswerLocked(method string, answer json.RawMessage) error {
	if _, ok := s.answers[method]; !ok {
		return fmt.Errorf("%q is not a method the plugin can ask the host", method)
	}
	ans, err := parseAnswer(answer)
	if err != nil {
		return err
	}
	raw := json.RawMessage(`{"result":` + string(ans.Result) + `}`)
	if len(ans.Error) > 0 {
		raw = json.RawMessage(`{"error":` + string(ans.Error) + `}`)
	}
	s.answers[method], s.edited[method] = raw, true
	s.broadcastLocked(struct {
		T      string          `json:"t"`
		Method string          `json:"method"`
		Answer json.RawMessage `json:"answer"`
	}{"answer", method, raw})
	return nil
}

// restart stops the current run the host's way, waits for it, and starts
// the plugin again (with actions, playing them again).
func (s *server) restart(actions *replaying) error {
	s.mu.Lock()
	r := s.cur
	s.stopLocked(r)
	s.mu.Unlock()
	<-r.done // the host's grace periods bound the wait
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ending {
		return fmt.Errorf("the playground is ending")
	}
	s.startLocked(actions)
	return nil
}
