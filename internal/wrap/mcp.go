package wrap

// MCP clients' configuration files: the servers a client runs and how,
// read for wrap, unwrap and doctor, and the byte-level edit that puts
// tapedeck in front of a server. The clients and their files:
//
//   - Claude Desktop: claude_desktop_config.json, servers under
//     "mcpServers", each {"command", "args", "env"};
//   - VS Code: .vscode/mcp.json (or mcp.json in the user profile), servers
//     under "servers", each {"type": "stdio", "command", "args", "env",
//     "envFile", …} or a remote one {"type": "http"|"sse", "url", …}; the
//     file may hold comments and trailing commas (JSON with comments);
//   - Cursor: .cursor/mcp.json (or ~/.cursor/mcp.json), servers under
//     "mcpServers", each {"command", "args", "env"} or {"url", …}.
//
// Any other file whose top-level object has "mcpServers" or "servers" (a
// project's .mcp.json) is read the same way.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tapedeck/tapedeck/internal/jsonscan"
)

// Errors of the MCP side, each wrapped with the file and what to do.
var (
	ErrMCPConfig = errors.New("bad MCP configuration")
	ErrNoServer  = errors.New("no such server")
	ErrRemote    = errors.New("remote server")
)

// mcpClient is a kind of MCP client configuration: who reads it, the file
// it is known by (a path suffix) and the member that holds its servers.
type mcpClient struct{ name, file, key string }

// mcpClients are the configuration files tapedeck knows by name.
func mcpClients() []mcpClient {
	return []mcpClient{
		{"Claude Desktop", "claude_desktop_config.json", "mcpServers"},
		{"VS Code", ".vscode/mcp.json", "servers"},
		{"Cursor", ".cursor/mcp.json", "mcpServers"},
	}
}

// MCPConfig is an MCP client's configuration file as wrap reads it.
type MCPConfig struct {
	Path   string // absolute
	Client string // who reads it: "Claude Desktop", "VS Code", "Cursor", "an MCP client"
	Key    string // the member of the top-level object that holds the servers
	// Servers are the servers it configures, in the file's order.
	Servers []MCPServer

	raw   []byte // the file
	plain []byte // raw with comments and trailing commas blanked: valid JSON at raw's offsets
	// byName are the places of Servers by name: a configuration of many
	// servers was read in time of their number squared (40,000: 22 s),
	// each compared with every one before it.
	byName map[string]int
}

// MCPServer is one server of a configuration.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	// Env are the names of the variables its "env" sets, sorted.
	Env []string
	// Remote says why the client does not start it as a process (it has a
	// "url", or a "type" other than stdio); "" for a stdio server.
	Remote string
	// Launch is what it runs through tapedeck, nil when it is not wrapped.
	Launch *MCPLaunch

	obj, cmd, args member // its members (cmd and args zero when absent)
	hasArgs        bool
}

// MCPLaunch is a server's command when tapedeck is in front of it:
// Tapedeck with the store Store records the session as profile mcp under
// the name Name (and with a pinned clock, and the variables Env kept with
// it) around Command, the server's own command line.
type MCPLaunch struct {
	Tapedeck, Store, Name string
	PinClock              bool
	Env                   []string
	Command               []string
}

// Argv is the whole command line the client runs: the config's "command"
// then its "args".
func (l *MCPLaunch) Argv() []string {
	argv := []string{l.Tapedeck, "--store", l.Store, "record", "--profile", "mcp", "--name", l.Name}
	if l.PinClock {
		argv = append(argv, "--pin-clock")
	}
	for _, e := range l.Env {
		argv = append(argv, "--env", e)
	}
	return append(append(argv, "--"), l.Command...)
}

// parseMCPLaunch reads a command line Argv wrote, or reports false.
func parseMCPLaunch(argv []string) (*MCPLaunch, bool) {
	if len(argv) < 6 || argv[1] != "--store" || argv[3] != "record" {
		return nil, false
	}
	l := &MCPLaunch{Tapedeck: argv[0], Store: argv[2]}
	profile, named := "", false
	for i := 4; i < len(argv); i++ {
		switch argv[i] {
		case "--pin-clock":
			l.PinClock = true
			continue
		case "--":
			l.Command = argv[i+1:]
			if profile != "mcp" || !named || len(l.Command) == 0 {
				return nil, false
			}
			return l, true
		}
		if i+1 >= len(argv) {
			return nil, false
		}
		switch argv[i] {
		case "--profile":
			profile = argv[i+1]
		case "--name":
			l.Name, named = argv[i+1], true
		case "--env":
			l.Env = append(l.Env, argv[i+1])
		default:
			return nil, false
		}
		i++
	}
	return nil, false
}

