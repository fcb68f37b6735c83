package profile

import (
	"encoding/json"

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
