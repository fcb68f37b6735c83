package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The proofs of issues 34 and 35 end to end: real MCP servers and language
// servers, recorded through the real binary by the fixture clients of
// testdata/mcp/client and testdata/lsp/client, then replayed by the real
// binary, several at once. The npm servers and gopls are those .ci/tools
// installs (TAPEDECK_MCP_NPM, TAPEDECK_GOPLS); a case whose peer is not
// here skips, saying what is missing.

// peerCase is one peer recorded by a scripted client and replayed.
type peerCase struct {
	name   string
	needs  []string                  // programs or variables that must be here: "node", "python3", "$TAPEDECK_GOPLS", …
	client []string                  // the client and its flags, before "--"
	server []string                  // the server's argv
	record []string                  // record's flags
	env    func(dir string) []string // the recording's extra variables
	// config is the tapedeck.json written beside the tape ("" for none).
	config string
	// replay gives the flags of replay number i (from 0) in dir, the
	// test's folder.
	replay func(dir string, i int) []string
	// setup prepares dir before the recording.
	setup func(t *testing.T, dir string)
}

// missing says what a case needs that is not here ("" when all is).
func (c *peerCase) missing() string {
	for _, n := range c.needs {
		if v, ok := strings.CutPrefix(n, "$"); ok {
			if os.Getenv(v) == "" {
				return v + " is not set (eval \"$(.ci/tools)\" installs the pinned npm MCP servers and gopls)"
			}
			continue
		}
		if _, err := exec.LookPath(n); err != nil {
			return n + " is not installed"
		}
	}
	return ""
}

// abs is path made absolute (the tests run from the module root; the
// recordings in a folder of their own).
func abs(path string) string {
	a, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return a
}

// npmServer is the argv of one of the npm MCP servers .ci/tools installs.
func npmServer(name string) []string {
	return []string{"node", filepath.Join(os.Getenv("TAPEDECK_MCP_NPM"), "node_modules", ".bin", name)}
}