// ParseMCPConfig reads the bytes of the configuration file at path
// (absolute). It fails (wrapping ErrMCPConfig) on anything that is not
// one JSON object (comments and trailing commas allowed), one without
// "mcpServers" or "servers" (or with both), a server that is not an
// object, and a command or args that are not a string and an array of
// strings; a server member named twice is refused, since a byte-level
// edit could not tell which one the client reads.
func ParseMCPConfig(path string, raw []byte) (*MCPConfig, error) {
	c := &MCPConfig{Path: path, raw: raw, plain: plainJSON(raw), Client: "an MCP client"}
	if !json.Valid(c.plain) {
		return nil, fmt.Errorf("%w: not JSON (comments and trailing commas aside)", ErrMCPConfig)
	}
	open := jsonscan.SkipSpace(c.plain, 0)
	if c.plain[open] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMCPConfig)
	}
	top, err := scanMembers(c.plain, open, ErrMCPConfig)
	if err != nil {
		return nil, err
	}
	for _, k := range mcpClients() {
		if strings.HasSuffix(filepath.ToSlash(path), "/"+k.file) || filepath.Base(path) == k.file {
			c.Client, c.Key = k.name, k.key
		}
	}
	var found []member
	for _, m := range top {
		if c.Key == m.key || c.Key == "" && (m.key == "mcpServers" || m.key == "servers") {
			found = append(found, m)
		}
	}
	switch {
	case len(found) == 0 && c.Key != "":
		return nil, fmt.Errorf("%w: no %q member, where %s reads its servers", ErrMCPConfig, c.Key, c.Client)
	case len(found) == 0:
		return nil, fmt.Errorf("%w: no \"mcpServers\" or \"servers\" member", ErrMCPConfig)
	case len(found) > 1:
		return nil, fmt.Errorf("%w: %q and %q: the servers are in one member; keep one", ErrMCPConfig, found[0].key, found[1].key)
	}
	servers := found[0]
	c.Key = servers.key
	if c.plain[servers.valStart] != '{' {
		return nil, fmt.Errorf("%w: %q is not an object of servers", ErrMCPConfig, c.Key)
	}
	entries, err := scanMembers(c.plain, servers.valStart, ErrMCPConfig)
	if err != nil {
		return nil, err
	}
	c.byName = make(map[string]int, len(entries))
	for _, e := range entries {
		s, err := c.server(e)
		if err != nil {
			return nil, fmt.Errorf("%w: server %q: %w", ErrMCPConfig, e.key, err)
		}
		if _, twice := c.byName[s.Name]; twice {
			return nil, fmt.Errorf("%w: server %q appears twice: keep one", ErrMCPConfig, s.Name)
		}
		c.byName[s.Name] = len(c.Servers)
		c.Servers = append(c.Servers, s)
	}
	return c, nil
}

// server reads the server whose member in the servers object is e.
func (c *MCPConfig) server(e member) (MCPServer, error) {
	s := MCPServer{Name: e.key, obj: e}
	if c.plain[e.valStart] != '{' {
		return s, errors.New("not an object")
	}
	ms, err := scanMembers(c.plain, e.valStart, ErrMCPConfig)
	if err != nil {
		return s, err
	}
	seen := map[string]bool{}
	var typ string
	for _, m := range ms {
		v := c.plain[m.valStart:m.valEnd]
		switch m.key {
		case "command", "args", "env", "type", "url":
		default:
			continue
		}
		if seen[m.key] {
			return s, fmt.Errorf("%q appears twice: keep one", m.key)
		}
		seen[m.key] = true
		var err error
		switch m.key {
		case "command":
			s.cmd, err = m, json.Unmarshal(v, &s.Command)
		case "args":
			s.args, s.hasArgs = m, true
			if err = json.Unmarshal(v, &s.Args); err == nil && v[0] != '[' {
				err = errors.New("not an array")
			}
		case "env":
			var env map[string]json.RawMessage
			if json.Unmarshal(v, &env) == nil {
				for k := range env {
					s.Env = append(s.Env, k)
				}
				slices.Sort(s.Env)
			}
		case "type":
			err = json.Unmarshal(v, &typ)
		case "url":
			s.Remote = "it has a \"url\": the client connects to it, there is no process to record"
		}
		if err != nil {
			return s, fmt.Errorf("%q: %s is not what it should be (%v)", m.key, v, err)
		}
	}
	switch {
	case s.Remote != "":
	case typ != "" && typ != "stdio":
		s.Remote = fmt.Sprintf("its type is %q: the client connects to it, there is no process to record", typ)
	case !seen["command"]:
		return s, errors.New(`no "command" and no "url"`)
	case s.Command == "":
		return s, errors.New(`"command" is empty`)
	default:
		s.Launch, _ = parseMCPLaunch(append([]string{s.Command}, s.Args...))
	}
	return s, nil
}

