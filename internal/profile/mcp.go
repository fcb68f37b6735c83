package profile

import (
	"encoding/json"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/message"
)

// MCP is a Model Context Protocol client running a server over stdio
// (newline-delimited JSON-RPC; modelcontextprotocol.io, revisions
// 2025-06-18, 2025-11-25 and 2026-07-28). The client names itself and the
// revision it speaks in initialize's params, the server itself in the
// answer; the session ends when the client closes the server's stdin.
type MCP struct{ base }

// Name implements Profile.
func (MCP) Name() string { return NameMCP }

// Identify implements Profile: the server from serverInfo, the client
// from clientInfo, the revision the server agreed to (else the client's).
func (MCP) Identify(meta *frame.Session, req, resp *message.Message) {
	if req != nil && req.Method == "initialize" {
		var params struct {
			ProtocolVersion string       `json:"protocolVersion"`
			ClientInfo      frame.Plugin `json:"clientInfo"`
		}
		decode(req.Params, &params)
		if meta.Protocol == "" {
			meta.Protocol = params.ProtocolVersion
		}
		if meta.HostName == "" {
			meta.HostName, meta.HostVersion = params.ClientInfo.Name, params.ClientInfo.Version
		}
	}
	if resp != nil {
		var result struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name    string `json:"name"`
				Title   string `json:"title"`
				Version string `json:"version"`
			} `json:"serverInfo"`
		}
		decode(resp.Result, &result)
		if result.ProtocolVersion != "" {
			meta.Protocol = result.ProtocolVersion
		}
		if meta.Plugin.ID == "" {
			meta.Plugin = frame.Plugin{ID: result.ServerInfo.Name, Name: result.ServerInfo.Title, Version: result.ServerInfo.Version}
		}
	}
}

// Opening implements Profile: initialize, and the notification that
// completes the handshake.
func (MCP) Opening(method string) bool {
	return method == "initialize" || method == "notifications/initialized"
}

// Carried implements Profile: a server chooses the id of a task it starts
// and the cursor of the next page, which the client sends back
// (tasks/get, tasks/result, tasks/cancel; the cursor of a list request).
func (MCP) Carried() []string {
	return []string{"*:result.task.taskId", "*:result.nextCursor"}
}

// Timing implements Profile: answers are matched by id; the progress of
// each token, the updates of each resource and the status of each task
// are streams of their own (a client runs requests concurrently).
func (MCP) Timing() Timing {
	return Timing{
		Answers: true,
		Streams: []string{"notifications/progress:params.progressToken", "notifications/resources/updated:params.uri", "notifications/tasks/status:params.taskId"},
	}
}

// ReadProgress reads a notifications/progress notification's params
// (progressToken, progress, total, message: the specification's
// "Progress" utility); ok is false for any other message.
func (MCP) ReadProgress(method string, params []byte) (p Progress, ok bool) {
	if method != "notifications/progress" {
		return p, false
	}
	var v struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress *float64        `json:"progress"`
		Total    *float64        `json:"total"`
		Message  string          `json:"message"`
	}
	if json.Unmarshal(params, &v) != nil || len(v.Token) == 0 || v.Progress == nil {
		return p, false
	}
	p = Progress{Token: string(v.Token), Message: v.Message, Percent: -1, Done: *v.Progress, Total: -1}
	if v.Total != nil {
		p.Total = *v.Total
	}
	return p, true
}

// Offer is a kind of thing an MCP server offers its client, as the
// specification's server features list and use it: tools are listed by
// tools/list, in its result's "tools", each named by its "name", and one
// is used by tools/call naming it in its params' "name".
type Offer struct {
	Kind, Kinds string // "tool", "tools": one and many, as people say them
	Verb        string // what using one is called: "called", "read", "got"
	List        string // the client's request that lists them
	Items       string // the member of its result that holds them (objects)
	Key         string // the member of an item that names one
	Use         string // the client's request that uses one
	UseKey      string // the member of its params that names the one used
	// Template marks names that are URI templates (RFC 6570): a use
	// counts for each template its name matches (MatchTemplate).
	Template bool
}

