package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlayRefusesAnMCPServer: play started on an MCP server (the fixture
// server, built, in a folder without a manifest) says in one line that it
// drives Agentty plugins and how to drive the server instead, exits 2, and
// starts nothing: no page, no session.
func TestPlayRefusesAnMCPServer(t *testing.T) {
	t.Parallel()
	bins := buildPeers(t, "mcp/go")
	dir, store := t.TempDir(), t.TempDir()
	r := readmeCmd(t, dir, []string{"TAPEDECK_STORE=" + store}, "tapedeck play -- "+bins["mcp/go"], nil)
	lines := strings.Split(strings.TrimSuffix(string(r.stderr), "\n"), "\n")
	want := "tapedeck: play: the command looks like an MCP server, and play is Agentty's host: it drives Agentty plugins (it would refuse Agentty's initialize); " +
		"drive the server with a host script: tapedeck record --host SCRIPT --profile mcp -- " + bins["mcp/go"]
	if r.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) || len(r.stdout) != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, and one line starting %q", r.code, r.stdout, r.stderr, want)
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("play refused but left %d entries in the store", len(entries))
	}
}

// TestPlayRefusal: what play refuses and what it plays. A folder with a
// manifest is an Agentty plugin, whatever its command is called.
func TestPlayRefusal(t *testing.T) {
	t.Parallel()
	bare, plugin := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(plugin, "agentty-plugin.json"), []byte(`{"id":"x","main":"mcp-server.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		argv []string
		says string // "" for played
	}{
		{bare, nil, "no agentty-plugin.json in " + bare},
		{bare, []string{"npx", "-y", "@modelcontextprotocol/server-memory"}, "looks like an MCP server"},
		{bare, []string{"node", "/opt/mcp/node_modules/.bin/mcp-server-everything"}, "looks like an MCP server"},
		{bare, []string{"uvx", "mcp-server-time"}, "looks like an MCP server"},
		{bare, []string{"/usr/local/bin/gopls", "serve"}, "looks like a language server, and play"},
		{bare, []string{"typescript-language-server", "--stdio"}, "--profile lsp -- typescript-language-server --stdio"},
		{bare, []string{"node", "/work/mcp/plugin/index.js"}, ""},
		{bare, []string{"python3", "main.py"}, ""},
		{plugin, []string{"node", "mcp-server.js"}, ""},
	} {
		got, err := playRefusal(c.dir, c.argv)
		if err != nil || c.says == "" && got != "" || c.says != "" && !strings.Contains(got, c.says) {
			t.Errorf("playRefusal(%v) = %q, %v; want one saying %q", c.argv, got, err, c.says)
		}
	}
}
