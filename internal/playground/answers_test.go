package playground

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/message"
)

// askerPlugin asks the host, one request after the other, what the table
// of the test lists, and writes each answer on stderr.
const askerPlugin = `
import { createInterface } from "node:readline";
const asks = [
  ["storage/set", {key: "k", value: [1, 2]}],
  ["storage/get", {key: "k"}],
  ["storage/keys", {}],
  ["host/timer", {ms: 150}],
  ["ui/setPanel", {tree: {type: "bogus"}}],
  ["terminal/send", {text: "ls"}],
  ["host/info", {}],
];
let id = 0;
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
function next() {
  if (id === asks.length) { process.stderr.write("done\n"); return; }
  const [method, params] = asks[id];
  send({jsonrpc: "2.0", id: ++id, method, params});
}
let asked = 0;
createInterface({input: process.stdin}).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") send({jsonrpc: "2.0", id: m.id, result: {}});
  else if (m.method === "panel/open") { asked = Date.now(); next(); }
  else if (m.method === "shutdown") process.exit(0);
  else if (m.id !== undefined && m.method === undefined) {
    process.stderr.write("answer " + asks[m.id - 1][0] + " " + JSON.stringify(m.error ?? m.result) + " after " + (Date.now() - asked) + "\n");
    asked = Date.now();
    next();
  }
}).on("close", () => process.exit(0));
`

// TestHostAnswersAsTheHostDoes: the playground answers the plugin's
// requests as the host would: storage kept, host/timer after its time, a
// UI tree the host rejects refused with -32602, a method the manifest has
// no permission for refused with -32001, host/info the host's.
func TestHostAnswersAsTheHostDoes(t *testing.T) {
	t.Parallel()
	needNode(t)
	dir := filepath.Join(t.TempDir(), "asker")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "main.mjs"), []byte(askerPlugin), 0o644)
	os.WriteFile(filepath.Join(dir, "agentty-plugin.json"), []byte(`{"id":"asker","name":"Asker","version":"1.0.0","main":"main.mjs","runtime":"node","apiVersion":2,"permissions":[],"contributes":{"panel":{"title":"Asker"}}}`), 0o644)
	p := play(t, dir, nil)
	u, _ := url.Parse(p.url)
	base := "http://" + u.Host
	events, err := http.Get(base + "/events?token=" + u.Query().Get("token"))
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()
	// Wait for the plugin's "done" on stderr, read off the event stream.
	buf := make([]byte, 64<<10)
	var seen strings.Builder
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(seen.String(), `"r":"done"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the plugin did not finish asking:\n%s", seen.String())
		}
		n, err := events.Body.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("the event stream: %v\n%s", err, seen.String())
		}
	}
	var answers []string
	for _, line := range strings.Split(seen.String(), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			T string `json:"t"`
			F struct {
				D string `json:"d"`
				R string `json:"r"`
			} `json:"f"`
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.T == "frame" && ev.F.D == "err" && strings.HasPrefix(ev.F.R, "answer ") {
			answers = append(answers, ev.F.R)
		}
	}
	want := []string{
		`answer storage/set null after `,
		`answer storage/get {"key":"k","value":[1,2]} after `,
		`answer storage/keys ["k"] after `,
		`answer host/timer {"elapsedMs":150} after `,
		`answer ui/setPanel {"code":-32602,"message":"unknown element type \"bogus\""} after `,
		`answer terminal/send {"code":-32001,"message":"terminal/send needs the \"terminal.write\" permission, which the manifest does not grant"} after `,
		`answer host/info {"version":"1.9.0","apiVersion":2,"language":"en"} after `,
	}
	if len(answers) != len(want) {
		t.Fatalf("answers:\n%s", strings.Join(answers, "\n"))
	}
	for i, a := range answers {
		if !strings.HasPrefix(a, want[i]) {
			t.Errorf("answer %d: %s\nwant %s…", i+1, a, want[i])
		}
	}
	t.Logf("answers:\n%s", strings.Join(answers, "\n"))
	var after int
	if _, err := fmt.Sscan(answers[3][strings.LastIndex(answers[3], " ")+1:], &after); err != nil || after < 150 {
		t.Errorf("host/timer of 150 ms was answered after %s ms", answers[3][strings.LastIndex(answers[3], " ")+1:])
	}
}

// TestStorageIsBounded: the playground's storage of a plugin holds at most
// storageMaxBytes of keys and values and storageMaxKeys keys; a set past
// them fails as the host's storage failures do (-32603) and changes
// nothing, while replacing a key's value with one no larger still works.
// (A plugin that set a new key each time held memory without end: 4,000
// sets of 100 kB, 406 MB.)
func TestStorageIsBounded(t *testing.T) {
	t.Parallel()
	var s storage
	set := func(key string, n int) (json.RawMessage, json.RawMessage) {
		params, _ := json.Marshal(map[string]any{"key": key, "value": strings.Repeat("x", n)})
		res, fail, ok := s.answer(&message.Message{Method: "storage/set", Params: params})
		if !ok {
			t.Fatal("storage/set is not storage's")
		}
		return res, fail
	}
	const value = 100 << 10
	var full int
	for i := range 400 {
		if _, fail := set(fmt.Sprintf("k%d", i), value); fail != nil {
			full = i
			if !strings.Contains(string(fail), `"code":-32603`) || !strings.Contains(string(fail), "storage is full") {
				t.Fatalf("set %d past the bound: %s", i, fail)
			}
			break
		}
	}
	if want := storageMaxBytes / (value + 8); full < want-2 || full > want+2 {
		t.Fatalf("storage took %d values of 100 kB before it was full, want about %d", full, want)
	}
	if s.bytes > storageMaxBytes || len(s.values) != full {
		t.Errorf("storage holds %d bytes in %d keys past the bound", s.bytes, len(s.values))
	}
	if res, fail := set("k0", 10); fail != nil || string(res) != "null" {
		t.Errorf("replacing a key's value with a smaller one: %s %s", res, fail)
	}
	few := storage{values: map[string]json.RawMessage{}}
	for i := range storageMaxKeys {
		few.values[strconv.Itoa(i)] = json.RawMessage("1")
	}
	s = few
	if _, fail := set("one more", 1); fail == nil {
		t.Error("a key past storageMaxKeys was taken")
	}
	if _, fail := set("0", 1); fail != nil {
		t.Errorf("replacing a key with storageMaxKeys keys held: %s", fail)
	}
}
