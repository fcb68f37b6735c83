package wrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mcpLaunchArgs is what the tests' launches put before a server's command.
const mcpLaunchArgs = `"--store", "/var/lib/tapedeck store", "record", "--profile", "mcp", "--name", `

type mcpCase struct {
	name, file, server, in, want string
}

// mcpCases are client configurations and what wrap must make of them:
// the command becomes tapedeck, and tapedeck's arguments go before the
// server's own in args, written with the array's own spacing; no other
// byte changes.
func mcpCases() []mcpCase {
	return []mcpCase{
		{
			name: "Claude Desktop, args on their own lines, env kept",
			file: "claude_desktop_config.json", server: "filesystem",
			in: `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/me/Desktop"
      ],
      "env": {"DEBUG": "1", "API_KEY": "s3cret"}
    },
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
  },
  "globalShortcut": "Ctrl+Space"
}
`,
			want: `{
  "mcpServers": {
    "filesystem": {
      "command": "/opt/tapedeck/bin/tapedeck",
      "args": [
        "--store",
        "/var/lib/tapedeck store",
        "record",
        "--profile",
        "mcp",
        "--name",
        "filesystem",
        "--env",
        "API_KEY",
        "--env",
        "DEBUG",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/me/Desktop"
      ],
      "env": {"DEBUG": "1", "API_KEY": "s3cret"}
    },
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
  },
  "globalShortcut": "Ctrl+Space"
}
`,
		},
		{
			name: "Cursor, args on one line", file: ".cursor/mcp.json", server: "memory",
			in:   `{"mcpServers":{"memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]},"remote":{"url":"https://example.com/mcp"}}}`,
			want: `{"mcpServers":{"memory":{"command":"/opt/tapedeck/bin/tapedeck","args":[` + mcpLaunchArgs + `"memory", "--", "npx", "-y","@modelcontextprotocol/server-memory"]},"remote":{"url":"https://example.com/mcp"}}}`,
		},
		{
			name: "no args: inserted after the command, on its own line", file: ".cursor/mcp.json", server: "local",
			in:   "{\r\n  \"mcpServers\": {\r\n    \"local\": {\r\n      \"command\": \"/usr/local/bin/my server\",\r\n      \"cwd\": \"/srv\"\r\n    }\r\n  }\r\n}\r\n",
			want: "{\r\n  \"mcpServers\": {\r\n    \"local\": {\r\n      \"command\": \"/opt/tapedeck/bin/tapedeck\",\r\n      \"args\": [" + mcpLaunchArgs + "\"local\", \"--\", \"/usr/local/bin/my server\"],\r\n      \"cwd\": \"/srv\"\r\n    }\r\n  }\r\n}\r\n",
		},
		{
			name: "empty args", file: "claude_desktop_config.json", server: "s",
			in:   `{"mcpServers": {"s": {"args": [ ], "command": "server"}}}`,
			want: `{"mcpServers": {"s": {"args": [` + mcpLaunchArgs + `"s", "--", "server"], "command": "/opt/tapedeck/bin/tapedeck"}}}`,
		},
		{
			name: "VS Code, with comments, trailing commas, inputs and a remote server", file: ".vscode/mcp.json", server: "perplexity",
			in: `{
	// Servers for this workspace.
	"inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true},],
	"servers": {
		"perplexity": {
			"type": "stdio", /* a local one */
			"command": "npx", // run with npx
			"args": ["-y", "server-perplexity-ask",],
			"env": {"PERPLEXITY_API_KEY": "${input:key}"},
		},
		"context7": {"type": "http", "url": "https://mcp.context7.com/mcp"},
	},
}
`,
			want: `{
	// Servers for this workspace.
	"inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true},],
	"servers": {
		"perplexity": {
			"type": "stdio", /* a local one */
			"command": "/opt/tapedeck/bin/tapedeck", // run with npx
			"args": [` + mcpLaunchArgs + `"perplexity", "--env", "PERPLEXITY_API_KEY", "--", "npx", "-y", "server-perplexity-ask",],
			"env": {"PERPLEXITY_API_KEY": "${input:key}"},
		},
		"context7": {"type": "http", "url": "https://mcp.context7.com/mcp"},
	},
}
`,
		},
		{
			name: "names and arguments with quotes and escapes", file: "claude_desktop_config.json", server: "a \"b\"",
			in:   `{"mcpServers":{"a \"b\"":{"command":"C:\\srv\\s.exe","args":["\u00e9","<&>"]}}}`,
			want: `{"mcpServers":{"a \"b\"":{"command":"/opt/tapedeck/bin/tapedeck","args":[` + mcpLaunchArgs + `"a \"b\"", "--", "C:\\srv\\s.exe", "\u00e9","<&>"]}}}`,
		},
	}
}

