package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRecordWithAHostScript: record --host drives a plugin from its script,
// with the waiting rule of replay, into an ordinary session: real latencies,
// nothing check would call dropped, and a tape that replays the same.
func TestRecordWithAHostScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	store := t.TempDir()
	dir, _ := filepath.Abs(filepath.Join("testdata", "plugins", "hello-python"))
	cmd := exec.Command(tapedeckBin, "--store", store, "record", "--name", "scripted", "--host", "host.jsonl", "--", "python3", "main.py")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("record --host: %v\n%s", err, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("record --host wrote to stdout: %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "hello-python: bye") {
		t.Errorf("the plugin's stderr did not pass through:\n%s", stderr.String())
	}
	if r := tapedeck(t, store, nil, nil, "check", "scripted"); r.code != 0 || !strings.HasSuffix(string(r.stdout), "0 errors, 0 warnings, 0 info\n") {
		t.Errorf("check of the scripted session: exit %d\n%s", r.code, r.stdout)
	}
	show := tapedeck(t, store, nil, nil, "show", "scripted")
	var paired int
	for _, l := range strings.Split(string(show.stdout), "\n") {
		if strings.Contains(l, "→  response") && (strings.Contains(l, "µs ") || strings.Contains(l, "ms ")) {
			paired++
		}
	}
	if paired != 3 { // the host answers two ui/setPanel and a prompt/inject
		t.Errorf("show pairs %d host answers with latencies, want 3:\n%s", paired, show.stdout)
	}
	tp := filepath.Join(t.TempDir(), "scripted.jsonl")
	if r := tapedeck(t, store, nil, nil, "export", "scripted", "-o", tp); r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	if r := tapedeck(t, store, nil, nil, "replay", tp); r.code != 0 {
		t.Errorf("the scripted tape does not replay the same: %s", r.stdout)
	}

	// A bad script is refused before the plugin starts, naming the line.
	bad := writeFile(t, "bad.jsonl", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`+"\n"+`{"send":{"jsonrpc":"2.0","method":"x"},"after":7}`+"\n"))
	r := tapedeck(t, store, nil, nil, "record", "--host", bad, "--", "python3", filepath.Join(dir, "main.py"))
	if r.code != 2 || !strings.Contains(string(r.stderr), "line 2") {
		t.Errorf("bad script: exit %d, %s", r.code, r.stderr)
	}
	if n := len(lsJSON(t, store)); n != 1 {
		t.Errorf("%d sessions after the refused script, want 1", n)
	}
}

// pendingCorpus records two mini tapes into a fresh folder.
func pendingCorpus(t *testing.T) (dir string, tapes [2]string, golden [2][]byte) {
	t.Helper()
	dir = t.TempDir()
	for i, name := range []string{"a.jsonl", "b.jsonl"} {
		data, _ := os.ReadFile(recordMini(t))
		tapes[i] = filepath.Join(dir, name)
		golden[i] = data
		if err := os.WriteFile(tapes[i], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, tapes, golden
}

// TestReviewOnATerminal drives review through a pseudo-terminal: one key
// per answer, no Enter. It accepts one change, rejects one, and quits at a
// third.
func TestReviewOnATerminal(t *testing.T) {
	t.Parallel()
	dir, tapes, _ := pendingCorpus(t)
	third := filepath.Join(dir, "c.jsonl")
	data, _ := os.ReadFile(tapes[0])
	os.WriteFile(third, data, 0o644)
	if r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=Howdy"}, "test", "--update", dir); r.code != 0 {
		t.Fatalf("test --update: exit %d %s", r.code, r.stderr)
	}
	pending := [3][]byte{}
	for i, tp := range []string{tapes[0], tapes[1], third} {
		pending[i], _ = os.ReadFile(tp + ".new")
	}
	before, _ := os.ReadFile(tapes[1])

	m, s, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	cmd := exec.Command(tapedeckBin, "--store", t.TempDir(), "review", dir)
	cmd.Env = append(os.Environ(), "TERM=dumb")
	cmd.Env = withoutEnv(cmd.Env, "CI")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	lines := make(chan string, 1024)
	go func() { // ends with EIO once the child is gone
		defer close(lines)
		br := bufio.NewReader(m)
		var cur []byte
		for {
			b, err := br.ReadByte()
			if err != nil {
				return
			}
			cur = append(cur, b)
			if b == '\n' || bytes.HasSuffix(cur, []byte("q quit: ")) {
				lines <- string(cur)
				cur = nil
			}
		}
	}()
	var out strings.Builder
	prompt := func() {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("review ended before asking:\n%s", out.String())
				}
				out.WriteString(l)
				if strings.HasSuffix(l, "q quit: ") {
					return
				}
			case <-deadline:
				t.Fatalf("no prompt:\n%s", out.String())
			}
		}
	}
	for _, key := range []string{"a", "r", "q"} {
		prompt()
		m.Write([]byte(key))
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("review: %v\n%s", err, out.String())
	}
	for l := range lines {
		out.WriteString(l)
	}
	m.Close()
	if got, _ := os.ReadFile(tapes[0]); !bytes.Equal(got, pending[0]) {
		t.Errorf("accepted: %s is not its pending change", tapes[0])
	}
	if got, _ := os.ReadFile(tapes[1]); !bytes.Equal(got, before) {
		t.Errorf("rejected: %s changed", tapes[1])
	}
	if _, err := os.Stat(tapes[1] + ".new"); err == nil {
		t.Errorf("rejected: %s.new is still there", tapes[1])
	}
	if got, _ := os.ReadFile(third + ".new"); !bytes.Equal(got, pending[2]) {
		t.Errorf("quit: the third change did not stay pending")
	}
	for _, want := range []string{`params.tree.children[0].text: "Hello" → "Howdy"`, "changed node params.tree.children[0]", "accepted 1, rejected 1, skipped 0, 1 left pending"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("review output lacks %q:\n%s", want, out.String())
		}
	}

	// --accept takes the rest without asking.
	r := tapedeck(t, t.TempDir(), nil, nil, "review", "--accept", dir)
	if r.code != 0 || !strings.Contains(string(r.stdout), "accepted 1, rejected 0, skipped 0") {
		t.Errorf("review --accept: exit %d\n%s", r.code, r.stdout)
	}
	if got, _ := os.ReadFile(third); !bytes.Equal(got, pending[2]) {
		t.Error("review --accept did not accept")
	}
	if r := tapedeck(t, t.TempDir(), nil, nil, "review", dir); r.code != 0 || !strings.Contains(string(r.stdout), "no pending changes") {
		t.Errorf("nothing pending: exit %d %s", r.code, r.stdout)
	}
}

// TestCoverageOfTheBundledTapes checks the coverage of the bundled tapes
// against counts made by hand from the hello plugins' host script and
// panels.
func TestCoverageOfTheBundledTapes(t *testing.T) {
	t.Parallel()
	r := tapedeck(t, t.TempDir(), nil, nil, "coverage", "--json", filepath.Join("testdata", "tapes"))
	if r.code != 0 {
		t.Fatalf("coverage: exit %d %s", r.code, r.stderr)
	}
	var plugins []struct {
		ID            string         `json:"id"`
		Tapes         []string       `json:"tapes"`
		HostMethods   map[string]int `json:"hostMethods"`
		PluginMethods map[string]int `json:"pluginMethods"`
		Elements      map[string]int `json:"elements"`
		Interactive   []struct {
			ID     string `json:"id"`
			Events int    `json:"events"`
		} `json:"interactive"`
		Commands []struct {
			ID          string `json:"id"`
			Runs        int    `json:"runs"`
			Contributed bool   `json:"contributed"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(r.stdout, &plugins); err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for i, p := range plugins {
		byID[p.ID] = i
	}
	if len(plugins) != 5 {
		t.Fatalf("%d plugins, want 5 (hello-go, hello-node, hello-python, waiter-node, waiter-python)", len(plugins))
	}
	p := plugins[byID["hello-node"]]
	// The host script: initialize, panel/open, four ui/event (name, greet,
	// ask, items), context/changed, shutdown. The plugin: two panels, a
	// greeting and a prompt answer as toasts, a prompt, a badge. Each panel
	// has two texts, an input, two buttons, a list and a badge in a column.
	want := map[string]string{
		"host":        "context/changed:1 initialize:1 panel/open:1 shutdown:1 ui/event:4",
		"plugin":      "prompt/inject:1 ui/notify:2 ui/setBadge:1 ui/setPanel:2",
		"elements":    "badge:2 button:4 column:2 input:2 list:2 text:4",
		"interactive": "ask:1 greet:1 items:1 name:1",
		"commands":    "hello.greet:0:true",
	}
	var inter, cmds []string
	for _, e := range p.Interactive {
		inter = append(inter, e.ID+":"+itoa(e.Events))
	}
	for _, c := range p.Commands {
		cmds = append(cmds, c.ID+":"+itoa(c.Runs)+":"+map[bool]string{true: "true", false: "false"}[c.Contributed])
	}
	got := map[string]string{
		"host": flat(p.HostMethods), "plugin": flat(p.PluginMethods), "elements": flat(p.Elements),
		"interactive": strings.Join(inter, " "), "commands": strings.Join(cmds, " "),
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("hello-node %s: %s, want %s", k, got[k], w)
		}
	}
	// The text output and --min are cli/testdata/script/coverage.txtar.
}

