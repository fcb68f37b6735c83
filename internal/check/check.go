package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/message"
)

// The host's limits that are code rather than schema.
const (
	window        = int64(time.Second) // the host's rate window
	maxMessages   = 240                // messages (stdout and stderr lines) per window
	maxLines      = 480                // stdout lines per window
	notifyGap     = int64(700 * time.Millisecond)
	openURLGap    = int64(700 * time.Millisecond)
	termAfter     = int64(1500 * time.Millisecond) // shutdown → SIGTERM
	killAfter     = int64(3000 * time.Millisecond) // shutdown → SIGKILL
	toolsCallWait = int64(120 * time.Second)
	maxLine       = 16 << 20 // bytes in one stdout line
	maxLogLine    = 2000     // characters in one plugin log line
	maxTimers     = 8
	maxFetches    = 4
	// maxPerFrame bounds the schema findings reported for one frame.
	maxPerFrame = 20
)

// Options configure a Checker. The zero value applies Agentty's rules
// without a manifest, at API 1 until an initialize frame gives the
// plugin's API version.
type Options struct {
	// Profile is the session's host profile: its rules apply. Nil is
	// Agentty's, the profile of every session recorded before profiles had
	// names, unless Detect is set.
	Profile profile.Profile
	// Detect, when Profile is nil, finds the profile from the session's
	// first frames as the store does when it takes the session
	// (profile.Handshake): a session being recorded names none until its
	// host speaks. Frames are held until the handshake settles it.
	Detect bool
	// Framing is how the session's stdin and stdout are framed, as
	// frame.Session.Framing spells it ("headers" or "lines"); "" leaves it
	// to the frames (a frame with a header block says headers).
	Framing string

	// The rest is for Agentty's rules; the other profiles' ignore it.

	// Manifest is the plugin's agentty-plugin.json. Nil skips the
	// permission rules, with an info finding that says so.
	Manifest *Manifest
	// NoManifest says why Manifest is nil, for that finding ("no
	// agentty-plugin.json in /x").
	NoManifest string
	// APIVersion is the plugin's API version until an initialize frame
	// says otherwise; 0 means the manifest's, or 1.
	APIVersion int
}

// call is a request waiting for its answer.
type call struct {
	seq    uint64
	at     int64
	method string
	live   bool // the host works on it (a valid timer or fetch)
}

// rate is one of the host's fixed one-second windows: it opens with the
// first message and the first message after it ends opens the next.
type rate struct {
	start int64
	n     int
	open  bool
	hit   bool // the limit was passed in this window
}

// add counts one message at t and reports whether it is the first one over
// limit in its window.
func (r *rate) add(t int64, limit int) bool {
	if !r.open || t >= r.start+window {
		*r = rate{start: t, open: true}
	}
	r.n++
	if r.n > limit && !r.hit {
		r.hit = true
		return true
	}
	return false
}

// stamp is a moment of the session: a frame's seq and at.
type stamp struct {
	seq uint64
	at  int64
	set bool
}

// agentty applies Agentty's rules to one session's frames, fed in order.
// It is not safe for concurrent use.
type agentty struct {
	opts  Options
	rules map[string]Rule
	sch   *schemas
	api   int
	perms map[string]bool // nil without a manifest
	noted bool            // the manifest finding was given

	deaf        bool            // the host stopped reading stdout
	blind       bool            // a host frame was stored cut, so its id is unknown
	hostCalls   map[string]call // host requests the plugin has not answered
	pluginCalls map[string]call // plugin requests the host has not answered
	// live counts the requests in pluginCalls marked live, by method, so
	// that counting the timers or fetches running takes no scan of every
	// request in flight (a session of 80,000 fetches never answered had
	// taken 195 s). Every change to pluginCalls keeps it so.
	live     map[string]int
	messages rate
	lines    rate
	notified stamp // the last ui/notify shown
	opened   stamp // the last host/openUrl opened
	stop     stamp // shutdown or stdin close, whichever came first
	stopWhat string

	out []Finding
}

// newAgentty returns Agentty's rules for one session. It compiles the
// embedded schemas (about 15 ms on a small machine); it panics only if they
// are broken, which the package's tests rule out.
func newAgentty(opts Options) *agentty {
	sch, err := loadSchemas()
	if err != nil {
		panic("check: " + err.Error())
	}
	return newAgenttyWith(opts, sch)
}

