package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// host drives a plugin (through a shim) the way Agentty does: it writes
// host frames and waits for what the plugin says, answering its requests.
type host struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan map[string]any
	seen  []map[string]any
}

// newHost starts cmd with pipes and reads its stdout in the background; the
// reader ends when cmd's stdout closes.
func newHost(t *testing.T, cmd *exec.Cmd) *host {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &host{t: t, in: in, lines: make(chan map[string]any, 1024)}
	go func() {
		defer close(h.lines)
		br := bufio.NewReader(out)
		for {
			line, err := br.ReadBytes('\n')
			var m map[string]any
			if json.Unmarshal(line, &m) == nil {
				h.lines <- m
			}
			if err != nil {
				return
			}
		}
	}()
	return h
}

func (h *host) send(format string, args ...any) {
	h.t.Helper()
	if _, err := fmt.Fprintf(h.in, format+"\n", args...); err != nil {
		h.t.Fatalf("write to plugin: %v", err)
	}
}

// await waits for the plugin's next message matching pred and returns it.
func (h *host) await(what string, pred func(map[string]any) bool) map[string]any {
	h.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case m, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("plugin's stdout closed while waiting for %s", what)
			}
			h.seen = append(h.seen, m)
			if pred(m) {
				return m
			}
		case <-deadline.C:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// awaitRequest waits for a plugin request of method and returns its raw id.
func (h *host) awaitRequest(method string) string {
	h.t.Helper()
	m := h.await("a "+method+" request", func(m map[string]any) bool { return m["method"] == method && m["id"] != nil })
	id, _ := json.Marshal(m["id"])
	return string(id)
}

func (h *host) awaitNotification(method string) map[string]any {
	h.t.Helper()
	return h.await("a "+method+" notification", func(m map[string]any) bool { return m["method"] == method && m["id"] == nil })
}

func (h *host) awaitResponse(id string) {
	h.t.Helper()
	h.await("the answer to "+id, func(m map[string]any) bool {
		b, _ := json.Marshal(m["id"])
		return m["method"] == nil && string(b) == id
	})
}

// finish sends shutdown, closes stdin and drains stdout.
func (h *host) finish() {
	h.send(`{"jsonrpc":"2.0","method":"shutdown","params":{}}`)
	h.in.Close()
	for m := range h.lines {
		h.seen = append(h.seen, m)
	}
}

// helloSession plays the standard session of the hello fixture plugins.
func helloSession(h *host, pluginID string) {
	h.send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.9.0"},"plugin":{"id":%q,"name":"Hello","version":"1.0.0","dir":"/plugins/%s","dataDir":"/data/%s"},"language":"en","context":{"workspace":null,"pane":null,"language":"en"}}}`, pluginID, pluginID, pluginID)
	h.send(`{"jsonrpc":"2.0","method":"panel/open","params":{"context":{"workspace":null,"pane":null,"language":"en"}}}`)
	h.awaitResponse("7")
	h.send(`{"jsonrpc":"2.0","id":%s,"result":null}`, h.awaitRequest("ui/setPanel"))
	h.send(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"name","event":"change","value":"Ada","context":{}}}`)
	h.send(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"greet","event":"click","context":{}}}`)
	h.send(`{"jsonrpc":"2.0","id":%s,"result":null}`, h.awaitRequest("ui/setPanel"))
	h.awaitNotification("ui/notify")
	// A person reads the toast before the next click: the host drops a
	// ui/notify that comes within 700 ms of the last one shown.
	<-time.After(750 * time.Millisecond)
	h.send(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"ask","event":"click","context":{}}}`)
	h.send(`{"jsonrpc":"2.0","id":%s,"result":{"status":"asked"}}`, h.awaitRequest("prompt/inject"))
	h.awaitNotification("ui/notify")
	h.send(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"items","event":"action","item":"b","action":"rm","context":{}}}`)
	h.send(`{"jsonrpc":"2.0","method":"context/changed","params":{"context":{"workspace":null,"pane":null,"language":"de"}}}`)
	h.awaitNotification("ui/setBadge")
	h.finish()
}

// miniSession plays the session of the mini fixture plugin (fixture_test.go):
// two requests answered in reverse order among the rest.
func miniSession(h *host) {
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"plugin":{"id":"mini","name":"Mini","version":"0.1.0"}}}`)
	h.send(`{"jsonrpc":"2.0","method":"panel/open","params":{"context":{}}}`)
	h.send(`{"jsonrpc":"2.0","id":%s,"result":null}`, h.awaitRequest("ui/setPanel"))
	h.send(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"go","event":"click","context":{}}}`)
	h.awaitNotification("ui/setBadge")
	h.send(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"both","event":"click","context":{}}}`)
	first := h.awaitRequest("prompt/inject")
	second := h.awaitRequest("terminal/send")
	// Answered in reverse order, as a slow host call can be.
	h.send(`{"jsonrpc":"2.0","id":%s,"result":{"paneId":"p-9"}}`, second)
	h.send(`{"jsonrpc":"2.0","id":%s,"result":{"status":"sent","paneId":"p-9"}}`, first)
	h.await("both answers reported", func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return p != nil && strings.HasPrefix(fmt.Sprint(p["message"]), "prompt/inject answered")
	})
	h.finish()
}