// Server returns the server named name, or nil.
func (c *MCPConfig) Server(name string) *MCPServer {
	if i, ok := c.byName[name]; ok {
		return &c.Servers[i]
	}
	return nil
}

// spliceLaunches returns the configuration with each server of launches
// (by name) running its launch: its "command" becomes the launch's first
// word, and the rest go before its own arguments in "args" (inserted
// after "command" when it has none), each new element written with the
// spacing the array already uses. Every other byte stays as it was.
func (c *MCPConfig) spliceLaunches(launches map[string]*MCPLaunch) []byte {
	type edit struct {
		at, end int
		text    []byte
	}
	var edits []edit
	for i := range c.Servers {
		s := &c.Servers[i]
		l := launches[s.Name]
		if l == nil {
			continue
		}
		argv := l.Argv()
		edits = append(edits, edit{s.cmd.valStart, s.cmd.valEnd, jsonString(argv[0])})
		words := make([][]byte, len(argv)-1-len(s.Args))
		for j, w := range argv[1 : len(argv)-len(s.Args)] {
			words[j] = jsonString(w)
		}
		switch {
		case !s.hasArgs:
			text := []byte(",")
			text = append(text, c.memberGap(s.cmd)...)
			text = append(text, `"args"`...)
			text = append(text, c.colonGap(s.cmd)...)
			text = append(text, newArray(words)...)
			edits = append(edits, edit{s.cmd.valEnd, s.cmd.valEnd, text})
		case len(s.Args) == 0:
			edits = append(edits, edit{s.args.valStart, s.args.valEnd, newArray(words)})
		default:
			first := jsonscan.SkipSpace(c.plain, s.args.valStart+1)
			gap := c.raw[s.args.valStart+1 : first]
			sep := []byte(", ")
			if bytes.ContainsAny(gap, "\n") && blank(gap) {
				sep = append([]byte(","), gap...)
			}
			var text []byte
			for _, w := range words {
				text = append(append(text, w...), sep...)
			}
			edits = append(edits, edit{first, first, text})
		}
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.at - b.at })
	var out bytes.Buffer
	pos := 0
	for _, e := range edits {
		out.Write(c.raw[pos:e.at])
		out.Write(e.text)
		pos = e.end
	}
	out.Write(c.raw[pos:])
	return out.Bytes()
}

// memberGap is the white space that goes before a new member inserted
// after m: a line break and m's indentation when m starts its own line,
// else one space.
func (c *MCPConfig) memberGap(m member) []byte {
	line := bytes.LastIndexByte(c.raw[:m.keyStart], '\n') + 1
	indent := c.raw[line:m.keyStart]
	if line == 0 || !blank(indent) {
		return []byte(" ")
	}
	nl := "\n"
	if line >= 2 && c.raw[line-2] == '\r' {
		nl = "\r\n"
	}
	return append([]byte(nl), indent...)
}

// colonGap is the ':' with the spacing m's own colon has.
func (c *MCPConfig) colonGap(m member) []byte {
	if g := c.raw[m.keyEnd:m.valStart]; blank(bytes.Replace(g, []byte(":"), nil, 1)) {
		return g
	}
	return []byte(": ")
}

// newArray is a one-line JSON array of the encoded words.
func newArray(words [][]byte) []byte {
	return append(append([]byte("["), bytes.Join(words, []byte(", "))...), ']')
}

// blank reports whether b is only JSON white space.
func blank(b []byte) bool {
	return len(bytes.TrimLeft(b, " \t\r\n")) == 0
}

// plainJSON returns raw with what JSON with comments adds to JSON blanked,
// byte for byte, so that offsets stay: // and /* */ comments (their line
// breaks kept) and a comma before a closing '}' or ']'.
func plainJSON(raw []byte) []byte {
	b := bytes.Clone(raw)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			end, _ := jsonscan.SkipString(b, i)
			i = end - 1
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return b // never closed: not JSON, as the caller will find
			}
			for j := i; j < i+2+end+2; j++ {
				if b[j] != '\n' && b[j] != '\r' {
					b[j] = ' '
				}
			}
			i += end + 3
		}
	}
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end, _ := jsonscan.SkipString(b, i)
			i = end - 1
		case ',':
			if j := jsonscan.SkipSpace(b, i+1); j < len(b) && (b[j] == '}' || b[j] == ']') {
				b[i] = ' '
			}
		}
	}
	return b
}
