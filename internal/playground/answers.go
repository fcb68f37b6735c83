package playground

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/message"
)

// defaultContext is the context the host gives before the page edits it.
const defaultContext = `{"workspace":null,"pane":null,"language":"en"}`

// hostVersion is the Agentty version the playground plays.
const hostVersion = "1.9.0"

// Answer is the host's answer to one method of the plugin's: a result, or
// an error. Exactly one is set.
type Answer struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// parseAnswer reads an answer as the page edits it: {"result": …} or
// {"error": {"code": N, "message": "…"}}.
func parseAnswer(raw json.RawMessage) (Answer, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return Answer{}, fmt.Errorf(`an answer is {"result": …} or {"error": {"code": N, "message": "…"}}: %v`, err)
	}
	res, hasRes := probe["result"]
	e, hasErr := probe["error"]
	switch {
	case len(probe) != 1 || hasRes == hasErr:
		return Answer{}, fmt.Errorf(`an answer is {"result": …} or {"error": {"code": N, "message": "…"}}, not %s`, compact(raw))
	case hasErr:
		var v struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(e, &v) != nil || v.Code == nil || v.Message == nil {
			return Answer{}, fmt.Errorf(`an error answer needs {"code": N, "message": "…"}, not %s`, compact(e))
		}
		return Answer{Error: compact(e)}, nil
	}
	return Answer{Result: compact(res)}, nil
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return json.RawMessage(raw)
	}
	return b.Bytes()
}

// defaultAnswers are the host's results for the plugin's methods, as the
// page shows them before they are edited. context/get answers the current
// context and storage/* the playground's own storage, whatever the table
// says, until the page sets an answer for them.
func defaultAnswers(p *Plugin) map[string]json.RawMessage {
	site := []map[string]any{}
	if p.Manifest != nil && p.Manifest.Browser != nil {
		for _, s := range p.Manifest.Browser.Sites {
			site = append(site, map[string]any{"host": s.Host, "signedIn": true, "expiresAt": 1798761600000})
		}
	}
	sites, _ := json.Marshal(site)
	res := map[string]string{
		"host/info":             fmt.Sprintf(`{"version":%q,"apiVersion":%d,"language":"en"}`, hostVersion, p.APIVersion),
		"prompt/inject":         `{"status":"asked"}`,
		"terminal/send":         `{"paneId":"pane-1"}`,
		"session/get":           `{"paneId":"pane-1","agent":"claude","sessionId":"session-1","title":"A session","cwd":"/work","status":"idle","turnCount":0,"turns":[]}`,
		"workspace/list":        `[{"id":"ws-1","name":"work","cwd":"/work","active":true,"panes":[]}]`,
		"net/fetch":             `{"status":200,"statusText":"OK","url":"https://example.com/","headers":{},"body":"","truncated":false,"binary":false,"bytes":0,"durationMs":1}`,
		"browser/sites":         string(sites),
		"browser/open":          `{"tabId":1}`,
		"browser/wait":          `{"url":"https://example.com/","title":"Example"}`,
		"browser/eval":          `{"value":null}`,
		"browser/info":          `{"tabId":1,"url":"https://example.com/","title":"Example"}`,
		"browser/profiles":      `[]`,
		"browser/signIn":        `{"signedIn":true}`,
		"browser/navigate":      `null`,
		"browser/show":          `null`,
		"browser/hide":          `null`,
		"browser/close":         `null`,
		"browser/removeProfile": `null`,
	}
	out := map[string]json.RawMessage{}
	for _, m := range check.Methods() {
		if m.Dir != frame.Out {
			continue
		}
		r, ok := res[m.Name]
		if !ok {
			r = "null"
		}
		out[m.Name] = json.RawMessage(`{"result":` + r + `}`)
	}
	return out
}

// refusal is the host's error for a request check says it refuses (the
// first finding whose rule makes the call fail), or nil.
func refusal(findings []check.Finding, rules map[string]check.Rule) json.RawMessage {
	for _, f := range findings {
		r := rules[f.Rule]
		if r.Code == 0 {
			continue
		}
		msg := strings.TrimSuffix(f.Message, ": "+r.Host)
		b, _ := json.Marshal(struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}{r.Code, msg})
		return b
	}
	return nil
}

// answerFrame is the host's answer frame for id, in the host's member
// order.
func answerFrame(id json.RawMessage, a Answer) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	if len(a.Error) > 0 {
		b.WriteString(`,"error":`)
		b.Write(a.Error)
	} else {
		b.WriteString(`,"result":`)
		if len(a.Result) == 0 {
			b.WriteString("null")
		} else {
			b.Write(a.Result)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// timerDelay is how long the host takes to answer host/timer: its ms,
// clamped as the host clamps it (100 ms … 1 h).
func timerDelay(m *message.Message) time.Duration {
	var p struct {
		Ms float64 `json:"ms"`
	}
	json.Unmarshal(m.Params, &p)
	d := time.Duration(p.Ms * float64(time.Millisecond))
	return min(max(d, 100*time.Millisecond), time.Hour)
}

// storage is the host's plugin storage, kept while the playground runs
// (storage/get, storage/set, storage/keys), within storageMaxBytes and
// storageMaxKeys: a plugin that sets a new key each time held a run's
// memory without end (4,000 sets of 100 kB: 406 MB). A set past them
// fails as the host's storage failures do (-32603).
type storage struct {
	values map[string]json.RawMessage
	bytes  int // of the keys and the values held
}

// The most the playground keeps of a plugin's storage.
const (
	storageMaxBytes = 16 << 20
	storageMaxKeys  = 100_000
)

// storageFull is the error a storage/set past the bounds gets.
const storageFull = `{"code":-32603,"message":"storage is full: the playground keeps at most 16 MiB and 100000 keys of a plugin's storage"}`

// answer gives storage's result for a storage method, or its error; ok
// is false for another method.
func (s *storage) answer(m *message.Message) (res, fail json.RawMessage, ok bool) {
	var p struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "storage/get":
		v, ok := s.values[p.Key]
		if !ok {
			v = json.RawMessage("null")
		}
		key, _ := json.Marshal(p.Key)
		return json.RawMessage(`{"key":` + string(key) + `,"value":` + string(v) + `}`), nil, true
	case "storage/set":
		if len(p.Value) == 0 {
			p.Value = json.RawMessage("null")
		}
		v := compact(p.Value)
		old, had := s.values[p.Key]
		size := s.bytes + len(v) - len(old)
		if !had {
			size += len(p.Key)
		}
		if size > storageMaxBytes || !had && len(s.values) >= storageMaxKeys {
			return nil, json.RawMessage(storageFull), true
		}
		if s.values == nil {
			s.values = map[string]json.RawMessage{}
		}
		s.values[p.Key], s.bytes = v, size
		return json.RawMessage("null"), nil, true
	case "storage/keys":
		keys := make([]string, 0, len(s.values))
		for k := range s.values {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b, _ := json.Marshal(keys)
		return b, nil, true
	}
	return nil, nil, false
}

func jsonMarshal(v any) (json.RawMessage, error) { return json.Marshal(v) }
