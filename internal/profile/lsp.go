package profile

import (
	"net/url"

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
