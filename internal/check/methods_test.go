package check

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/message"
)

// TestMethods is the list, needing nothing outside the repository, of
// every method check knows: direction, kind, API version, permission and
// manifest section.
func TestMethods(t *testing.T) {
	out, in := frame.Out, frame.In
	req, note := message.Request, message.Notification
	const bc, br = "browser.control", "browser"
	want := []Method{
		{"browser/close", out, 0, 3, bc, br},
		{"browser/eval", out, 0, 3, bc, br},
		{"browser/hide", out, 0, 3, bc, br},
		{"browser/info", out, 0, 3, bc, br},
		{"browser/navigate", out, 0, 3, bc, br},
		{"browser/open", out, 0, 3, bc, br},
		{"browser/profiles", out, 0, 3, bc, br},
		{"browser/removeProfile", out, 0, 3, bc, br},
		{"browser/show", out, 0, 3, bc, br},
		{"browser/signIn", out, 0, 3, bc, br},
		{"browser/sites", out, 0, 3, bc, br},
		{"browser/wait", out, 0, 3, bc, br},
		{"context/get", out, 0, 1, "", ""},
		{"host/copy", out, 0, 2, "", ""},
		{"host/info", out, 0, 1, "", ""},
		{"host/openUrl", out, 0, 1, "", ""},
		{"host/revealPath", out, 0, 1, "workspace.read", ""},
		{"host/timer", out, 0, 2, "", ""},
		{"net/fetch", out, 0, 2, "net.request", ""},
		{"prompt/inject", out, 0, 1, "prompt.inject", ""},
		{"session/get", out, 0, 1, "session.read", ""},
		{"storage/get", out, 0, 2, "", ""},
		{"storage/keys", out, 0, 2, "", ""},
		{"storage/set", out, 0, 2, "", ""},
		{"terminal/send", out, 0, 1, "terminal.write", ""},
		{"ui/notify", out, 0, 1, "", ""},
		{"ui/setBadge", out, 0, 1, "", ""},
		{"ui/setPanel", out, 0, 1, "", ""},
		{"ui/showPanel", out, 0, 1, "", ""},
		{"workspace/list", out, 0, 1, "workspace.read", ""},
		{"initialize", in, req, 1, "", ""},
		{"command/execute", in, note, 1, "", ""},
		{"panel/open", in, note, 1, "", ""},
		{"panel/close", in, note, 1, "", ""},
		{"ui/event", in, note, 1, "", ""},
		{"context/changed", in, note, 1, "", ""},
		{"url/open", in, note, 1, "", ""},
		{"shutdown", in, note, 1, "", ""},
		{"pane/status", in, note, 2, "", ""},
		{"tools/call", in, req, 2, "", ""},
		{"browser/hidden", in, note, 3, bc, br},
	}
	got := Methods()
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(got):
			t.Errorf("missing method %+v", want[i])
		case i >= len(want):
			t.Errorf("unexpected method %+v", got[i])
		case got[i] != want[i]:
			t.Errorf("method %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// docMethod is a method a protocol page names: its direction when the
// page says (0 when it does not) and, for the rows of a method table, the
// permission column.
type docMethod struct {
	name       string
	dir        frame.Dir
	permission *string
	where      string
}

var (
	// a backquoted method name, perhaps followed by its params: `host/copy {text}`
	docSlash = regexp.MustCompile("`([a-z]+/[a-zA-Z]+)[ `]")
	// a method inside a frame written out: "method":"shutdown"
	docFrame = regexp.MustCompile(`"method":"([^"]+)"`)
	// a backquoted permission: `net.request`
	docPermission = regexp.MustCompile("`([a-z]+(?:\\.[a-z]+)?)`")
)

// hostBehaviourMethods reads the methods host-behaviour.md names. A
// paragraph that starts "Plugin → host:" or "Host → plugin:" gives its
// methods that direction.
func hostBehaviourMethods(doc []byte) []docMethod {
	var out []docMethod
	for _, para := range strings.Split(string(doc), "\n\n") {
		var dir frame.Dir
		switch {
		case strings.HasPrefix(para, "Plugin → host:"):
			dir = frame.Out
		case strings.HasPrefix(para, "Host → plugin:"):
			dir = frame.In
		}
		for _, re := range []*regexp.Regexp{docSlash, docFrame} {
			for _, m := range re.FindAllStringSubmatch(para, -1) {
				out = append(out, docMethod{name: m[1], dir: dir, where: "host-behaviour.md"})
			}
		}
	}
	return out
}

// protocolMethods reads the two method tables of plugin-protocol-v1.md:
// "Agentty → plugin" (message, kind, params) and "Plugin → Agentty"
// (method, permission, params, result), one tab-separated row a line.
func protocolMethods(doc []byte) []docMethod {
	var out []docMethod
	var dir frame.Dir
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		switch strings.TrimSuffix(strings.TrimSpace(line), "#") {
		case "Agentty → plugin":
			dir = frame.In
			continue
		case "Plugin → Agentty":
			dir = frame.Out
			continue
		case "Error codes", "UI tree", "An example exchange":
			dir = 0
			continue
		}
		if dir == 0 || !strings.HasPrefix(line, "`") {
			continue
		}
		cols := strings.Split(line, "\t")
		var perm *string
		if dir == frame.Out && len(cols) > 1 {
			p := strings.Trim(cols[1], "`")
			perm = &p
		}
		for _, name := range strings.Split(cols[0], " · ") {
			out = append(out, docMethod{name: strings.Trim(name, "`"), dir: dir, permission: perm, where: "plugin-protocol-v1.md"})
		}
	}
	return out
}

// TestMethodsOfTheDocs reads the method lists of ../shared/protocol
// (host-behaviour.md and plugin-protocol-v1.md) and asserts that check
// knows every method they name, in its direction, with the permission the
// table gives, and that every permission check uses is one
// host-behaviour.md lists. It skips, saying why, without ../shared.
func TestMethodsOfTheDocs(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "protocol")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			t.Skipf("%s is absent (../shared beside the checkout): the documented method lists cannot be read", filepath.Join(dir, name))
		}
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hb, pp := read("host-behaviour.md"), read("plugin-protocol-v1.md")

	known := map[string]Method{}
	for _, m := range Methods() {
		known[fmt.Sprint(m.Name, m.Dir)] = m
	}
	lookup := func(d docMethod) (Method, bool) {
		if d.dir != 0 {
			m, ok := known[fmt.Sprint(d.name, d.dir)]
			return m, ok
		}
		for _, dir := range []frame.Dir{frame.Out, frame.In} {
			if m, ok := known[fmt.Sprint(d.name, dir)]; ok {
				return m, true
			}
		}
		return Method{}, false
	}
	docs := append(hostBehaviourMethods(hb), protocolMethods(pp)...)
	names := map[string]bool{}
	for _, d := range docs {
		names[d.name] = true
		m, ok := lookup(d)
		if !ok {
			t.Errorf("%s names %s (%v), which check does not know", d.where, d.name, d.dir)
			continue
		}
		if d.permission != nil && *d.permission != m.Permission {
			t.Errorf("%s: %s needs permission %q, check says %q", d.where, d.name, *d.permission, m.Permission)
		}
	}
	// Fewer would mean the pages changed shape and the parsing above reads
	// too little to prove anything.
	if len(names) < 25 {
		t.Errorf("only %d methods read from the docs: %v", len(names), names)
	}
	t.Logf("the docs name %d methods, all known", len(names))

	perms := map[string]bool{}
	for _, m := range docPermission.FindAllStringSubmatch(string(hb), -1) {
		perms[m[1]] = true
	}
	for _, m := range Methods() {
		if m.Permission != "" && !perms[m.Permission] {
			t.Errorf("%s needs permission %q, which host-behaviour.md does not list", m.Name, m.Permission)
		}
	}
}