// recordPeer records c in dir through the real binary and exports the
// session as dir/NAME.jsonl, with c.config beside it.
func recordPeer(t *testing.T, dir string, c *peerCase) string {
	t.Helper()
	store := filepath.Join(dir, "store")
	name := strings.ReplaceAll(c.name, "/", "-")
	argv := append(append(append(append(append([]string{}, c.client[1:]...), "--", tapedeckBin, "--store", store, "record", "--name", name), c.record...), "--"), c.server...)
	cmd := exec.Command(c.client[0], argv...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	if c.env != nil {
		cmd.Env = append(cmd.Env, c.env(dir)...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("record %s: %v\n%s\n%s", c.name, err, out.Bytes(), errb.Bytes())
	}
	tape := filepath.Join(dir, name+".jsonl")
	if r := tapedeckBinary(t, store, nil, nil, "export", name, "-o", tape); r.code != 0 {
		t.Fatalf("export %s: exit %d\n%s", name, r.code, r.stderr)
	}
	if c.config != "" {
		if err := os.WriteFile(filepath.Join(dir, "tapedeck.json"), []byte(c.config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return tape
}

// replayOutcome is what replay --json says of one replay.
type replayOutcome struct {
	Same        bool     `json:"same"`
	Notes       []string `json:"notes"`
	Differences []struct {
		Kind string `json:"kind"`
		What string `json:"what"`
	} `json:"differences"`
}

// replayRounds replays tape n times through the real binary, atOnce at a
// time (replay i with extra(i) flags), and returns how many were the same
// as recorded; it logs what the first failures said.
func replayRounds(t *testing.T, tape string, n, atOnce int, extra func(i int) []string) int {
	t.Helper()
	results := make([]result, n)
	sem := make(chan struct{}, atOnce)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			args := []string{"--store", t.TempDir(), "replay", "--json", tape}
			if extra != nil {
				args = append(args, extra(i)...)
			}
			cmd := exec.Command(tapedeckBin, args...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			results[i] = result{stdout: out.Bytes(), stderr: errb.Bytes()}
			if ee, ok := err.(*exec.ExitError); ok {
				results[i].code = ee.ExitCode()
			} else if err != nil {
				results[i].code = -1
				results[i].stderr = append(results[i].stderr, err.Error()...)
			}
		}()
	}
	wg.Wait()
	clean, told := 0, 0
	for i, r := range results {
		var o replayOutcome
		if r.code == 0 && json.Unmarshal(r.stdout, &o) == nil && o.Same {
			clean++
			continue
		}
		if told++; told <= 2 {
			t.Logf("replay %d of %d: exit %d\n%s\n%s", i+1, n, r.code, r.stdout, r.stderr)
		}
	}
	return clean
}

// TestPeersReplayClean records each real peer once and replays it
// (rounds, 10 at once): every replay must be the same as the recording.
// Values the server chose itself (task ids, cursors, the signed
// requestState, progress tokens, registration ids) are carried back;
// independent streams may interleave; a language server's progress and
// log lines come as often as they come. At full strength (TAPEDECK_SOAK)
// 20 replays of each; the plain run a few.
func TestPeersReplayClean(t *testing.T) {
	rounds := soakRounds(t, 20, 3)
	soakLoad(t)
	bin := peers(t)
	// Every session here is valid: a server's answer never waits out the
	// client's timeout, so it is long (under load, python3 with the pinned
	// clock took over 10 s to answer initialize).
	mcpClient := func(args ...string) []string {
		return append([]string{bin["mcp-client"], "-timeout", "60s"}, args...)
	}
	// The Go MCP fixture draws its ids, cursors and signing key from
	// crypto/rand and never reads the clock: no pinned clock reaches it.
	cases := []*peerCase{
		{name: "mcp-go/tasks", client: mcpClient("-scenario", "tasks"), server: []string{bin["mcp-go"]}},
		{name: "mcp-go/cursors", client: mcpClient("-scenario", "cursors"), server: []string{bin["mcp-go"]}},
		{name: "mcp-go/state", client: mcpClient("-scenario", "state"), server: []string{bin["mcp-go"]}},
		{name: "mcp-go/concurrent", client: mcpClient("-scenario", "concurrent"), server: []string{bin["mcp-go"]}},
		{name: "mcp-node", needs: []string{"node"}, client: mcpClient("-scenario", "basic", "-call", `now={}`),
			server: []string{"node", abs("testdata/mcp/node/main.mjs")}, record: []string{"--pin-clock"}},
		{name: "mcp-python", needs: []string{"python3"}, client: mcpClient("-scenario", "basic", "-call", `now={}`),
			server: []string{"python3", abs("testdata/mcp/python/main.py")}, record: []string{"--pin-clock"}},
		{name: "server-everything", needs: []string{"node", "$TAPEDECK_MCP_NPM"},
			client: mcpClient("-scenario", "list", "-call", `echo={"message":"hi"}`, "-call", `get-sum={"a":2,"b":3}`,
				"-call", `trigger-long-running-operation={"duration":1,"steps":3}`, "-call", `get-structured-content={"location":"New York"}`),
			server: npmServer("mcp-server-everything")},
		// The memory server keeps its graph in MEMORY_FILE_PATH: the
		// recording keeps the variable (record --env); each replay gets
		// a fresh copy of the (empty) file it started from, with --env.
		{name: "server-memory", needs: []string{"node", "$TAPEDECK_MCP_NPM"},
			client: mcpClient("-scenario", "list",
				"-call", `create_entities={"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program"]}]}`,
				"-call", `read_graph={}`, "-call", `search_nodes={"query":"Ada"}`),
			server: npmServer("mcp-server-memory"), record: []string{"--env", "MEMORY_FILE_PATH"},
			env: func(dir string) []string { return []string{"MEMORY_FILE_PATH=" + filepath.Join(dir, "recorded.jsonl")} },
			replay: func(dir string, i int) []string {
				return []string{"--env", fmt.Sprintf("MEMORY_FILE_PATH=%s/replay-%d.jsonl", dir, i)}
			}},
		{name: "server-sequential-thinking", needs: []string{"node", "$TAPEDECK_MCP_NPM"},
			client: mcpClient("-scenario", "list",
				"-call", `sequentialthinking={"thought":"first","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":2}`,
				"-call", `sequentialthinking={"thought":"second","nextThoughtNeeded":false,"thoughtNumber":2,"totalThoughts":2}`),
			server: npmServer("mcp-server-sequential-thinking")},
		{name: "lsp-go", client: []string{bin["lsp-client"]}, server: []string{bin["lsp-go"]}},
		// gopls's log lines hold the wall clock and how long a load took,
		// and its file watchers come from a map in any order: its own
		// noise, kept in tapedeck.json (replay --runs proposes the first).
		{name: "gopls", needs: []string{"$TAPEDECK_GOPLS"},
			client: []string{bin["lsp-client"], "-lang", "go", "-root", "workspace"}, server: []string{os.Getenv("TAPEDECK_GOPLS")},
			config: `{"ignore": ["window/logMessage:params", "client/registerCapability:params.registrations[*].registerOptions.watchers"]}`,
			setup:  writeGoWorkspace},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			soakSubtest(t)
			if why := c.missing(); why != "" {
				t.Skip(why)
			}
			dir := t.TempDir()
			if c.setup != nil {
				c.setup(t, dir)
			}
			tape := recordPeer(t, dir, c)
			var extra func(int) []string
			if c.replay != nil {
				extra = func(i int) []string { return c.replay(dir, i) }
			}
			began := time.Now()
			clean := replayRounds(t, tape, rounds, 10, extra)
			t.Logf("%s: %d/%d replays clean (%d at once, %v)", c.name, clean, rounds, min(rounds, 10), time.Since(began).Round(time.Millisecond))
			if clean != rounds {
				t.Errorf("%s: %d of %d replays clean, want all", c.name, clean, rounds)
			}
		})
	}
}

// writeGoWorkspace writes the Go module gopls works on into dir/workspace.
func writeGoWorkspace(t *testing.T, dir string) {
	t.Helper()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":  "module example.com/fixture\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc greet(name string) string {\n\treturn \"hello, \" + name\n}\n\nfunc main() {\n\tfmt.Println(greet(\"world\"))\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChangedHoverFailsWithTheWordDiff: a language server whose hover
// text changed fails its replay within seconds, and the replay shows the
// change as a word diff.
func TestChangedHoverFailsWithTheWordDiff(t *testing.T) {
	t.Parallel()
	bin := peers(t)
	dir := t.TempDir()
	tape := recordPeer(t, dir, &peerCase{name: "lsp-go", client: []string{bin["lsp-client"]}, server: []string{bin["lsp-go"]}})
	began := time.Now()
	r := tapedeckBinary(t, t.TempDir(), nil, nil, "replay", tape, "--env", "LSP_FIXTURE_HOVER_NOUN=occurrences, counted word by word,")
	took := time.Since(began)
	out := string(r.stdout)
	if r.code != 1 || !strings.Contains(out, "1 difference") || !strings.Contains(out, "changed   response to textDocument/hover") {
		t.Fatalf("exit %d, want 1 and one changed hover\n%s\n%s", r.code, out, r.stderr)
	}
	if !strings.Contains(out, "result.contents.value:") || !strings.Contains(out, "[-occurrence(s)-]{+occurrences, counted word by word,+}") {
		t.Errorf("no word diff of the hover text:\n%s", out)
	}
	if took > 10*time.Second {
		t.Errorf("the failing replay took %v, want seconds", took)
	}
	t.Logf("a changed hover failed in %v", took.Round(time.Millisecond))
}

// TestTheEnvListTravels: record keeps the variables the tapedeck.json of
// its folder lists, a replay applies them, and a replay whose recording
// lacks one that tapedeck.json lists says so.
func TestTheEnvListTravels(t *testing.T) {
	t.Parallel()
	bin := peers(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tapedeck.json"), []byte(`{"env": ["FIXTURE_NOTE"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &peerCase{name: "kept", client: []string{bin["mcp-client"], "-scenario", "basic"}, server: []string{bin["mcp-go"]},
		env: func(string) []string { return []string{"FIXTURE_NOTE=kept with the session"} }}
	tape := recordPeer(t, dir, c)
	head, err := os.ReadFile(tape)
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(head), "\n"); !strings.Contains(first, `"env":{"FIXTURE_NOTE":"kept with the session"}`) {
		t.Fatalf("the tape's header does not keep FIXTURE_NOTE:\n%s", first)
	}
	r := tapedeckBinary(t, t.TempDir(), nil, nil, "replay", "-v", tape)
	if r.code != 0 || !strings.Contains(string(r.stderr), "FIXTURE_NOTE=kept with the session") {
		t.Errorf("replay -v: exit %d, want 0 and FIXTURE_NOTE applied\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// A list that names a variable the recording lacks.
	if err := os.WriteFile(filepath.Join(dir, "tapedeck.json"), []byte(`{"env": ["FIXTURE_NOTE", "FIXTURE_DATA_DIR"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = tapedeckBinary(t, t.TempDir(), nil, nil, "replay", "--json", tape)
	var o replayOutcome
	if err := json.Unmarshal(r.stdout, &o); err != nil || r.code != 0 || !o.Same {
		t.Fatalf("replay: exit %d, %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if n := strings.Join(o.Notes, "\n"); !strings.Contains(n, "ran without the recorded FIXTURE_DATA_DIR") || strings.Contains(n, "recorded FIXTURE_NOTE") {
		t.Errorf("notes\n%s\nwant one about FIXTURE_DATA_DIR alone", n)
	}
}