func writeMCP(t *testing.T, file, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func testOptions() Options { return Options{Tapedeck: testTapedeck, Store: testStore} }

// TestWrapMCPConfigs: wrap writes exactly the expected bytes, the wrapped
// server reads back as a launch of its own command (its env names kept
// with each session), the original is kept beside the file with its
// permissions, and unwrap restores the file byte for byte.
func TestWrapMCPConfigs(t *testing.T) {
	for _, c := range mcpCases() {
		t.Run(c.name, func(t *testing.T) {
			path := writeMCP(t, c.file, c.in)
			plan, err := PrepareMCP(path, []string{c.server}, testOptions())
			if err != nil {
				t.Fatalf("PrepareMCP: %v", err)
			}
			if string(plan.Wrapped) != c.want {
				t.Fatalf("wrapped:\n%s\nwant:\n%s", plan.Wrapped, c.want)
			}
			orig := plan.Config.Server(c.server)
			if err := plan.Apply(); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got, _ := os.ReadFile(path); string(got) != c.want {
				t.Errorf("the file holds:\n%s", got)
			}
			if kept, _ := os.ReadFile(MCPOrigFile(path)); string(kept) != c.in {
				t.Errorf("the original kept is:\n%s", kept)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the file's mode: %v, %v; want 0600", fi.Mode(), err)
			}
			again, err := ParseMCPConfig(path, plan.Wrapped)
			if err != nil {
				t.Fatal(err)
			}
			l := again.Server(c.server).Launch
			if l == nil || !reflect.DeepEqual(l.Command, append([]string{orig.Command}, orig.Args...)) || !reflect.DeepEqual(l.Env, orig.Env) ||
				l.Tapedeck != testTapedeck || l.Store != testStore || l.Name != c.server {
				t.Errorf("the wrapped server reads back as %+v", l)
			}
			if _, err := PrepareMCP(path, []string{c.server}, testOptions()); !errors.Is(err, ErrWrapped) {
				t.Errorf("wrap again: %v, want ErrWrapped", err)
			}
			u, err := UnwrapMCP(path, false)
			if err != nil || !u.Restored || u.Overwrote {
				t.Fatalf("UnwrapMCP: %+v, %v", u, err)
			}
			if got, _ := os.ReadFile(path); string(got) != c.in {
				t.Errorf("unwrap left:\n%s", got)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(path), StateDir)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("unwrap left %s/: %v", StateDir, err)
			}
		})
	}
}