// newAgenttyWith returns Agentty's rules for one session, with its schemas
// compiled.
func newAgenttyWith(opts Options, sch *schemas) *agentty {
	c := &agentty{
		opts:        opts,
		rules:       map[string]Rule{},
		sch:         sch,
		api:         1,
		hostCalls:   map[string]call{},
		pluginCalls: map[string]call{},
		live:        map[string]int{},
	}
	for _, r := range Rules() {
		c.rules[r.ID] = r
	}
	if m := opts.Manifest; m != nil {
		c.perms = map[string]bool{}
		for _, p := range m.Permissions {
			c.perms[p] = true
		}
		if m.APIVersion > 0 {
			c.api = m.APIVersion
		}
	}
	if opts.APIVersion > 0 {
		c.api = opts.APIVersion
	}
	return c
}

// Feed checks the next frame or event of the session and returns what it
// finds (nil for nothing). f and its bytes are not kept. Frames must come
// in seq order.
func (c *agentty) Feed(f *frame.Frame) []Finding {
	c.out = nil
	c.noteManifest()
	switch {
	case f.IsEvent():
		c.event(f)
	case f.Dir == frame.In:
		c.host(f)
	case f.Dir == frame.Out:
		c.plugin(f)
	case f.Dir == frame.Err:
		c.stderr(f)
	}
	return c.out
}

// Finish reports what only the end of the session shows: host requests
// the plugin never answered. Call it once, after the last Feed.
func (c *agentty) Finish() []Finding {
	c.out = nil
	c.noteManifest()
	pending := make([]call, 0, len(c.hostCalls))
	ids := map[uint64]string{}
	for id, p := range c.hostCalls {
		pending = append(pending, p)
		ids[p.seq] = id
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].seq < pending[j].seq })
	for _, p := range pending {
		rule := RuleRequestUnanswered
		if p.method == "initialize" {
			rule = RuleInitUnanswered
		}
		c.add(stamp{p.seq, p.at, true}, rule, p.method, "", false,
			fmt.Sprintf("the host's %s request (id %s) was never answered", p.method, ids[p.seq]))
	}
	return c.out
}

// add records a finding of rule about the frame at s. notification says
// the frame is a notification, whose failure nobody hears of.
func (c *agentty) add(s stamp, rule, method, path string, notification bool, msg string) {
	r := c.rules[rule]
	host := r.Host
	if notification && r.Code != 0 && rule != RuleMethodUnknown {
		host += "; sent as a notification, it fails silently"
	}
	c.out = append(c.out, Finding{
		Level: r.Level, Rule: rule, Seq: s.seq, At: s.at,
		Method: method, Message: msg + ": " + host, Path: path, Spec: r.Spec,
	})
}

func at(f *frame.Frame) stamp { return stamp{f.Seq, f.At, true} }

// noteManifest gives, once, the finding that permission rules are off.
func (c *agentty) noteManifest() {
	if c.noted || c.perms != nil {
		return
	}
	c.noted = true
	why := c.opts.NoManifest
	if why == "" {
		why = "no manifest was given"
	}
	c.add(stamp{}, RuleManifestMissing, "", "", false, why)
}

