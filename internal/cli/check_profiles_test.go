package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/race"
)

// peers is buildPeers of the fixture MCP and LSP servers and their
// scripted clients (testdata/mcp, testdata/lsp), by program name: mcp-go,
// mcp-client, lsp-go, lsp-client.
func peers(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, bin := range buildPeers(t, "mcp/go", "mcp/client", "lsp/go", "lsp/client") {
		out[filepath.Base(bin)] = bin
	}
	return out
}

// peerSession is one session recorded through the binary under a
// scripted client, and the rules check must find in it: exactly these
// (none for a valid session).
type peerSession struct {
	name   string
	client []string // the client and its flags; "--" and the recording follow
	server []string
	env    []string
	skip   string // why the session cannot be recorded here, "" when it can
	rules  []string
}

// specFinding is one finding of check --json with its citation.
type specFinding struct {
	checkFinding
	Spec *string `json:"spec"`
}

// TestCheckProfiles records real MCP and LSP sessions through the binary
// (the fixture servers of testdata/mcp and testdata/lsp, the npm MCP
// servers and gopls that .ci/tools installs) and checks each as the store
// found its profile: a valid session gives no finding at all, and each
// broken mode of the fixture servers gives the rule meant for it, and
// only it, each finding citing its specification.
func TestCheckProfiles(t *testing.T) {
	t.Parallel()
	if race.Enabled {
		// check reads a session on one goroutine; recording these real
		// peers under the race detector is TestPeersReplayClean's (this
		// one took 16 s of CPU there).
		t.Skip("check's findings on real sessions are the plain run's; the race detector's recording of real peers is TestPeersReplayClean's")
	}
	bin := peers(t)
	store := t.TempDir()
	var sessions []peerSession
	// A valid session never waits out its client's timeout, so it is long:
	// under the race detector with other packages running, node had not
	// answered initialize within 5 s (CI, stop 39).
	mcpClient := func(flags ...string) []string {
		return append([]string{bin["mcp-client"], "-timeout", "60s"}, flags...)
	}
	lspClient := func(flags ...string) []string {
		return append([]string{bin["lsp-client"], "-timeout", "60s"}, flags...)
	}

	// The fixture MCP servers: every scenario of the Go one, both legacy
	// revisions and the stateless 2026-07-28 one.
	for _, sc := range []string{"basic", "list", "cursors", "tasks", "state", "concurrent"} {
		sessions = append(sessions, peerSession{name: "mcp-go-" + sc, client: mcpClient("-scenario", sc), server: []string{bin["mcp-go"]}})
	}
	sessions = append(sessions, peerSession{name: "mcp-go-2025-06-18", client: mcpClient("-version", "2025-06-18"), server: []string{bin["mcp-go"]}})
	node, nodeErr := exec.LookPath("node")
	python, pyErr := exec.LookPath("python3")
	sessions = append(sessions,
		peerSession{name: "mcp-node", client: mcpClient(), server: []string{node, "testdata/mcp/node/main.mjs"}, skip: whyNot(nodeErr, "node")},
		peerSession{name: "mcp-python", client: mcpClient(), server: []string{python, "testdata/mcp/python/main.py"}, skip: whyNot(pyErr, "python3")})

	// The npm MCP servers.
	npm := func(server string) (string, string) {
		dir := os.Getenv("TAPEDECK_MCP_NPM")
		if dir == "" {
			return "", `TAPEDECK_MCP_NPM is not set (run eval "$(.ci/tools)")`
		}
		if nodeErr != nil {
			return "", whyNot(nodeErr, "node")
		}
		path := filepath.Join(dir, "node_modules", ".bin", server)
		if _, err := os.Stat(path); err != nil {
			return "", "the npm MCP servers are not installed: " + err.Error()
		}
		return path, ""
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	everything, skip := npm("mcp-server-everything")
	sessions = append(sessions,
		peerSession{name: "npm-everything", skip: skip, server: []string{node, everything},
			client: mcpClient("-scenario", "list", "-await", "roots/list", "-call", `echo={"message":"hi"}`, "-call", `get-sum={"a":1,"b":2}`)},
		peerSession{name: "npm-everything-features", skip: skip, server: []string{node, everything},
			client: mcpClient("-scenario", "list", "-await", "roots/list",
				"-call", `get-annotated-message={"messageType":"success","includeImage":true}`,
				"-call", `get-resource-links={"count":2}`,
				"-call", `get-resource-reference={"resourceType":"Text","resourceId":1}`,
				"-call", `get-structured-content={"location":"Chicago"}`,
				"-call", `get-tiny-image={}`,
				"-call", `trigger-long-running-operation={"duration":1,"steps":3}`,
				"-call", `trigger-sampling-request={"prompt":"hi","maxTokens":10}`,
				"-call", `trigger-elicitation-request={}`,
				"-call", `get-roots-list={}`,
				"-call", `simulate-research-query={"topic":"x"}`)})
	filesystem, skip := npm("mcp-server-filesystem")
	sessions = append(sessions, peerSession{name: "npm-filesystem", skip: skip, server: []string{node, filesystem, root},
		client: mcpClient("-scenario", "list", "-root", "file://"+root, "-call", `list_allowed_directories={}`,
			"-call", `read_text_file={"path":"`+filepath.Join(root, "a.txt")+`"}`)})
	memory, skip := npm("mcp-server-memory")
	sessions = append(sessions, peerSession{name: "npm-memory", skip: skip, server: []string{node, memory},
		env:    []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")},
		client: mcpClient("-scenario", "list", "-call", `create_entities={"entities":[{"name":"a","entityType":"t","observations":["o"]}]}`, "-call", `read_graph={}`)})
	thinking, skip := npm("mcp-server-sequential-thinking")
	sessions = append(sessions, peerSession{name: "npm-sequential-thinking", skip: skip, server: []string{node, thinking},
		client: mcpClient("-scenario", "list", "-call", `sequentialthinking={"thought":"a","thoughtNumber":1,"totalThoughts":1,"nextThoughtNeeded":false}`)})

	// The fixture language server and gopls.
	sessions = append(sessions, peerSession{name: "lsp-go", client: lspClient(), server: []string{bin["lsp-go"]}})
	gopls, skip := os.Getenv("TAPEDECK_GOPLS"), ""
	if gopls == "" {
		skip = `TAPEDECK_GOPLS is not set (run eval "$(.ci/tools)")`
	} else if _, err := os.Stat(gopls); err != nil {
		skip = "gopls is not installed: " + err.Error()
	}
	sessions = append(sessions, peerSession{name: "gopls", skip: skip, client: lspClient("-lang", "go"), server: []string{gopls}})

	// Each broken mode of the fixture servers, and the rule meant for it.
	for mode, rule := range map[string]string{
		"stdout-noise":           "not-json",
		"before-init":            "before-initialized",
		"error-for-tool-failure": "tool-error-as-rpc-error",
		"unknown-progress-token": "progress-token-unknown",
		"id-reuse":               "id-reused",
		"no-capability":          "capability-undeclared",
		"bad-result-shape":       "result-invalid",
		"unanswered":             "request-unanswered",
	} {
		caps := "sampling,roots,elicitation"
		if mode == "no-capability" {
			caps = ""
		}
		// Only "unanswered" waits out its client's timeout (the point of
		// it); every other broken mode answers, and under load a 2 s
		// timeout let the client go on before initialize's answer came.
		flags := []string{"-caps", caps}
		if mode == "unanswered" {
			flags = append(flags, "-timeout", "2s")
		}
		sessions = append(sessions, peerSession{name: "mcp-broken-" + mode, client: mcpClient(flags...),
			server: []string{bin["mcp-go"], "-broken", mode}, rules: []string{rule}})
	}
	for mode, rule := range map[string]string{
		"no-content-length":    "content-length",
		"wrong-length":         "content-length",
		"notification-with-id": "notification-with-id",
		"result-and-error":     "result-and-error",
		"after-shutdown":       "after-shutdown-answer",
		"non-utf8":             "invalid-utf8",
		"before-init":          "before-initialize",
	} {
		// None of these waits out its client's timeout: each answers.
		sessions = append(sessions, peerSession{name: "lsp-broken-" + mode, client: lspClient(),
			server: []string{bin["lsp-go"], "-broken", mode}, rules: []string{rule}})
	}

	slices.SortFunc(sessions, func(a, b peerSession) int { return strings.Compare(a.name, b.name) })
	for _, s := range sessions {
		t.Run(s.name, func(t *testing.T) {
			if s.skip != "" {
				t.Skip(s.skip)
			}
			args := append(slices.Clone(s.client), "--", tapedeckBin, "--store", store, "record", "--name", s.name, "--")
			cmd := exec.Command(args[0], append(args[1:], s.server...)...)
			cmd.Env = append(os.Environ(), s.env...)
			out, err := cmd.CombinedOutput()
			if err != nil && s.rules == nil {
				t.Fatalf("the client failed a step of a valid session (%v):\n%s", err, out)
			}
			found, r := checkJSON(t, store, s.name)
			var rules []string
			for _, f := range found {
				if !slices.Contains(rules, *f.Rule) {
					rules = append(rules, *f.Rule)
				}
			}
			slices.Sort(rules)
			if !slices.Equal(rules, s.rules) {
				t.Errorf("rules found %v, want %v", rules, s.rules)
				for _, f := range found {
					t.Logf("#%d %v", *f.Seq, f)
				}
			}
			var cited []specFinding
			if err := json.Unmarshal(r.stdout, &cited); err != nil {
				t.Fatal(err)
			}
			for _, f := range cited {
				if f.Spec == nil || *f.Spec == "" {
					t.Errorf("finding %v cites no specification", f.checkFinding)
				}
			}
			errors := bytes.Contains(r.stdout, []byte(`"level": "error"`))
			if want := map[bool]int{false: 0, true: 1}[errors]; r.code != want {
				t.Errorf("check exit %d, want %d (error-level findings: %v)", r.code, want, errors)
			}
		})
	}
}

// whyNot is why a runtime cannot be used, "" when it can.
func whyNot(err error, name string) string {
	if err == nil {
		return ""
	}
	return name + " is not installed: " + err.Error()
}

// TestCheckRulesAndProfile: --rules lists every profile's rules with
// their citations (or one profile's), --profile checks a session by
// another profile's rules, and a profile that does not exist is a usage
// error.
func TestCheckRulesAndProfile(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	r := tapedeck(t, store, nil, nil, "check", "--rules")
	out := string(r.stdout)
	for _, want := range []string{"agentty  ", "mcp  ", "lsp  ", "jsonrpc  ", "content-length", "capability-undeclared", "MCP basic/lifecycle#initialization", "LSP 3.17 shutdown", "JSON-RPC 2.0 §5"} {
		if !strings.Contains(out, want) {
			t.Errorf("check --rules lacks %q:\n%s", want, out)
		}
	}
	r = tapedeck(t, store, nil, nil, "check", "--rules", "--json", "--profile", "lsp")
	var sets []struct {
		Profile string `json:"profile"`
		Rules   []struct {
			ID, Level, Host, Spec string
		} `json:"rules"`
	}
	if err := json.Unmarshal(r.stdout, &sets); err != nil || len(sets) != 1 || sets[0].Profile != "lsp" || len(sets[0].Rules) < 10 {
		t.Errorf("check --rules --json --profile lsp: exit %d, %v: %s", r.code, err, r.stdout)
	}

	// An Agentty tape read as plain JSON-RPC: its traffic is valid
	// JSON-RPC, so Agentty's own findings go.
	tape := filepath.Join("internal", "check", "testdata", "rules", "notify-dropped.jsonl")
	found, r := checkJSON(t, store, "--profile", "jsonrpc", tape)
	if r.code != 0 || len(found) != 0 {
		t.Errorf("check --profile jsonrpc: exit %d, findings %v", r.code, found)
	}
	r = tapedeck(t, store, nil, nil, "check", "--profile", "nope", tape)
	if r.code != 2 || !strings.Contains(string(r.stderr), `unknown profile "nope"`) {
		t.Errorf("check --profile nope: exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestRecordLintFindsTheProfile: record --lint on an MCP server checks it
// live by MCP's rules, found from the client's initialize: the server's
// stray stdout is MCP's not-json, and none of Agentty's rules fire.
func TestRecordLintFindsTheProfile(t *testing.T) {
	t.Parallel()
	bin := peers(t)
	store := t.TempDir()
	lint := filepath.Join(t.TempDir(), "lint.jsonl")
	cmd := exec.Command(bin["mcp-client"], "-scenario", "list", "--", tapedeckBin, "--store", store, "record", "--lint", lint, "--", bin["mcp-go"], "-broken", "stdout-noise")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	b, err := os.ReadFile(lint)
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var f struct{ Rule, Spec string }
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("lint line %q: %v", line, err)
		}
		rules = append(rules, f.Rule+" "+f.Spec)
	}
	if len(rules) != 1 || !strings.HasPrefix(rules[0], "not-json MCP 2025-11-25 basic/transports#stdio") {
		t.Errorf("lint findings %q, want one not-json citing MCP's stdio transport", rules)
	}
}
