package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/browsertest"
)

// lsRow is the row of ls's output for the newest session.
func lsRow(t *testing.T, store string) string {
	t.Helper()
	r := tapedeck(t, store, nil, nil, "ls")
	rows := strings.Split(strings.TrimSpace(string(r.stdout)), "\n")
	if r.code != 0 || len(rows) < 2 {
		t.Fatalf("ls: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return rows[1]
}

// TestLookingAtALanguageServer: a session of the fixture language server,
// recorded through the real binary with the scripted client outside it,
// lists with the server and the client; ls --json has the profile, the
// framing and the client; show prints a timeline of requests both ways
// with each answer's latency, notifications and $/progress read as
// progress, every row in line with the header; show --html says the same.
func TestLookingAtALanguageServer(t *testing.T) {
	t.Parallel()
	bins := buildPeers(t, "lsp/go", "lsp/client")
	store := t.TempDir()
	recordThrough(t, store, []string{bins["lsp/client"]}, bins["lsp/go"])

	if row, want := lsRow(t, store), "  lsp-fixture-go@1.0.0 (lsp, client lsp-fixture-client@1.0.0)  "; !strings.Contains(row, want) {
		t.Errorf("ls row = %q, want it to hold %q", row, want)
	}
	r := tapedeck(t, store, nil, nil, "ls", "--json")
	var list []struct {
		Profile, Framing, HostName, HostVersion string
		Plugin                                  struct{ ID, Version string }
	}
	if err := json.Unmarshal(r.stdout, &list); err != nil || len(list) != 1 {
		t.Fatalf("ls --json: %v\n%s", err, r.stdout)
	}
	if got := list[0]; got.Profile != "lsp" || got.Framing != "headers" || got.HostName != "lsp-fixture-client" || got.HostVersion != "1.0.0" ||
		got.Plugin.ID != "lsp-fixture-go" || got.Plugin.Version != "1.0.0" {
		t.Errorf("ls --json = %+v", got)
	}

	r = tapedeck(t, store, nil, nil, "show", "last")
	if r.code != 0 {
		t.Fatalf("show: exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(string(r.stdout), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "session ") || !strings.Contains(lines[0], " · lsp-fixture-go@1.0.0 (lsp, client lsp-fixture-client@1.0.0) · ") {
		t.Errorf("show's header line = %q", lines[0])
	}
	var head string
	var rows []string
	for i, l := range lines {
		if strings.HasPrefix(l, "SEQ ") {
			head, rows = l, lines[i+1:]
		}
	}
	if head == "" {
		t.Fatalf("show printed no column heads:\n%s", r.stdout)
	}
	summary := strings.Index(head, "SUMMARY")
	latency := regexp.MustCompile(`^\d+(\.\d+)?(µs|ms|s)$`)
	seen := map[string]bool{}
	for _, row := range rows {
		f := strings.Fields(row)
		if len(f) < 4 || f[3] == "stderr" || f[2] == "•" {
			continue
		}
		cells := []rune(row)
		if len(cells) < summary || cells[summary-1] != ' ' {
			t.Errorf("row out of line with the header:\n%s\n%s", head, row)
		}
		kind, method := f[3], f[4]
		switch {
		case kind == "response" && (f[2] == "←" && method == "textDocument/hover" || f[2] == "→" && method == "window/workDoneProgress/create"):
			if !latency.MatchString(f[6]) {
				t.Errorf("the answer to %s has no latency: %q", method, row)
			}
			seen[f[2]+method] = true
		case kind == "request" && f[2] == "←" && method == "client/registerCapability":
			seen["server request"] = true
		case kind == "notification" && method == "$/progress":
			if !strings.Contains(row, `(token "fixture-`) {
				t.Errorf("$/progress is not read as progress: %q", row)
			}
			seen[f[5]] = true // begin, end
		case kind == "notification" && method == "textDocument/publishDiagnostics":
			seen["diagnostics"] = true
		}
	}
	for _, want := range []string{"←textDocument/hover", "→window/workDoneProgress/create", "server request", "begin", "end", "diagnostics"} {
		if !seen[want] {
			t.Errorf("show's timeline lacks %s:\n%s", want, r.stdout)
		}
	}

	t.Run("html", func(t *testing.T) {
		page := filepath.Join(t.TempDir(), "lsp.html")
		if r := tapedeck(t, store, nil, nil, "show", "--html", page, "last"); r.code != 0 {
			t.Fatalf("show --html: exit %d: %s", r.code, r.stderr)
		}
		drawnByThePlainRun(t)
		ctx := browsertest.Start(t)
		browsertest.OpenFile(t, ctx, page, "body[data-ready]")
		meta := browsertest.Eval[string](t, ctx, `document.querySelector('.meta').textContent`)
		if !strings.HasPrefix(meta, "lsp server lsp-fixture-go 1.0.0  ·  client lsp-fixture-client 1.0.0  ·  ") {
			t.Errorf("the page's meta line = %q", meta)
		}
		if lane := browsertest.Eval[string](t, ctx, `document.querySelectorAll('.lanes-head .lane')[1].textContent`); lane != "server (and stderr)" {
			t.Errorf("the peer's lane is %q", lane)
		}
		if tabs := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('nav.tabs .tab')].map(b => b.textContent).join(', ')`); tabs != "Timeline, Session" {
			t.Errorf("tabs: %s (no panels and no Agentty findings for a language server)", tabs)
		}
		if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('.timeline .row').length`); n < 20 {
			t.Errorf("the page's timeline shows %d rows", n)
		}
	})
}

// TestLsNamesGopls: gopls sends 2.6 KB of build information as its
// version; ls and show print the version it holds.
func TestLsNamesGopls(t *testing.T) {
	t.Parallel()
	gopls := goplsPath(t)
	bins := buildPeers(t, "lsp/client")
	store := t.TempDir()
	recordThrough(t, store, []string{bins["lsp/client"], "-lang", "go"}, gopls)
	row := lsRow(t, store)
	if want := "  gopls@v0.23.0 (lsp, client lsp-fixture-client@1.0.0)  "; !strings.Contains(row, want) || len(row) > 200 {
		t.Errorf("ls row = %q, want it to hold %q", row, want)
	}
	r := tapedeck(t, store, nil, nil, "show", "last")
	if first, _, _ := strings.Cut(string(r.stdout), "\n"); !strings.Contains(first, " · gopls@v0.23.0 (lsp, client lsp-fixture-client@1.0.0) · ") || len(first) > 200 {
		t.Errorf("show's header line = %q", first)
	}
}

// TestLsNamesAnMCPServer: an MCP session lists with the server's name and
// version, the protocol revision and the client; show reads its progress
// notifications.
func TestLsNamesAnMCPServer(t *testing.T) {
	t.Parallel()
	bins := buildPeers(t, "mcp/go", "mcp/client")
	t.Run("fixture", func(t *testing.T) {
		t.Parallel()
		store := t.TempDir()
		recordThrough(t, store, []string{bins["mcp/client"], "-scenario", "basic"}, bins["mcp/go"])
		if row, want := lsRow(t, store), "  mcp-fixture-go@1.0.0 (mcp 2025-11-25, client mcp-fixture-client@1.0.0)  "; !strings.Contains(row, want) {
			t.Errorf("ls row = %q, want it to hold %q", row, want)
		}
		r := tapedeck(t, store, nil, nil, "show", "last")
		if !regexp.MustCompile(`notifications/progress +1/3 step 1 of 3 \(token "slow-1"\)`).Match(r.stdout) {
			t.Errorf("show does not read MCP's progress:\n%s", r.stdout)
		}
	})
	t.Run("npm everything", func(t *testing.T) {
		t.Parallel()
		server := npmMCPServer(t, "mcp-server-everything")
		store := t.TempDir()
		recordThrough(t, store, []string{bins["mcp/client"], "-scenario", "list"}, server...)
		if row, want := lsRow(t, store), "  mcp-servers/everything@2.0.0 (mcp 2025-11-25, client mcp-fixture-client@1.0.0)  "; !strings.Contains(row, want) {
			t.Errorf("ls row = %q, want it to hold %q", row, want)
		}
	})
}