// TestTestForCI: --fail-on-skip, JUnit system-err, --shard and --json.
func TestTestForCI(t *testing.T) {
	t.Parallel()
	dir, tapes, _ := pendingCorpus(t)
	// A tape whose program is not installed here.
	data, _ := os.ReadFile(tapes[0])
	missing := bytes.Replace(data, []byte(`"command":["`), []byte(`"command":["/nowhere/no-such-plugin","`), 1)
	os.WriteFile(filepath.Join(dir, "z-missing.jsonl"), missing, 0o644)
	env := []string{"TAPEDECK_FIXTURE=mini"}
	if r := tapedeck(t, t.TempDir(), nil, env, "test", dir); r.code != 0 || lastLine(r.stdout) != "2 passed, 0 failed, 1 skipped" {
		t.Fatalf("skip: exit %d, %q", r.code, lastLine(r.stdout))
	}
	if r := tapedeck(t, t.TempDir(), nil, env, "test", "--fail-on-skip", dir); r.code != 1 || lastLine(r.stdout) != "2 passed, 1 failed" {
		t.Errorf("--fail-on-skip: exit %d, %q", r.code, lastLine(r.stdout))
	}
	os.Remove(filepath.Join(dir, "z-missing.jsonl"))

	junit := filepath.Join(t.TempDir(), "j.xml")
	if r := tapedeck(t, t.TempDir(), nil, append(env, "FIXTURE_CRASH=1"), "test", "--junit", junit, dir); r.code != 1 {
		t.Fatalf("crash: exit %d", r.code)
	}
	var suite struct {
		Cases []struct {
			Name      string `xml:"name,attr"`
			SystemErr string `xml:"system-err"`
		} `xml:"testcase"`
	}
	b, _ := os.ReadFile(junit)
	if err := xml.Unmarshal(b, &suite); err != nil || len(suite.Cases) != 2 || !strings.Contains(suite.Cases[0].SystemErr, "mini: crashing") {
		t.Errorf("junit system-err: %v\n%s", err, b)
	}

	r := tapedeck(t, t.TempDir(), nil, env, "test", "--json", dir)
	sc := bufio.NewScanner(bytes.NewReader(r.stdout))
	var statuses []string
	for sc.Scan() {
		var o struct {
			Tape, Status string
			Same         bool
		}
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("test --json line %q: %v", sc.Text(), err)
		}
		statuses = append(statuses, filepath.Base(o.Tape)+" "+o.Status)
	}
	if r.code != 0 || strings.Join(statuses, ", ") != "a.jsonl pass, b.jsonl pass" {
		t.Errorf("test --json: exit %d, %v\n%s", r.code, statuses, r.stdout)
	}

	// Shards split any corpus into parts that cover every tape once.
	for i := range 7 {
		os.WriteFile(filepath.Join(dir, "s"+itoa(i)+".jsonl"), data, 0o644)
	}
	seen := map[string]int{}
	for k := 1; k <= 3; k++ {
		r := tapedeck(t, t.TempDir(), nil, env, "test", "--shard", itoa(k)+"/3", dir)
		for _, l := range strings.Split(string(r.stdout), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "ok" {
				seen[f[1]]++
			}
		}
	}
	if len(seen) != 9 {
		t.Errorf("the shards ran %d distinct tapes of 9: %v", len(seen), seen)
	}
	for tp, n := range seen {
		if n != 1 {
			t.Errorf("%s ran in %d shards", tp, n)
		}
	}
	if r := tapedeck(t, t.TempDir(), nil, env, "test", "--shard", "4/3", dir); r.code != 2 {
		t.Errorf("--shard 4/3: exit %d", r.code)
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return lines[len(lines)-1]
}

func itoa(i int) string { return strconv.Itoa(i) }

// flat spells counts as "name:n …", sorted.
func flat(m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+":"+itoa(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
