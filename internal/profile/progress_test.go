package profile

import (
	"strings"
	"testing"
)

func TestReadProgress(t *testing.T) {
	type reader interface {
		ReadProgress(method string, params []byte) (Progress, bool)
	}
	for _, c := range []struct {
		name   string
		p      reader
		method string
		params string
		want   Progress
		ok     bool
	}{
		{"LSP begin", LSP{}, "$/progress", `{"token":"t1","value":{"kind":"begin","title":"Indexing","message":"1/3","percentage":33}}`,
			Progress{Token: `"t1"`, Kind: "begin", Title: "Indexing", Message: "1/3", Percent: 33, Done: -1, Total: -1}, true},
		{"LSP end, a number token, no percentage", LSP{}, "$/progress", `{"token":7,"value":{"kind":"end"}}`,
			Progress{Token: "7", Kind: "end", Percent: -1, Done: -1, Total: -1}, true},
		{"LSP without a token", LSP{}, "$/progress", `{"value":{"kind":"end"}}`, Progress{}, false},
		{"LSP another method", LSP{}, "window/logMessage", `{"token":"t"}`, Progress{}, false},
		{"LSP params not JSON", LSP{}, "$/progress", `{`, Progress{}, false},
		{"MCP with a total", MCP{}, "notifications/progress", `{"progressToken":"slow-1","progress":2,"total":3,"message":"step 2"}`,
			Progress{Token: `"slow-1"`, Message: "step 2", Percent: -1, Done: 2, Total: 3}, true},
		{"MCP without a total", MCP{}, "notifications/progress", `{"progressToken":5,"progress":0.5}`,
			Progress{Token: "5", Percent: -1, Done: 0.5, Total: -1}, true},
		{"MCP without progress", MCP{}, "notifications/progress", `{"progressToken":5}`, Progress{}, false},
		{"MCP LSP's method", MCP{}, "$/progress", `{"token":"t","value":{}}`, Progress{}, false},
	} {
		got, ok := c.p.ReadProgress(c.method, []byte(c.params))
		if ok != c.ok || got != c.want {
			t.Errorf("%s: ReadProgress = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestMatchTemplate(t *testing.T) {
	for _, c := range []struct {
		tmpl, uri string
		want      bool
	}{
		{"demo://note/{id}", "demo://note/7", true},
		{"demo://note/{id}", "demo://note/", true}, // an empty value expands to nothing
		{"demo://note/{id}", "demo://note/7/x", false},
		{"demo://note/{id}", "demo://notes/7", false},
		{"demo://{a}/{b}", "demo://x/y", true},
		{"file:///{+path}", "file:///etc/hosts", true},
		{"file:///{+path}", "file://etc", false},
		{"search{?q,lang}", "search?q=a&lang=en", true},
		{"search{?q}", "find?q=a", false},
		{"plain://uri", "plain://uri", true},
		{"plain://uri", "plain://uri2", false},
		{"broken://{id", "broken://{id", true}, // no closing brace: literal
		{"broken://{id", "broken://7", false},
		{strings.Repeat("{a}", 300) + "!", strings.Repeat("x", 4000), false}, // bounded work, no match
		{strings.Repeat("x", 2000), strings.Repeat("x", 2000), false},        // over the template bound
	} {
		if got := MatchTemplate(c.tmpl, c.uri); got != c.want {
			t.Errorf("MatchTemplate(%.40q, %.40q) = %v, want %v", c.tmpl, c.uri, got, c.want)
		}
	}
}

func TestLooksLikeServer(t *testing.T) {
	for _, c := range []struct {
		argv     string
		mcp, lsp bool
	}{
		{"npx -y @modelcontextprotocol/server-filesystem /tmp", true, false},
		{"node /n/node_modules/.bin/mcp-server-everything", true, false},
		{"uvx mcp-server-time", true, false},
		{"npx @playwright/mcp@latest", true, false},
		{"./bin/github-mcp stdio", true, false},
		{"python3 -m weather_mcp", true, false},
		{"/tmp/build/mcp-go", true, false},
		{"gopls serve", false, true},
		{"/usr/bin/clangd --background-index", false, true},
		{"typescript-language-server --stdio", false, true},
		{"pyright-langserver --stdio", false, true},
		{"terraform-ls serve", false, true},
		{"node /srv/mcp/plugin/index.js", false, false},
		{"python3 main.py", false, false},
		{"./hello-go", false, false},
		{"npx tools", false, false},
	} {
		argv := strings.Fields(c.argv)
		if got := (MCP{}).LooksLikeServer(argv); got != c.mcp {
			t.Errorf("MCP.LooksLikeServer(%s) = %v", c.argv, got)
		}
		if got := (LSP{}).LooksLikeServer(argv); got != c.lsp {
			t.Errorf("LSP.LooksLikeServer(%s) = %v", c.argv, got)
		}
	}
}