// xFeed is the X Feed Reader's browser traffic (the SDK's example): the
// sites, then a page opened, waited for, read, looked at, scrolled and
// closed. It returns the seq of each browser/* request.
func xFeed(b *tb) []uint64 {
	var calls []uint64
	id := 0
	call := func(ms float64, method, params, result string) {
		id++
		s := b.add(ms, frame.Out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
		if strings.HasPrefix(method, "browser/") {
			calls = append(calls, s)
		}
		b.add(ms+1, frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, id, result))
	}
	call(10, "browser/sites", `{}`, `[{"host":"x.com","signedIn":true,"expiresAt":1798761600000}]`)
	call(20, "ui/setPanel", `{"tree":{"type":"button","id":"read","label":"Read posts"}}`, `null`)
	b.add(30, frame.In, `{"jsonrpc":"2.0","method":"ui/event","params":{"element":"read","event":"click","context":{}}}`)
	call(40, "browser/open", `{"url":"https://x.com/tapedeck","mode":"auto"}`, `{"tabId":1}`)
	call(50, "browser/wait", `{"tabId":1,"timeoutMs":30000}`, `{"url":"https://x.com/tapedeck","title":"X"}`)
	call(60, "browser/eval", `{"tabId":1,"script":"return (function readPosts(args) { return []; })(args);","args":{"seen":[]},"timeoutMs":20000}`, `{"value":[]}`)
	call(70, "browser/info", `{"tabId":1}`, `{"tabId":1,"url":"https://x.com/tapedeck","title":"X","loading":false,"visible":false,"site":"x.com"}`)
	call(80, "browser/eval", `{"tabId":1,"script":"window.scrollBy(0, 600); return window.scrollY;"}`, `{"value":600}`)
	call(90, "browser/close", `{"tabId":1}`, `null`)
	return calls
}

