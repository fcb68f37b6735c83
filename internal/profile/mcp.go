package profile

import (
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