// TestWrapMCPRefuses: what wrap cannot do it refuses with the file, the
// reason and what to do, and writes nothing.
func TestWrapMCPRefuses(t *testing.T) {
	two := `{"mcpServers":{"a":{"command":"x"},"b":{"command":"y"},"r":{"url":"https://h/mcp"}}}`
	for _, c := range []struct {
		name, file, in string
		servers        []string
		want           error
		says           string
	}{
		{"several servers, none named", "claude_desktop_config.json", two, nil, nil, "name those to wrap with --server NAME (repeatable)"},
		{"a server it does not configure", "claude_desktop_config.json", two, []string{"c"}, ErrNoServer, `"c" in "mcpServers": it has a, b, r`},
		{"a remote server", "claude_desktop_config.json", two, []string{"r"}, ErrRemote, `it has a "url"`},
		{"a remote VS Code server", ".vscode/mcp.json", `{"servers":{"h":{"type":"sse","command":"x"}}}`, []string{"h"}, ErrRemote, `its type is "sse"`},
		{"not JSON", ".cursor/mcp.json", `{"mcpServers": {`, nil, ErrMCPConfig, "not JSON"},
		{"VS Code's key missing", ".vscode/mcp.json", `{"mcpServers":{"a":{"command":"x"}}}`, nil, ErrMCPConfig, `no "servers" member, where VS Code reads its servers`},
		{"both keys in an unknown file", "mcp.json", `{"mcpServers":{},"servers":{}}`, nil, ErrMCPConfig, `"mcpServers" and "servers"`},
		{"a server named twice", "claude_desktop_config.json", `{"mcpServers":{"a":{"command":"x"},"a":{"command":"y"}}}`, nil, ErrMCPConfig, `server "a" appears twice`},
		{"a command named twice", "claude_desktop_config.json", `{"mcpServers":{"a":{"command":"x","command":"y"}}}`, nil, ErrMCPConfig, `"command" appears twice`},
		{"args not strings", "claude_desktop_config.json", `{"mcpServers":{"a":{"command":"x","args":[1]}}}`, nil, ErrMCPConfig, `"args"`},
		{"no command", "claude_desktop_config.json", `{"mcpServers":{"a":{"args":[]}}}`, nil, ErrMCPConfig, `no "command" and no "url"`},
		{"already tapedeck's", "claude_desktop_config.json", `{"mcpServers":{"a":{"command":"/t","args":["--store","/s","record","--profile","mcp","--name","a","--","x"]}}}`,
			[]string{"a"}, ErrWrapped, `already runs /t`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeMCP(t, c.file, c.in)
			_, err := PrepareMCP(path, c.servers, testOptions())
			if err == nil || c.want != nil && !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), path) {
				t.Errorf("PrepareMCP: %v; want %v saying %q and naming the file", err, c.want, c.says)
			}
			if got, _ := os.ReadFile(path); string(got) != c.in {
				t.Errorf("the file changed")
			}
		})
	}
	t.Run("a symbolic link", func(t *testing.T) {
		real := writeMCP(t, "real.json", two)
		link := filepath.Join(t.TempDir(), "claude_desktop_config.json")
		os.Symlink(real, link)
		if _, err := PrepareMCP(link, []string{"a"}, testOptions()); !errors.Is(err, ErrSymlink) {
			t.Errorf("PrepareMCP of a link: %v, want ErrSymlink", err)
		}
	})
}

