package profile

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
	"github.com/tapedeck/tapedeck/message"
)

// LSP is a language client running a language server over stdio (the
// Language Server Protocol 3.17: JSON-RPC with a Content-Length header
// before each body). The client names itself in initialize's params
// (clientInfo), the server itself in the answer (serverInfo); the client
// ends the session with a shutdown request and an exit notification.
type LSP struct{ base }

// Name implements Profile.
func (LSP) Name() string { return NameLSP }

// Framing implements Profile.
func (LSP) Framing() wire.Framing { return wire.Headers }

// Opening implements Profile: initialize, and the initialized
// notification that completes the handshake.
func (LSP) Opening(method string) bool { return method == "initialize" || method == "initialized" }

// Closing implements Profile.
func (LSP) Closing(method string) bool { return method == "shutdown" || method == "exit" }

// Identify implements Profile.
func (LSP) Identify(meta *frame.Session, req, resp *message.Message) {
	if req != nil && req.Method == "initialize" && meta.HostName == "" {
		var params struct {
			ClientInfo frame.Plugin `json:"clientInfo"`
		}
		decode(req.Params, &params)
		meta.HostName, meta.HostVersion = params.ClientInfo.Name, params.ClientInfo.Version
	}
	if resp != nil && meta.Plugin.ID == "" {
		var result struct {
			ServerInfo frame.Plugin `json:"serverInfo"`
		}
		decode(resp.Result, &result)
		meta.Plugin = frame.Plugin{ID: result.ServerInfo.Name, Version: result.ServerInfo.Version}
	}
}

// Carried implements Profile: the server chooses the token of the progress
// it asks the client to show (window/workDoneProgress/create) and the id of
// each capability it registers (client/registerCapability); the client
// sends them back to cancel the one (window/workDoneProgress/cancel) and
// the server to unregister the other (LSP 3.17, "WorkDoneProgress",
// "Register Capability").
func (LSP) Carried() []string {
	return []string{"window/workDoneProgress/create:params.token", "client/registerCapability:params.registrations[*].id"}
}

// Timing implements Profile: answers are matched by id; each document's
// diagnostics are a stream of their own (LSP 3.17 says nothing of their
// order across documents); progress and log messages report on the
// server's own work, as often as it pleases.
func (LSP) Timing() Timing {
	return Timing{
		Answers: true,
		Streams: []string{"textDocument/publishDiagnostics:params.uri"},
		Chatter: []string{"$/progress", "window/workDoneProgress/create", "window/logMessage", "$/logTrace"},
	}
}

// Progress is what a progress notification says, read by a profile that
// has one (LSP's $/progress, MCP's notifications/progress): the token of
// the work it reports on, as JSON (a string or a number), and its state.
type Progress struct {
	Token string
	// Kind is LSP's begin, report or end; "" for MCP.
	Kind string
	// Title names the work (LSP's begin); Message says where it is.
	Title, Message string
	// Percent is LSP's percentage, -1 when absent.
	Percent float64
	// Done and Total are MCP's progress and total; Total is -1 when
	// absent (and Done when the notification is not MCP's).
	Done, Total float64
}

// ReadProgress reads a $/progress notification's params (LSP 3.17,
// "$/progress" with a WorkDoneProgressBegin, Report or End value); ok is
// false for any other message.
func (LSP) ReadProgress(method string, params []byte) (p Progress, ok bool) {
	if method != "$/progress" {
		return p, false
	}
	var v struct {
		Token json.RawMessage `json:"token"`
		Value struct {
			Kind       string   `json:"kind"`
			Title      string   `json:"title"`
			Message    string   `json:"message"`
			Percentage *float64 `json:"percentage"`
		} `json:"value"`
	}
	if json.Unmarshal(params, &v) != nil || len(v.Token) == 0 {
		return p, false
	}
	p = Progress{Token: string(v.Token), Kind: v.Value.Kind, Title: v.Value.Title, Message: v.Value.Message, Percent: -1, Done: -1, Total: -1}
	if v.Value.Percentage != nil {
		p.Percent = *v.Value.Percentage
	}
	return p, true
}

// LooksLikeServer reports whether a command line runs a language server,
// by the names they are published under: gopls, clangd, rust-analyzer and
// the like, and any program whose name ends with -language-server,
// -languageserver, -langserver, -lsp or -ls (terraform-ls).
func (LSP) LooksLikeServer(argv []string) bool {
	known := map[string]bool{"gopls": true, "clangd": true, "rust-analyzer": true, "jdtls": true, "zls": true, "pylsp": true,
		"pyls": true, "solargraph": true, "intelephense": true, "marksman": true, "metals": true, "ocamllsp": true, "sourcekit-lsp": true}
	for _, a := range argv {
		n := programName(a)
		if known[n] {
			return true
		}
		for _, suffix := range []string{"-language-server", "-languageserver", "-langserver", "-lsp", "-ls", "-language-server-wrapper"} {
			if strings.HasSuffix(n, suffix) {
				return true
			}
		}
	}
	return false
}

// IsServer reports whether a profile's peer is a server its host is the
// client of, as MCP's and LSP's are: tapedeck names such a peer as a
// server (with the protocol and the client) and counts what it offers.
// An Agentty plugin is the host's plugin, and of a JSON-RPC peer nothing
// is known.
func IsServer(p Profile) bool { return p.Name() == NameMCP || p.Name() == NameLSP }

// DataFolder implements Profile: the workspace the client opens, from
// initialize's rootUri, else its first workspaceFolders entry, else its
// rootPath (LSP 3.17, "Initialize Request"). It is the user's project,
// not the server's own: a replay gives a copy of it only when the tape
// carries one.
func (LSP) DataFolder(req *message.Message) (Folder, bool) {
	if req == nil || req.Method != "initialize" {
		return Folder{}, false
	}
	var params struct {
		RootURI          string `json:"rootUri"`
		RootPath         string `json:"rootPath"`
		WorkspaceFolders []struct {
			URI string `json:"uri"`
		} `json:"workspaceFolders"`
	}
	decode(req.Params, &params)
	uri := params.RootURI
	if uri == "" && len(params.WorkspaceFolders) > 0 {
		uri = params.WorkspaceFolders[0].URI
	}
	if uri != "" {
		if u, err := url.Parse(uri); err == nil && u.Scheme == "file" && u.Path != "" {
			return Folder{Path: u.Path}, true
		}
	}
	if params.RootPath != "" {
		return Folder{Path: params.RootPath}, true
	}
	return Folder{}, false
}
