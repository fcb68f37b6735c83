package present

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// goplsVersion is the start and the end of what gopls v0.23.0 sends as
// serverInfo.version: Go's build information as JSON (2.6 KB in full).
const goplsVersion = `{"GoVersion":"go1.26.8","Path":"golang.org/x/tools/gopls","Main":{"Path":"golang.org/x/tools/gopls","Version":"v0.23.0","Sum":"h1:Dn6mf9WXu9iLnTftDDMb9wV0c6Se7PjzEMqP0LEe08Y="},"Deps":[{"Path":"github.com/BurntSushi/toml","Version":"v1.6.0"}],"Settings":[{"Key":"GOOS","Value":"linux"}],"Version":"v0.23.0"}`

func TestPeerLabel(t *testing.T) {
	for _, c := range []struct {
		name string
		peer Peer
		want string
	}{
		{"an Agentty plugin, as before", Peer{Plugin: frame.Plugin{ID: "weather", Version: "1.0.0"}, HostVersion: "0.9.0"}, "weather@1.0.0"},
		{"an Agentty plugin named so", Peer{Profile: "agentty", Plugin: frame.Plugin{ID: "weather"}}, "weather"},
		{"nothing known", Peer{}, ""},
		{"an MCP server", Peer{Profile: "mcp", Plugin: frame.Plugin{ID: "mcp-servers/everything", Name: "Everything", Version: "2.0.0"}, Protocol: "2025-06-18", HostName: "inspector", HostVersion: "0.16.2"},
			"mcp-servers/everything@2.0.0 (mcp 2025-06-18, client inspector@0.16.2)"},
		{"an MCP server, no client", Peer{Profile: "mcp", Plugin: frame.Plugin{ID: "memory", Version: "0.6.3"}, Protocol: "2025-11-25"}, "memory@0.6.3 (mcp 2025-11-25)"},
		{"gopls and its build information", Peer{Profile: "lsp", Plugin: frame.Plugin{ID: "gopls", Version: goplsVersion}, HostName: "vscode", HostVersion: "1.96.0"},
			"gopls@v0.23.0 (lsp, client vscode@1.96.0)"},
		{"a server with no name", Peer{Profile: "lsp", HostName: "lsp-fixture-client"}, "(lsp, client lsp-fixture-client)"},
		{"a JSON-RPC peer, as a plugin always was", Peer{Profile: "jsonrpc", Plugin: frame.Plugin{ID: "weather", Version: "0.3.0"}, HostName: "x"}, "weather@0.3.0"},
		{"a JSON-RPC peer, nothing known", Peer{Profile: "jsonrpc"}, ""},
		{"a profile of a newer build", Peer{Profile: "dap", Plugin: frame.Plugin{ID: "d"}}, "d"},
		{"control bytes and lines", Peer{Profile: "mcp", Plugin: frame.Plugin{ID: "evil\x1b[2J", Version: "1.0\nrm -rf"}, Protocol: "\x07x", HostName: "c\u202e"},
			`evil\x1b[2J@1.0 (mcp \x07x, client c\u202e)`},
		{"long versions are cut", Peer{Profile: "mcp", Plugin: frame.Plugin{ID: "s", Version: strings.Repeat("9", 100)}}, "s@" + strings.Repeat("9", 23) + "… (mcp)"},
	} {
		if got := PeerLabel(c.peer); got != c.want {
			t.Errorf("%s: PeerLabel = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestShortVersion(t *testing.T) {
	for in, want := range map[string]string{
		"1.2.3":                         "1.2.3",
		goplsVersion:                    "v0.23.0",
		`{"Main":{"Version":"v1.0.0"}}`: "v1.0.0",
		`{"GoVersion":"go1.26.8"}`:      "go1.26.8",
		`{"Version":`:                   `{"Version":`,
		"v2\nbuilt by someone":          "v2",
		"  v3  ":                        "v3",
		"":                              "",
	} {
		if got := ShortVersion(in); got != want {
			t.Errorf("ShortVersion(%.40q) = %q, want %q", in, got, want)
		}
	}
}

// TestTimelineOfALanguageServer: show's lines for an LSP session name the
// server and the client in the header, keep the columns aligned however
// long the method (cutting one longer than the wide column), pair each
// answer with its request across both directions with its latency, and
// read $/progress as the work it reports on.
func TestTimelineOfALanguageServer(t *testing.T) {
	meta := &frame.Session{ID: "01lsp", Profile: "lsp", Framing: "headers", Plugin: frame.Plugin{ID: "gopls", Version: goplsVersion},
		HostName: "lsp-fixture-client", HostVersion: "1.0.0", Status: "complete"}
	raw := func(seq uint64, at int64, d frame.Dir, s string) frame.Frame {
		f := frame.Frame{Seq: seq, At: at, Dir: d, Raw: []byte(s)}
		f.SetHead([]byte("Content-Length: 1\r\n\r\n"))
		return f
	}
	frames := []frame.Frame{
		raw(1, 0, frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1}}`),
		raw(2, 213_060_000, frame.Out, `{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"gopls"}}}`),
		raw(3, 223_386_000, frame.Out, `{"jsonrpc":"2.0","id":1,"method":"window/workDoneProgress/create","params":{"token":"42"}}`),
		raw(4, 223_484_000, frame.In, `{"jsonrpc":"2.0","id":1,"result":null}`),
		raw(5, 223_752_000, frame.Out, `{"jsonrpc":"2.0","method":"$/progress","params":{"token":"42","value":{"kind":"begin","title":"Setting up workspace","message":"Loading packages...","percentage":0}}}`),
		raw(6, 1_502_586_000, frame.Out, `{"jsonrpc":"2.0","method":"$/progress","params":{"token":"42","value":{"kind":"end","message":"Finished loading packages."}}}`),
		raw(7, 1_523_641_000, frame.Out, `{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///w/main.go","diagnostics":[]}}`),
		raw(8, 1_600_000_000, frame.Out, `{"jsonrpc":"2.0","method":"textDocument/semanticTokens/full/delta/refresh","params":{}}`),
	}
	var out bytes.Buffer
	tl := NewTimeline(&out, TimelineOptions{})
	tl.Header(meta)
	for i := range frames {
		if err := tl.Frame(&frames[i]); err != nil {
			t.Fatal(err)
		}
	}
	tl.Flush()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if want := "session 01lsp · gopls@v0.23.0 (lsp, client lsp-fixture-client@1.0.0) · started"; !strings.HasPrefix(lines[0], want) {
		t.Errorf("header line = %q, want it to start %q", lines[0], want)
	}
	head := lines[1]
	summary := strings.Index(head, "SUMMARY")
	if got := strings.Index(head, "ID") - strings.Index(head, "METHOD"); got != wMethodWide {
		t.Errorf("the method column is %d wide, want %d:\n%s", got, wMethodWide, head)
	}
	rows := lines[2:]
	for _, want := range []struct {
		row  int
		text string
	}{
		{1, "213.06ms"},
		{3, "98µs"},
		{4, "begin 0% Setting up workspace: Loading packages... (token \"42\")"},
		{5, "end Finished loading packages. (token \"42\")"},
		{6, "textDocument/publishDiagnostics "},
		{7, "textDocument/semanticTokens/fu… "},
	} {
		if !strings.Contains(rows[want.row], want.text) {
			t.Errorf("row %d lacks %q:\n%s", want.row+1, want.text, rows[want.row])
		}
	}
	for i, row := range rows {
		// Every summary starts in the SUMMARY column: nothing pushed it.
		if r := []rune(row); len(r) < summary || string(r[summary-1]) != " " {
			t.Errorf("row %d is out of line with the header:\n%s\n%s", i+1, head, row)
		}
	}
}