// TestUnwrapMCPRefusesAChangedFile: a file edited since wrap is not
// overwritten without --force; with it, the original comes back.
func TestUnwrapMCPRefusesAChangedFile(t *testing.T) {
	c := mcpCases()[0]
	path := writeMCP(t, c.file, c.in)
	if _, err := UnwrapMCP(path, false); !errors.Is(err, ErrNotWrapped) {
		t.Errorf("unwrap of a file never wrapped: %v", err)
	}
	plan, err := PrepareMCP(path, []string{c.server}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Apply(); err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(plan.Wrapped, []byte(`"globalShortcut": "Ctrl+Space"`), []byte(`"globalShortcut": "Alt+Space"`), 1)
	os.WriteFile(path, edited, 0o600)
	if _, err := UnwrapMCP(path, false); !errors.Is(err, ErrChanged) {
		t.Fatalf("unwrap of an edited file: %v, want ErrChanged", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, edited) {
		t.Errorf("a refused unwrap changed the file")
	}
	u, err := UnwrapMCP(path, true)
	if err != nil || !u.Overwrote {
		t.Fatalf("unwrap --force: %+v, %v", u, err)
	}
	if got, _ := os.ReadFile(path); string(got) != c.in {
		t.Errorf("unwrap --force left:\n%s", got)
	}
}

// TestDoctorMCP: doctor names each wrapped server's tapedeck, store and
// command, lists the rest, and names what would stop the client.
func TestDoctorMCP(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "server")
	os.WriteFile(server, []byte("#!/bin/sh\n"), 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in := `{"mcpServers":{"ok":{"command":"` + server + `","env":{"K":"v"}},"gone":{"command":"/nowhere/server"},"plain":{"command":"x"},"r":{"url":"https://h"}}}`
	path := writeMCP(t, "claude_desktop_config.json", in)
	if _, err := DoctorMCP(context.Background(), path, &Finder{}); !errors.Is(err, ErrNotWrapped) {
		t.Errorf("doctor of a file never wrapped: %v", err)
	}
	plan, err := PrepareMCP(path, []string{"ok", "gone"}, Options{Tapedeck: self, Store: filepath.Join(dir, "store")})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Apply(); err != nil {
		t.Fatal(err)
	}
	r, err := DoctorMCP(context.Background(), path, &Finder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Launches) != 2 || r.Client != "Claude Desktop" {
		t.Errorf("report: %d launches, client %q", len(r.Launches), r.Client)
	}
	problems := strings.Join(r.Problems(), "\n")
	if !strings.Contains(problems, "server gone: command /nowhere/server: no such file or directory: the server cannot start") || len(r.Problems()) != 1 {
		t.Errorf("problems:\n%s", problems)
	}
	var lines []string
	for _, c := range r.Checks {
		lines = append(lines, c.What+" "+c.Detail)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"server ok: env K (kept with each session)", "server plain not wrapped: x", "server r remote, not recorded", "server ok: store " + filepath.Join(dir, "store") + " (created by the first session)"} {
		if !strings.Contains(all, want) {
			t.Errorf("doctor lacks %q:\n%s", want, all)
		}
	}
	os.Remove(MCPOrigFile(path))
	r, _ = DoctorMCP(context.Background(), path, &Finder{})
	if !strings.Contains(strings.Join(r.Problems(), "\n"), "unwrap cannot restore the file") {
		t.Errorf("doctor does not miss the original: %v", r.Problems())
	}
}

// FuzzParseMCPConfig: any bytes either fail to parse or parse into servers
// whose wrap reads back as the launches of their commands and is, for
// unwrap, the wrap of the original.
func FuzzParseMCPConfig(f *testing.F) {
	for _, c := range mcpCases() {
		f.Add(c.in)
	}
	f.Add(`{"servers":{"a":{"type":"stdio","command":"x",/*c*/"args":[/*d*/]}}}`)
	f.Add(`{"mcpServers":{"a":{"command":"x","args":["--store"]}}} // end`)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ParseMCPConfig("/x/claude_desktop_config.json", []byte(in))
		if err != nil {
			return
		}
		launches := map[string]*MCPLaunch{}
		for _, s := range c.Servers {
			if s.Remote == "" && s.Launch == nil {
				launches[s.Name] = &MCPLaunch{Tapedeck: "/t", Store: "/s", Name: s.Name, Env: s.Env, Command: append([]string{s.Command}, s.Args...)}
			}
		}
		if len(launches) == 0 {
			return
		}
		wrapped := c.spliceLaunches(launches)
		again, err := ParseMCPConfig(c.Path, wrapped)
		if err != nil {
			t.Fatalf("the wrap of\n%s\ndoes not parse: %v\n%s", in, err, wrapped)
		}
		for name, l := range launches {
			if s := again.Server(name); s == nil || s.Launch == nil || !reflect.DeepEqual(s.Launch.Argv(), l.Argv()) {
				t.Fatalf("server %q of\n%s\nreads back wrong from\n%s", name, in, wrapped)
			}
		}
		if !isMCPWrapOf(c.Path, wrapped, []byte(in)) {
			t.Fatalf("unwrap would not recognise the wrap of\n%s", in)
		}
	})
}

// TestManyServersAreFoundByName: a configuration of many servers is read
// with each found by its name, and one named twice at its end is still
// refused: they were compared each with every one before it (40,000
// servers: 22 s).
func TestManyServersAreFoundByName(t *testing.T) {
	t.Parallel()
	const n = 5000
	var b strings.Builder
	b.WriteString(`{"mcpServers":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"server-%d":{"command":"x%d"}`, i, i)
	}
	c, err := ParseMCPConfig("/tmp/claude_desktop_config.json", []byte(b.String()+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, n / 2, n - 1} {
		if s := c.Server(fmt.Sprintf("server-%d", i)); s == nil || s.Command != fmt.Sprintf("x%d", i) {
			t.Errorf("server-%d: %+v", i, s)
		}
	}
	if s := c.Server("server-x"); s != nil {
		t.Errorf("a server not configured found: %+v", s)
	}
	_, err = ParseMCPConfig("/tmp/claude_desktop_config.json", []byte(b.String()+`,"server-7":{"command":"y"}}}`))
	if err == nil || !strings.Contains(err.Error(), `server "server-7" appears twice`) {
		t.Errorf("a server named twice at the end: %v", err)
	}
}