// host follows what the host sent: its requests, its answers, shutdown.
func (c *agentty) host(f *frame.Frame) {
	if f.Cut != nil {
		c.blind = true // a host request may be in it: its answer is not "unknown"
		return
	}
	m := message.Parse(f.Raw)
	switch m.Kind {
	case message.Request:
		if k := idKey(&m); room(len(c.hostCalls)) {
			c.hostCalls[k] = call{seq: f.Seq, at: f.At, method: recent.Name(m.Method)}
		}
		fallthrough
	case message.Notification:
		switch m.Method {
		case "initialize":
			var p struct {
				APIVersion json.Number `json:"apiVersion"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				if v, err := strconv.Atoi(string(p.APIVersion)); err == nil && v > 0 {
					c.api = v
				}
			}
		case "shutdown":
			c.stopping(f, "shutdown")
		}
	case message.Response, message.ErrorReply:
		p, ok := c.pluginCalls[idKey(&m)]
		c.dropCall(idKey(&m))
		if ok && m.Error != nil {
			c.refused(f, p, m.Error)
		}
	}
}

// refused notes the host's error answer e to the plugin's call p where the
// error is the host's circumstance rather than the plugin's fault: the
// in-app browser unavailable, or the user's no to the browser.
func (c *agentty) refused(f *frame.Frame, p call, e *message.Error) {
	if !strings.HasPrefix(p.method, "browser/") {
		return
	}
	rule := ""
	switch {
	case e.Code == codeUnavailable:
		rule = RuleBrowserUnavailable
	case e.Code == codePermission && c.perms["browser.control"]:
		rule = RuleBrowserDeclined
	default:
		return
	}
	c.add(at(f), rule, p.method, "error.code", false,
		fmt.Sprintf("the answer to %s (#%d) is %d %s", p.method, p.seq, e.Code, show(e.Message)))
}

func (c *agentty) stopping(f *frame.Frame, what string) {
	if !c.stop.set {
		c.stop, c.stopWhat = at(f), what
	}
}

// event follows the lifecycle: stdin closed, the plugin exited.
func (c *agentty) event(f *frame.Frame) {
	switch f.Event {
	case frame.EventEOF:
		c.stopping(f, "stdin closed")
	case frame.EventExit:
		if !c.stop.set {
			return
		}
		d := f.At - c.stop.at
		msg := fmt.Sprintf("the plugin exited %s after %s (#%d)", seconds(d), c.stopWhat, c.stop.seq)
		switch {
		case d > killAfter:
			c.add(at(f), RuleShutdownKill, "", "", false, msg)
		case d > termAfter:
			c.add(at(f), RuleShutdownTerm, "", "", false, msg)
		}
	}
}

// stderr counts a log line.
func (c *agentty) stderr(f *frame.Frame) {
	c.countMessage(f)
	n := int64(utf8.RuneCount(f.Raw))
	if f.Cut != nil {
		n = f.Cut.Len
	}
	if n > maxLogLine {
		c.add(at(f), RuleStderrLineCut, "", "", false, fmt.Sprintf("a stderr line of %d characters", n))
	}
}

func (c *agentty) countMessage(f *frame.Frame) {
	if c.messages.add(f.At, maxMessages) {
		c.add(at(f), RuleRateMessages, "", "", false, fmt.Sprintf(
			"message %d (stdout and stderr lines) within 1 s of the window opened at %s", c.messages.n, seconds(c.messages.start)))
	}
}

// plugin checks a line of the plugin's stdout.
func (c *agentty) plugin(f *frame.Frame) {
	if c.deaf {
		return // the host no longer reads stdout
	}
	size := int64(len(f.Raw))
	if f.Cut != nil {
		size = f.Cut.Len
	}
	if c.lines.add(f.At, maxLines) {
		c.add(at(f), RuleRateLines, "", "", false, fmt.Sprintf(
			"stdout line %d within 1 s of the window opened at %s", c.lines.n, seconds(c.lines.start)))
	}
	if size > maxLine {
		c.deaf = true
		c.add(at(f), RuleLineTooLong, "", "", false, fmt.Sprintf("a line of %d bytes, more than 16 MiB (%d)", size, maxLine))
		return
	}
	if f.Cut != nil {
		c.countMessage(f)
		c.add(at(f), RuleLineCut, "", "", false, fmt.Sprintf("the recording kept %d of its %d bytes", len(f.Raw), size))
		return
	}
	if !utf8.Valid(f.Raw) {
		c.add(at(f), RuleLineInvalidUTF8, "", "", false, "the line is not valid UTF-8")
	}
	m := message.Parse(f.Raw)
	if m.Kind == message.Blank {
		return
	}
	c.countMessage(f)
	if m.Kind == message.Stray {
		c.stray(f, &m)
		return
	}
	method := m.Method
	if m.IsReply() {
		method = c.hostCalls[idKey(&m)].method
	}
	if !m.HasJSONRPC {
		c.add(at(f), RuleJSONRPCMissing, method, "", false, `no "jsonrpc" member`)
	} else if m.JSONRPC != "2.0" {
		c.add(at(f), RuleJSONRPCMissing, method, "jsonrpc", false, `"jsonrpc" is not "2.0"`)
	}
	if m.IsCall() {
		c.call(f, &m)
	} else {
		c.answer(f, &m)
	}
}

// stray names a line the host sets aside.
func (c *agentty) stray(f *frame.Frame, m *message.Message) {
	line := bytes.TrimSpace(bytes.ToValidUTF8(bytes.TrimSuffix(f.Raw, []byte("\r")), []byte("\uFFFD")))
	rule := RuleLineNotJSON
	switch {
	case json.Valid(line) && line[0] == '{':
		rule = RuleLineNoIDOrMethod
	case json.Valid(line):
		rule = RuleLineNotObject
	}
	c.add(at(f), rule, "", "", false, fmt.Sprintf("stray output, %s: %s", m.Problem, show(string(line))))
}

// call checks a request or notification from the plugin, in the host's
// order: method, permission, params, then the rates that apply to calls
// the host accepts.
func (c *agentty) call(f *frame.Frame, m *message.Message) {
	s := at(f)
	notif := m.Kind == message.Notification
	key := idKey(m)
	if !notif {
		c.openCall(f, m.Method, key)
	}
	if !c.accepted(s, m.Method, notif) {
		return
	}
	params, ok := c.validParams(s, m, notif)
	if !ok {
		return
	}
	c.limits(f, m.Method, key, params, notif)
}

// openCall notes the plugin's request name under id key, said when the
// id still waits for an answer.
func (c *agentty) openCall(f *frame.Frame, name, key string) {
	if p, ok := c.pluginCalls[key]; ok {
		c.add(at(f), RuleIDReused, name, "id", false, fmt.Sprintf("id %s is still waiting for the answer to %s (#%d)", key, p.method, p.seq))
	}
	if room(len(c.pluginCalls)) {
		c.dropCall(key)
		c.pluginCalls[key] = call{seq: f.Seq, at: f.At, method: recent.Name(name)}
	}
}

// dropCall forgets the plugin's request under key, if any, and no longer
// counts it as running.
func (c *agentty) dropCall(key string) {
	if p, ok := c.pluginCalls[key]; ok && p.live {
		c.live[p.method]--
	}
	delete(c.pluginCalls, key)
}

// accepted reports whether the host takes the method name at all: known
// at the plugin's apiVersion, its permission granted, and for a browser
// method, sites named; else it says why.
func (c *agentty) accepted(s stamp, name string, notif bool) bool {
	spec, known := c.sch.methods[name]
	switch {
	case !known:
		c.add(s, RuleMethodUnknown, name, "method", notif, fmt.Sprintf("unknown method %q", name))
	case spec.since > c.api:
		c.add(s, RuleMethodUnknown, name, "method", notif, fmt.Sprintf("%s needs apiVersion %d (the plugin's is %d)", name, spec.since, c.api))
	case spec.permission != "" && c.perms != nil && !c.perms[spec.permission]:
		c.add(s, RulePermissionMissing, name, "", notif,
			fmt.Sprintf("%s needs the %q permission, which the manifest does not grant", name, spec.permission))
	case spec.section == "browser" && c.perms != nil && len(c.opts.Manifest.sites()) == 0:
		c.add(s, RuleBrowserNoSites, name, "", notif,
			fmt.Sprintf("%s acts on the sites of the manifest's browser section, and the manifest names none", name))
	default:
		return true
	}
	return false
}

// validParams is m's params ({} when it has none), and whether they pass
// the schema of its method (and, for ui/setPanel, the tree's own
// checks) with no error; each problem is said, maxPerFrame at most.
func (c *agentty) validParams(s stamp, m *message.Message, notif bool) (any, bool) {
	name := m.Method
	params := any(map[string]any{})
	if p := bytes.TrimSpace(m.Params); len(p) > 0 && string(p) != "null" {
		v, err := parseDoc(p)
		if err != nil {
			c.add(s, RuleParamsInvalid, name, "params", notif, "params is not JSON")
			return nil, false
		}
		params = v
	}
	l := c.sch.level(c.api)
	var issues, tree []issue
	depth := 0
	if name == "ui/setPanel" {
		if obj, ok := params.(map[string]any); ok {
			tree, depth = treeIssues(obj["tree"], "params.tree")
		}
	}
	if depth <= schemaDepth {
		if err := l.params[name].Validate(params); err != nil {
			issues = c.sch.issues(l, err, params, RuleParamsInvalid, "params", c.api)
		}
	}
	issues = append(issues, tree...)
	failed := false
	for i, is := range issues {
		failed = failed || c.rules[is.rule].Level == Error
		switch {
		case i < maxPerFrame:
			c.add(s, is.rule, name, is.path, notif, is.message)
		case i == maxPerFrame:
			c.add(s, is.rule, name, "params", notif, fmt.Sprintf("and %d more problems", len(issues)-i))
		}
	}
	return params, !failed
}

// limits checks what the host limits in a call it accepts: the browser's
// sites, how often a notification shows or a URL opens, how many timers
// and fetches run at once.
func (c *agentty) limits(f *frame.Frame, name, key string, params any, notif bool) {
	s := at(f)
	switch name {
	case "browser/open", "browser/navigate", "browser/signIn":
		c.browserSite(s, name, params, notif)
	case "ui/notify":
		if c.notified.set && f.At-c.notified.at < notifyGap {
			c.add(s, RuleNotifyDropped, name, "", false,
				fmt.Sprintf("ui/notify %s after the one shown at #%d", seconds(f.At-c.notified.at), c.notified.seq))
			return
		}
		c.notified = s
	case "host/openUrl":
		if c.opened.set && f.At-c.opened.at < openURLGap {
			c.add(s, RuleOpenURLRefused, name, "", notif,
				fmt.Sprintf("host/openUrl %s after the one opened at #%d", seconds(f.At-c.opened.at), c.opened.seq))
			return
		}
		c.opened = s
	case "host/timer":
		if n := c.running(name, key, notif); n > maxTimers {
			c.add(s, RuleTimerTooMany, name, "", false, fmt.Sprintf("%d timers running at once", n))
		}
	case "net/fetch":
		if n := c.running(name, key, notif); n > maxFetches {
			c.add(s, RuleFetchTooMany, name, "", false, fmt.Sprintf("%d fetches running at once", n))
		}
	}
}

// running marks the request under key as running and counts the
// requests of method name that run; 0 for a notification (the host
// starts nothing for it) and for a request pluginCalls had no room for
// (past maxTracked a request is not followed).
func (c *agentty) running(name, key string, notif bool) int {
	if notif {
		return 0
	}
	p, ok := c.pluginCalls[key]
	if !ok {
		return 0
	}
	if !p.live {
		p.live = true
		c.pluginCalls[key] = p
		c.live[p.method]++
	}
	return c.live[name]
}

// browserSite checks that the page a browser/open or browser/navigate
// loads, or the site a browser/signIn names, is one of the manifest's
// browser sites. Without a manifest there is nothing to check against.
func (c *agentty) browserSite(s stamp, name string, params any, notif bool) {
	obj, _ := params.(map[string]any)
	if c.perms == nil || obj == nil {
		return
	}
	sites := c.opts.Manifest.sites()
	if name == "browser/signIn" {
		host, _ := obj["host"].(string)
		if !siteNamed(sites, host) {
			c.add(s, RuleBrowserSite, name, "params.host", notif,
				fmt.Sprintf("%s is not one of the manifest's browser.sites (%s)", show(host), siteList(sites)))
		}
		return
	}
	u, _ := obj["url"].(string)
	if why, ok := siteFor(sites, u); !ok {
		c.add(s, RuleBrowserSite, name, "params.url", notif,
			fmt.Sprintf("%s: %s (%s)", show(u), why, siteList(sites)))
	}
}

// siteList names the sites for a message.
func siteList(sites []Site) string {
	names := make([]string, len(sites))
	for i, s := range sites {
		names[i] = s.names()
	}
	return strings.Join(names, ", ")
}

// answer checks the plugin's answer to a host request.
func (c *agentty) answer(f *frame.Frame, m *message.Message) {
	s := at(f)
	key := idKey(m)
	p, ok := c.hostCalls[key]
	if !ok && c.blind {
		return
	}
	if !ok {
		c.add(s, RuleAnswerUnknownID, "", "id", false,
			fmt.Sprintf("an answer to id %s, which the host never asked or already had answered", key))
		return
	}
	delete(c.hostCalls, key)
	if p.method == "tools/call" && f.At-p.at > toolsCallWait {
		c.add(s, RuleRequestLate, p.method, "", false,
			fmt.Sprintf("the answer came %s after the tools/call (#%d)", seconds(f.At-p.at), p.seq))
	}
	line := bytes.ToValidUTF8(bytes.TrimSuffix(f.Raw, []byte("\r")), []byte("\uFFFD"))
	v, err := parseDoc(line)
	if err != nil {
		return // message.Parse read it as an object: cannot happen
	}
	l := c.sch.level(c.api)
	if err := l.response.Validate(v); err != nil {
		for _, is := range c.sch.issues(l, err, v, RuleResponseMalformed, "", c.api) {
			c.add(s, is.rule, p.method, is.path, false, is.message)
		}
	}
}

// seconds spells nanoseconds as a short duration ("512ms", "1.501s").
func seconds(ns int64) string {
	return time.Duration(ns).Round(time.Millisecond).String()
}
