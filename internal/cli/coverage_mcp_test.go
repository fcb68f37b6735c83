package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// exportLast exports the newest session of store as a tape in dir.
func exportLast(t *testing.T, store, path string) {
	t.Helper()
	if r := tapedeck(t, store, nil, nil, "export", "-o", path, "last"); r.code != 0 {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
}

// TestCoverageOfAnMCPServer: coverage counts the tools, resources,
// resource templates and prompts an MCP server advertised across its
// tapes against those the tapes used, and --min judges that share.
func TestCoverageOfAnMCPServer(t *testing.T) {
	t.Parallel()
	bins := buildPeers(t, "mcp/go", "mcp/client")
	t.Run("fixture", func(t *testing.T) {
		t.Parallel()
		store, tapes := t.TempDir(), t.TempDir()
		recordThrough(t, store, []string{bins["mcp/client"], "-scenario", "basic"}, bins["mcp/go"])
		exportLast(t, store, filepath.Join(tapes, "basic.jsonl"))
		recordThrough(t, store, []string{bins["mcp/client"], "-scenario", "tasks"}, bins["mcp/go"])
		exportLast(t, store, filepath.Join(tapes, "tasks.jsonl"))

		r := tapedeck(t, t.TempDir(), nil, nil, "coverage", tapes)
		if r.code != 0 {
			t.Fatalf("coverage: exit %d: %s", r.code, r.stderr)
		}
		for _, want := range []string{
			"mcp-fixture-go  (mcp server; 2 tapes: ",
			"  tools               8 of 9 advertised called: add 1, ask 1, echo 1, elicit 1, fail 1, roots 1, slow 1, task 1; never: state\n",
			"  resources           1 of 5 advertised read: fixture://notes/1 1; never: fixture://notes/2, fixture://notes/3, fixture://notes/4, fixture://notes/5\n",
			"  prompts             1 of 2 advertised got: greet 1; never: summarise\n",
			"  covered             62% (10 of 16: what the server advertised, used)\n",
		} {
			if !strings.Contains(string(r.stdout), want) {
				t.Errorf("coverage lacks %q:\n%s", want, r.stdout)
			}
		}
		if strings.Contains(string(r.stdout), "0 of 0") || strings.Contains(string(r.stdout), "100%") {
			t.Errorf("coverage ignores what the server advertised:\n%s", r.stdout)
		}

		r = tapedeck(t, t.TempDir(), nil, nil, "coverage", "--json", tapes)
		var list []struct {
			ID, Profile string
			Offered     []struct {
				Kind, Name string
				Uses       int
				Advertised bool
			}
		}
		if err := json.Unmarshal(r.stdout, &list); err != nil || len(list) != 1 {
			t.Fatalf("coverage --json: %v\n%s", err, r.stdout)
		}
		if list[0].Profile != "mcp" || len(list[0].Offered) != 16 {
			t.Errorf("coverage --json: profile %q, %d offered, want mcp, 16", list[0].Profile, len(list[0].Offered))
		}
		if r := tapedeck(t, t.TempDir(), nil, nil, "coverage", "--min", "70", tapes); r.code != 1 || !strings.Contains(string(r.stderr), "mcp-fixture-go 62%") {
			t.Errorf("coverage --min 70: exit %d, %s", r.code, r.stderr)
		}
	})
	t.Run("npm everything", func(t *testing.T) {
		t.Parallel()
		server := npmMCPServer(t, "mcp-server-everything")
		store, tapes := t.TempDir(), t.TempDir()
		recordThrough(t, store, []string{bins["mcp/client"], "-scenario", "list", "-call", `echo={"message":"hi"}`}, server...)
		exportLast(t, store, filepath.Join(tapes, "everything.jsonl"))
		r := tapedeck(t, t.TempDir(), nil, nil, "coverage", tapes)
		for _, want := range []string{"  tools               1 of 16 advertised called: echo 1; never: ", "  prompts             0 of 4 advertised got; never: "} {
			if !strings.Contains(string(r.stdout), want) {
				t.Errorf("coverage lacks %q:\n%s", want, r.stdout)
			}
		}
	})
}