// Offers are what an MCP server offers (the specification's server
// features: tools, resources and their templates, prompts), the same in
// every revision tapedeck knows.
func (MCP) Offers() []Offer {
	return []Offer{
		{Kind: "tool", Kinds: "tools", Verb: "called", List: "tools/list", Items: "tools", Key: "name", Use: "tools/call", UseKey: "name"},
		{Kind: "resource", Kinds: "resources", Verb: "read", List: "resources/list", Items: "resources", Key: "uri", Use: "resources/read", UseKey: "uri"},
		{Kind: "resource template", Kinds: "resource templates", Verb: "read", List: "resources/templates/list", Items: "resourceTemplates", Key: "uriTemplate",
			Use: "resources/read", UseKey: "uri", Template: true},
		{Kind: "prompt", Kinds: "prompts", Verb: "got", List: "prompts/list", Items: "prompts", Key: "name", Use: "prompts/get", UseKey: "name"},
	}
}

// MatchTemplate reports whether uri is one the URI template tmpl (RFC
// 6570, as MCP's resource templates write them) expands to: literal text
// must be equal, an expression ({id}, {+path}, {#frag}, {?q,r}, …) stands
// for any text, which for a simple {var} holds no "/", "?" or "#". A
// template longer than maxTemplate or a uri longer than maxTemplateURI
// matches nothing, so the work is bounded whatever a tape holds: it is
// len(tmpl) × len(uri) steps at most.
func MatchTemplate(tmpl, uri string) bool {
	if len(tmpl) > maxTemplate || len(uri) > maxTemplateURI {
		return false
	}
	// The template as a pattern: each part a literal byte, or an
	// expression (any text; with stop, none of "/?#").
	type part struct {
		lit       byte
		expr, any bool
	}
	var parts []part
	for i := 0; i < len(tmpl); i++ {
		end := -1
		if tmpl[i] == '{' {
			end = strings.IndexByte(tmpl[i:], '}')
		}
		if end < 0 { // a literal byte, or a brace never closed
			parts = append(parts, part{lit: tmpl[i]})
			continue
		}
		expr := tmpl[i+1 : i+end]
		parts = append(parts, part{expr: true, any: expr != "" && strings.ContainsRune("+#?&/;.", rune(expr[0]))})
		i += end
	}
	// can[j]: the parts so far can expand to uri[:j].
	can := make([]bool, len(uri)+1)
	next := make([]bool, len(uri)+1)
	can[0] = true
	for _, p := range parts {
		clear(next)
		for j := 0; j <= len(uri); j++ {
			switch {
			case p.expr:
				// Empty, or one more byte of what it already took.
				next[j] = can[j] || j > 0 && next[j-1] && (p.any || !strings.ContainsRune("/?#", rune(uri[j-1])))
			case j > 0:
				next[j] = can[j-1] && uri[j-1] == p.lit
			}
		}
		can, next = next, can
	}
	return can[len(uri)]
}

// The bounds of MatchTemplate.
const (
	maxTemplate    = 1 << 10
	maxTemplateURI = 4 << 10
)

// LooksLikeServer reports whether a command line runs an MCP server, by
// the names servers are published under: a program, script or package
// whose name starts with mcp- or mcp_ or ends with -mcp or _mcp, holds
// mcp-server, or is mcp itself (@playwright/mcp), and any package of the
// @modelcontextprotocol scope (the reference servers). Only the last
// element of a path counts: a folder named mcp holds anything.
func (MCP) LooksLikeServer(argv []string) bool {
	for _, a := range argv {
		if strings.Contains(strings.ToLower(a), "@modelcontextprotocol/") {
			return true
		}
		n := programName(a)
		if n == "mcp" || strings.Contains(n, "mcp-server") || strings.Contains(n, "mcp_server") ||
			strings.HasPrefix(n, "mcp-") || strings.HasPrefix(n, "mcp_") || strings.HasSuffix(n, "-mcp") || strings.HasSuffix(n, "_mcp") {
			return true
		}
	}
	return false
}

// programName is the name a word of a command line gives a program,
// script or package: its last path element, lower case, without an npm
// version (@latest, @1.2.3) or a script's extension.
func programName(word string) string {
	n := strings.ToLower(word)
	if i := strings.LastIndexAny(n, `/\`); i >= 0 {
		n = n[i+1:]
	}
	if i := strings.LastIndexByte(n, '@'); i > 0 {
		n = n[:i]
	}
	for _, ext := range []string{".js", ".mjs", ".cjs", ".ts", ".py", ".exe"} {
		n = strings.TrimSuffix(n, ext)
	}
	return n
}
