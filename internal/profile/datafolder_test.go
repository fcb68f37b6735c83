package profile

import (
	"testing"

	"github.com/tapedeck/tapedeck/message"
)

// TestDataFolder: each profile reads the folder its host names to the
// peer from the opening request, and names none where its host does not.
func TestDataFolder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       Profile
		req     string
		want    Folder
		wantsOK bool
	}{
		{"agentty", Agentty{}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"plugin":{"id":"x","dataDir":"/tmp/data x"}}}`,
			Folder{Path: "/tmp/data x", Env: "AGENTTY_PLUGIN_DATA", Own: true}, true},
		{"agentty without one", Agentty{}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"plugin":{"id":"x"}}}`, Folder{}, false},
		{"agentty, not initialize", Agentty{}, `{"jsonrpc":"2.0","method":"panel/open","params":{"plugin":{"dataDir":"/x"}}}`, Folder{}, false},
		{"lsp rootUri", LSP{}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":1,"rootUri":"file:///home/u/my%20proj","rootPath":"/elsewhere"}}`,
			Folder{Path: "/home/u/my proj"}, true},
		{"lsp workspaceFolders", LSP{}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"rootUri":null,"workspaceFolders":[{"uri":"file:///w/a","name":"a"},{"uri":"file:///w/b","name":"b"}]}}`,
			Folder{Path: "/w/a"}, true},
		{"lsp rootPath", LSP{}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"rootPath":"/w/old"}}`, Folder{Path: "/w/old"}, true},
		{"lsp no folder", LSP{}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"rootUri":null}}`, Folder{}, false},
		{"lsp other scheme", LSP{}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"rootUri":"untitled:x"}}`, Folder{}, false},
		{"mcp", MCP{}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, Folder{}, false},
		{"jsonrpc", JSONRPC{}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"dataDir":"/x"}}`, Folder{}, false},
	} {
		m := message.Parse([]byte(tc.req))
		got, ok := tc.p.DataFolder(&m)
		if got != tc.want || ok != tc.wantsOK {
			t.Errorf("%s: DataFolder = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.wantsOK)
		}
	}
	for _, p := range All() {
		if _, ok := p.DataFolder(nil); ok {
			t.Errorf("%s: DataFolder(nil) names a folder", p.Name())
		}
	}
}