// xSites is the X Feed Reader's manifest section.
var xSites = &BrowserSection{Sites: []Site{{Host: "x.com", Aliases: []string{"twitter.com"}}}}

// TestBrowser: browser/* with and without the permission, below API 3,
// without a browser section or a manifest, and the host's answers that are
// not the plugin's fault.
func TestBrowser(t *testing.T) {
	withBrowser := &Manifest{APIVersion: 3, Permissions: []string{"browser.control"}, Browser: xSites}
	each := func(level Level, rule string, seqs []uint64) []want {
		var ws []want
		for _, s := range seqs {
			ws = append(ws, want{level, rule, s, ""})
		}
		return ws
	}
	for _, tc := range []struct {
		name  string
		api   int
		opts  Options
		build func(b *tb) []want
		text  string // the start of every finding's message
	}{
		{"the X Feed Reader at API 3 with browser.control and browser.sites", 3, Options{Manifest: withBrowser}, func(b *tb) []want {
			xFeed(b)
			return nil
		}, ""},
		{"the X Feed Reader at API 4", 4, Options{Manifest: withBrowser}, func(b *tb) []want {
			xFeed(b)
			return nil
		}, ""},
		{"without browser.control: the host refuses each with -32001", 3, Options{Manifest: &Manifest{APIVersion: 3, Permissions: []string{"net.request"}, Browser: xSites}}, func(b *tb) []want {
			return each(Error, RulePermissionMissing, xFeed(b))
		}, `browser/`},
		{"at API 2 the host does not know them: -32601", 2, Options{Manifest: withBrowser}, func(b *tb) []want {
			ws := each(Error, RuleMethodUnknown, xFeed(b))
			for i := range ws {
				ws[i].Path = "method"
			}
			return ws
		}, `browser/`},
		{"at API 1", 1, Options{Manifest: withBrowser}, func(b *tb) []want {
			return each(Error, RuleMethodUnknown, xFeed(b))
		}, `browser/`},
		{"without a browser section", 3, Options{Manifest: &Manifest{APIVersion: 3, Permissions: []string{"browser.control"}}}, func(b *tb) []want {
			return each(Error, RuleBrowserNoSites, xFeed(b))
		}, `browser/`},
		{"without a manifest only the manifest note", 3, Options{NoManifest: "no manifest here"}, func(b *tb) []want {
			xFeed(b)
			return []want{{Info, RuleManifestMissing, 0, ""}}
		}, ""},
		{"a notification without browser.control", 3, Options{Manifest: &Manifest{APIVersion: 3}}, func(b *tb) []want {
			s := b.add(10, frame.Out, `{"jsonrpc":"2.0","method":"browser/close","params":{"tabId":1}}`)
			return []want{{Error, RulePermissionMissing, s, ""}}
		}, `browser/close needs the "browser.control" permission, which the manifest does not grant: the host refuses it with -32001 (permission missing); sent as a notification, it fails silently`},
		{"the in-app browser unavailable is an info, not an error", 3, Options{Manifest: withBrowser}, func(b *tb) []want {
			b.add(10, frame.Out, `{"jsonrpc":"2.0","id":1,"method":"browser/open","params":{"url":"https://x.com/a"}}`)
			s := b.add(11, frame.In, `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"the in-app browser is not available"}}`)
			b.add(20, frame.Out, `{"jsonrpc":"2.0","id":2,"method":"host/openUrl","params":{"url":"https://x.com/a"}}`)
			b.add(21, frame.In, `{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"not now"}}`) // not browser/*: no note
			return []want{{Info, RuleBrowserUnavailable, s, "error.code"}}
		}, `the answer to browser/open (#4) is -32002 "the in-app browser is not available": the in-app browser was unavailable`},
		{"bad params: the host answers -32602", 3, Options{Manifest: withBrowser}, func(b *tb) []want {
			s1 := b.add(10, frame.Out, `{"jsonrpc":"2.0","id":1,"method":"browser/eval","params":{"tabId":1,"script":"  \n"}}`)
			s2 := b.add(20, frame.Out, `{"jsonrpc":"2.0","id":2,"method":"browser/close","params":{}}`)
			s3 := b.add(30, frame.Out, `{"jsonrpc":"2.0","id":3,"method":"browser/wait","params":{"tabId":"1"}}`)
			s4 := b.add(40, frame.Out, `{"jsonrpc":"2.0","id":4,"method":"browser/eval","params":{"tabId":1}}`)
			s5 := b.add(50, frame.Out, `{"jsonrpc":"2.0","id":5,"method":"browser/open","params":{"mode":"visible"}}`)
			for i := 1; i <= 5; i++ {
				b.add(60+float64(i), frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"bad"}}`, i))
			}
			return []want{
				{Error, RuleParamsInvalid, s1, "params.script"},
				{Error, RuleParamsInvalid, s2, "params"},
				{Error, RuleParamsInvalid, s3, "params.tabId"},
				{Error, RuleParamsInvalid, s4, "params"},
				{Error, RuleParamsInvalid, s5, "params"},
			}
		}, ""},
		{"a page off the sites", 3, Options{Manifest: withBrowser}, func(b *tb) []want {
			s := b.add(10, frame.Out, `{"jsonrpc":"2.0","id":1,"method":"browser/open","params":{"url":"https://x.com.evil.example/"}}`)
			return []want{{Error, RuleBrowserSite, s, "params.url"}}
		}, `"https://x.com.evil.example/": x.com.evil.example is not on one of the manifest's browser.sites (x.com (twitter.com)): the host opens pages only`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &tb{}
			b.start(tc.api)
			ws := tc.build(b)
			got := run(tc.opts, b.frames)
			compare(t, got, ws)
			for _, f := range got {
				if f.Rule != RuleManifestMissing && !strings.HasPrefix(f.Message, tc.text) {
					t.Errorf("finding %s #%d says %q, want it to start %q", f.Rule, f.Seq, f.Message, tc.text)
				}
				if tc.api < 3 && !strings.Contains(f.Message, fmt.Sprintf("needs apiVersion 3 (the plugin's is %d)", tc.api)) {
					t.Errorf("finding %s #%d says %q, want the API version it needs", f.Rule, f.Seq, f.Message)
				}
			}
		})
	}
}

// TestSiteFor matches page addresses to sites as the host does.
func TestSiteFor(t *testing.T) {
	sites := []Site{{Host: "x.com", Aliases: []string{"twitter.com"}}, {Host: "localhost"}}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://x.com/someone", true},
		{"https://X.com/someone", true},
		{"https://api.x.com/", true},
		{"https://mobile.twitter.com/x", true},
		{"http://localhost:5173/feed", true},
		{"http://x.com/someone", false},
		{"https://notx.com/", false},
		{"https://x.com.evil.example/", false},
		{"https://user@evil.example/x.com", false},
		{"javascript:alert(1)", false},
		{"file:///etc/passwd", false},
		{"", false},
		{"x.com/someone", false},
	} {
		if _, ok := siteFor(sites, tc.url); ok != tc.ok {
			t.Errorf("siteFor(%q) = %v, want %v", tc.url, ok, tc.ok)
		}
	}
	for host, ok := range map[string]bool{"x.com": true, " X.com ": true, "twitter.com": true, "api.x.com": false, "evil.example": false, "": false} {
		if siteNamed(sites, host) != ok {
			t.Errorf("siteNamed(%q) = %v, want %v", host, !ok, ok)
		}
	}
}
