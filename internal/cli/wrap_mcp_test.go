package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/wrap"
)

// TestWrapAnMCPClientsConfig: wrap --mcp puts tapedeck in front of a
// server of a workspace's .vscode/mcp.json (comments, trailing commas and
// a remote server beside it); the client, starting the server as the
// file now says with its env, gets the server's own answers and the
// session is recorded under the server's name with its env kept; doctor
// --mcp finds nothing wrong; unwrap --mcp puts the file back byte for
// byte.
func TestWrapAnMCPClientsConfig(t *testing.T) {
	t.Parallel()
	bins := buildPeers(t, "mcp/go", "mcp/client")
	workspace := t.TempDir()
	path := filepath.Join(workspace, ".vscode", "mcp.json")
	os.Mkdir(filepath.Dir(path), 0o755)
	original := `{
	// the fixture server, and a remote one
	"servers": {
		"fixture": {
			"type": "stdio",
			"command": ` + string(mustJSON(t, bins["mcp/go"])) + `,
			"env": {"FIXTURE_NOTE": "kept"},
		},
		"remote": {"type": "http", "url": "https://example.com/mcp"},
	},
}
`
	if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(t.TempDir(), "store")
	r := tapedeck(t, store, nil, nil, "wrap", "--mcp", path)
	if r.code != 0 {
		t.Fatalf("wrap --mcp: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"wrapped " + path + " (VS Code's)", "server fixture", "keeping FIXTURE_NOTE with each session"} {
		if !strings.Contains(string(r.stdout), want) {
			t.Errorf("wrap --mcp says:\n%s\nwithout %q", r.stdout, want)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := wrap.ParseMCPConfig(path, data)
	if err != nil {
		t.Fatalf("the wrapped file does not read: %v\n%s", err, data)
	}
	s := c.Server("fixture")
	if s.Launch == nil || s.Command != tapedeckBin || c.Server("remote").Launch != nil {
		t.Fatalf("the wrapped file:\n%s", data)
	}

	// The client: the command and args the file gives, with its env.
	client := exec.Command(bins["mcp/client"], append([]string{"-scenario", "basic", "--", s.Command}, s.Args...)...)
	client.Env = append(os.Environ(), "FIXTURE_NOTE=kept")
	if out, err := client.CombinedOutput(); err != nil {
		t.Fatalf("the client through the wrapped server: %v\n%s", err, out)
	}
	r = tapedeck(t, store, nil, nil, "ls", "--json")
	var list []struct {
		Name, Profile string
		Env           map[string]string
	}
	if err := json.Unmarshal(r.stdout, &list); err != nil || len(list) != 1 {
		t.Fatalf("ls --json: %v\n%s", err, r.stdout)
	}
	if got := list[0]; got.Name != "fixture" || got.Profile != "mcp" || got.Env["FIXTURE_NOTE"] != "kept" {
		t.Errorf("the session recorded: %+v", got)
	}

	r = tapedeck(t, store, nil, nil, "doctor", "--mcp", path)
	if r.code != 0 || !strings.Contains(string(r.stdout), "VS Code will run fixture: "+tapedeckBin) {
		t.Errorf("doctor --mcp: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = tapedeck(t, store, nil, nil, "unwrap", "--mcp", path)
	if r.code != 0 {
		t.Fatalf("unwrap --mcp: exit %d: %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(path); string(got) != original {
		t.Errorf("unwrap --mcp left:\n%s", got)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(path), wrap.StateDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unwrap --mcp left .tapedeck/: %v", err)
	}
}

// TestWrapMCPArguments: wrap --mcp refuses a folder beside it, --server
// without --mcp, and a configuration it cannot wrap, each in one line,
// changing nothing.
func TestWrapMCPArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "claude_desktop_config.json")
	config := `{"mcpServers":{"a":{"command":"x"},"b":{"command":"y"}}}`
	os.WriteFile(path, []byte(config), 0o600)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"wrap", "--mcp", path, dir}, 2, "wrap --mcp takes no folder"},
		{[]string{"wrap", "--server", "a", dir}, 2, "give it with --mcp CONFIG"},
		{[]string{"wrap", "--mcp", path}, 1, "it configures 2 servers the client starts (a, b): name those to wrap with --server NAME"},
		{[]string{"wrap", "--mcp", path, "--server", "c"}, 1, `no such server "c" in "mcpServers": it has a, b`},
		{[]string{"unwrap", "--mcp", path}, 1, "not wrapped"},
		{[]string{"doctor", "--mcp", path}, 1, "not wrapped: run tapedeck wrap --mcp"},
	} {
		r := tapedeck(t, filepath.Join(dir, "store"), nil, nil, c.args...)
		lines := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
		if r.code != c.code || len(lines) != 1 || !strings.Contains(lines[0], c.says) {
			t.Errorf("tapedeck %s: exit %d, %q; want %d and one line saying %q", strings.Join(c.args, " "), r.code, r.stderr, c.code, c.says)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != config {
		t.Errorf("the file changed")
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if !bytes.Equal([]byte(strings.Join(names, ",")), []byte("claude_desktop_config.json")) {
		t.Errorf("the folder holds %v", names)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
