package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Page sizes: with 9 tools and 5 resources both lists take three pages.
const (
	toolsPage     = 4
	resourcesPage = 2
)

var textArg = obj{"type": "object", "properties": obj{"text": obj{"type": "string"}}, "required": []string{"text"}}

// tools is the tools/list catalogue, in order.
var tools = []obj{
	{"name": "echo", "description": "Returns its text.", "inputSchema": textArg},
	{"name": "add", "description": "Adds a and b.",
		"inputSchema":  obj{"type": "object", "properties": obj{"a": obj{"type": "number"}, "b": obj{"type": "number"}}, "required": []string{"a", "b"}},
		"outputSchema": obj{"type": "object", "properties": obj{"sum": obj{"type": "number"}}, "required": []string{"sum"}}},
	{"name": "fail", "description": "Always fails, as a tool (isError).", "inputSchema": obj{"type": "object"}},
	{"name": "slow", "description": "Takes steps (default 3) steps of ms (default 20) milliseconds, with notifications/progress when given a progressToken.",
		"inputSchema": obj{"type": "object", "properties": obj{"steps": obj{"type": "integer"}, "ms": obj{"type": "integer"}}}},
	{"name": "ask", "description": "Asks the client's model (sampling/createMessage) and returns its text.",
		"inputSchema": obj{"type": "object", "properties": obj{"prompt": obj{"type": "string"}}, "required": []string{"prompt"}}},
	{"name": "roots", "description": "Lists the client's roots (roots/list).", "inputSchema": obj{"type": "object"}},
	{"name": "elicit", "description": "Asks the user for a name (elicitation/create).",
		"inputSchema": obj{"type": "object", "properties": obj{"message": obj{"type": "string"}}}},
	{"name": "task", "description": "Runs as a task (2025-11-25): returns its text through tasks/result, after ms (default 0) milliseconds.",
		"inputSchema": obj{"type": "object", "properties": obj{"text": obj{"type": "string"}, "ms": obj{"type": "integer"}}},
		"execution":   obj{"taskSupport": "required"}},
	{"name": "state", "description": "Asks for rounds (default 2) values through input-required results with a signed requestState (2026-07-28).",
		"inputSchema": obj{"type": "object", "properties": obj{"rounds": obj{"type": "integer"}}}},
}

func (s *server) toolsList(r *request) (obj, error) {
	s.mu.Lock()
	version := s.version
	s.mu.Unlock()
	page, next, err := s.paginate(r, len(tools), toolsPage)
	if err != nil {
		return nil, err
	}
	var list []obj
	for _, t := range tools[page[0]:page[1]] {
		if _, ok := t["execution"]; ok && version == "2025-06-18" && !r.modern {
			t = copyWithout(t, "execution") // not in that revision's schema
		}
		list = append(list, t)
	}
	key := "tools"
	if s.broken == "bad-result-shape" {
		key = "items"
	}
	res := obj{key: list}
	if next != "" {
		res["nextCursor"] = next
	}
	return res, nil
}

// paginate reads params.cursor and returns the [from, to) range of the page
// and the cursor of the next one ("" on the last page). Each cursor is a
// fresh random string, valid in this process only.
func (s *server) paginate(r *request, n, size int) ([2]int, string, error) {
	from := 0
	if c, ok := r.params["cursor"].(string); ok {
		s.mu.Lock()
		off, known := s.cursors[c]
		s.mu.Unlock()
		if !known {
			return [2]int{}, "", errorf(-32602, "invalid cursor %q", c)
		}
		from = off
	}
	to := min(from+size, n)
	if to == n {
		return [2]int{from, to}, "", nil
	}
	next := rand.Text()
	s.mu.Lock()
	s.cursors[next] = to
	s.mu.Unlock()
	return [2]int{from, to}, next, nil
}

// toolResult is a CallToolResult with one text block.
func toolResult(text string, isError bool) obj {
	res := obj{"content": []obj{{"type": "text", "text": text}}}
	if isError {
		res["isError"] = true
	}
	return res
}

func (s *server) toolsCall(r *request) (obj, error) {
	name, _ := r.params["name"].(string)
	args, _ := r.params["arguments"].(obj)
	if args == nil {
		args = obj{}
	}
	s.log(r, "info", "tools/call "+name)
	if _, isTask := r.params["task"]; isTask || name == "task" {
		return s.startTask(r, name, args)
	}
	switch name {
	case "echo":
		text, _ := args["text"].(string)
		return toolResult(text, false), nil
	case "add":
		a, errA := number(args["a"])
		b, errB := number(args["b"])
		if errA != nil || errB != nil {
			return toolResult("add needs numbers a and b", true), nil
		}
		sum := a + b
		res := toolResult(strconv.FormatFloat(sum, 'g', -1, 64), false)
		res["structuredContent"] = obj{"sum": sum}
		return res, nil
	case "fail":
		if s.broken == "error-for-tool-failure" {
			return nil, errorf(-32603, "the fail tool failed")
		}
		return toolResult("the fail tool failed", true), nil
	case "slow":
		return s.slow(r, args)
	case "ask", "roots", "elicit":
		if r.modern {
			return toolResult(name+" sends a request to the client: call it in a session opened with initialize", true), nil
		}
		return s.askClient(r, name, args)
	case "state":
		return s.state(r, args)
	}
	return nil, errorf(-32602, "unknown tool: %s", name)
}

// slow takes steps steps, sending notifications/progress after each when the
// request carried a progressToken.
func (s *server) slow(r *request, args obj) (obj, error) {
	steps, ms := intArg(args, "steps", 3), intArg(args, "ms", 20)
	meta, _ := r.params["_meta"].(obj)
	token, hasToken := meta["progressToken"]
	if s.broken == "unknown-progress-token" {
		token, hasToken = "no-such-token", true
	}
	for i := 1; i <= steps; i++ {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.ctx.Done():
			return nil, r.ctx.Err()
		}
		if hasToken {
			s.notify("notifications/progress", obj{"progressToken": token, "progress": i, "total": steps,
				"message": fmt.Sprintf("step %d of %d", i, steps)})
		}
	}
	return toolResult(fmt.Sprintf("done after %d steps", steps), false), nil
}

// askClient runs the tools that send a request to the client: ask
// (sampling), roots and elicit. The client must have declared the capability
// (unless -broken no-capability).
func (s *server) askClient(r *request, name string, args obj) (obj, error) {
	capability, method, params := "", "", obj{}
	switch name {
	case "ask":
		prompt, _ := args["prompt"].(string)
		capability, method = "sampling", "sampling/createMessage"
		params = obj{"messages": []obj{{"role": "user", "content": obj{"type": "text", "text": prompt}}},
			"systemPrompt": "You are a fixture.", "maxTokens": 100}
	case "roots":
		capability, method = "roots", "roots/list"
	case "elicit":
		message, _ := args["message"].(string)
		if message == "" {
			message = "What is your name?"
		}
		capability, method = "elicitation", "elicitation/create"
		params = obj{"message": message, "requestedSchema": obj{"type": "object",
			"properties": obj{"name": obj{"type": "string", "description": "Your name"}}, "required": []string{"name"}}}
	}
	if _, ok := r.caps[capability]; !ok && s.broken != "no-capability" {
		return toolResult(fmt.Sprintf("the client did not declare the %s capability", capability), true), nil
	}
	raw, err := s.call(r.ctx, method, params)
	if err != nil {
		return toolResult(err.Error(), true), nil
	}
	switch name {
	case "ask":
		var res struct {
			Content struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return toolResult("sampling result: "+err.Error(), true), nil
		}
		return toolResult(res.Content.Text, false), nil
	case "roots":
		var res struct {
			Roots []struct{ URI string } `json:"roots"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return toolResult("roots result: "+err.Error(), true), nil
		}
		var uris []string
		for _, root := range res.Roots {
			uris = append(uris, root.URI)
		}
		return toolResult(fmt.Sprintf("%d root(s): %s", len(uris), strings.Join(uris, " ")), false), nil
	default:
		var res struct {
			Action  string `json:"action"`
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return toolResult("elicitation result: "+err.Error(), true), nil
		}
		if res.Action != "accept" {
			return toolResult("elicitation "+res.Action, false), nil
		}
		return toolResult("Hello, "+res.Content.Name+"!", false), nil
	}
}

// ---- tasks (2025-11-25) -----------------------------------------------------

type task struct {
	id     string
	done   chan struct{} // closed when status is completed
	status string        // guarded by server.mu
	result obj           // set before done is closed
}

// taskInfo is the Task object. Timestamps are fixed (see the package comment).
func taskInfo(id, status string) obj {
	return obj{"taskId": id, "status": status, "createdAt": fixedTime, "lastUpdatedAt": fixedTime,
		"ttl": 60000, "pollInterval": 100}
}

// startTask answers a task-augmented tools/call with a CreateTaskResult. The
// task tool is the only one that runs as a task, and only so. With ms 0 the
// task is completed before the answer is written (the answer still says
// "working", as a task must begin), so that tasks/get after it always says
// "completed"; otherwise it completes ms milliseconds later.
func (s *server) startTask(r *request, name string, args obj) (obj, error) {
	_, isTask := r.params["task"]
	s.mu.Lock()
	version := s.version
	s.mu.Unlock()
	switch {
	case name != "task":
		return nil, errorf(-32601, "tool %s does not run as a task", name)
	case r.modern || version != "2025-11-25":
		return toolResult("the task tool needs a 2025-11-25 session", true), nil
	case !isTask:
		return nil, errorf(-32601, "tool task must be called as a task (params.task)")
	}
	text, _ := args["text"].(string)
	t := &task{id: rand.Text(), done: make(chan struct{}), status: "working"}
	finish := func() {
		s.mu.Lock()
		t.status = "completed"
		t.result = toolResult(text, false)
		t.result["_meta"] = obj{"io.modelcontextprotocol/related-task": obj{"taskId": t.id}}
		s.mu.Unlock()
		close(t.done)
	}
	s.mu.Lock()
	s.tasks[t.id] = t
	s.mu.Unlock()
	if ms := intArg(args, "ms", 0); ms == 0 {
		finish()
	} else {
		s.wg.Go(func() {
			time.Sleep(time.Duration(ms) * time.Millisecond) // the task's work
			finish()
		})
	}
	return obj{"task": taskInfo(t.id, "working")}, nil
}

func (s *server) findTask(r *request) (*task, error) {
	id, _ := r.params["taskId"].(string)
	s.mu.Lock()
	t := s.tasks[id]
	s.mu.Unlock()
	if t == nil {
		return nil, &rpcError{Code: -32602, Message: "Task not found", Data: obj{"taskId": id}}
	}
	return t, nil
}

func (s *server) tasksGet(r *request) (obj, error) {
	t, err := s.findTask(r)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return taskInfo(t.id, t.status), nil
}

// tasksResult waits for the task to complete and returns its tool result.
func (s *server) tasksResult(r *request) (obj, error) {
	t, err := s.findTask(r)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
		return t.result, nil
	case <-r.ctx.Done():
		return nil, r.ctx.Err()
	}
}

// ---- state: input-required with a signed requestState (2026-07-28) ---------

// stateClaims is what a requestState carries. Its wire form is
// base64url(JSON of stateClaims) "." base64url(HMAC-SHA256(key, that JSON)),
// with a key drawn at start: a value from another process never verifies.
// The nonce is spent when the state is accepted, so a value sent back twice
// fails too (the server remembers spent nonces, as the specification asks of
// servers whose state must be used at most once).
type stateClaims struct {
	Tool    string   `json:"tool"`
	Round   int      `json:"round"` // the round whose answer the retry brings
	Rounds  int      `json:"rounds"`
	Answers []string `json:"answers"`
	Nonce   string   `json:"nonce"`
}

func (s *server) sign(c stateClaims) string {
	c.Nonce = rand.Text()
	payload, _ := json.Marshal(c)
	mac := hmac.New(sha256.New, s.key)
	mac.Write(payload)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(mac.Sum(nil))
}

// verify checks and spends a requestState.
func (s *server) verify(state string) (stateClaims, error) {
	var c stateClaims
	invalid := func(why string) error {
		return &rpcError{Code: -32602, Message: "invalid requestState", Data: obj{"reason": why}}
	}
	payloadText, sigText, ok := strings.Cut(state, ".")
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(payloadText)
	sig, err2 := enc.DecodeString(sigText)
	if !ok || err1 != nil || err2 != nil {
		return c, invalid("malformed")
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write(payload)
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return c, invalid("signature does not verify (issued by another process?)")
	}
	if json.Unmarshal(payload, &c) != nil || c.Tool != "state" {
		return c, invalid("not a state of the state tool")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spent[c.Nonce] {
		return c, invalid("already used")
	}
	s.spent[c.Nonce] = true
	return c, nil
}

// state asks for one value per round with an elicitation input request; the
// answers so far travel in the signed requestState, and the retry that
// brings the last one gets the complete result. A retry without the answer
// it was asked for is asked again.
func (s *server) state(r *request, args obj) (obj, error) {
	if !r.modern {
		return toolResult("the state tool needs a 2026-07-28 request (params._meta protocolVersion)", true), nil
	}
	if _, ok := r.caps["elicitation"]; !ok {
		return nil, &rpcError{Code: -32021, Message: "the state tool needs the elicitation capability",
			Data: obj{"requiredCapabilities": obj{"elicitation": obj{}}}}
	}
	c := stateClaims{Tool: "state", Round: 1, Rounds: max(1, intArg(args, "rounds", 2)), Answers: []string{}}
	if text, ok := r.params["requestState"].(string); ok {
		var err error
		if c, err = s.verify(text); err != nil {
			return nil, err
		}
		responses, _ := r.params["inputResponses"].(obj)
		answer, _ := responses[fmt.Sprintf("value%d", c.Round)].(obj)
		content, _ := answer["content"].(obj)
		if v, ok := content["value"].(string); ok && answer["action"] == "accept" {
			c.Answers = append(c.Answers, v)
			c.Round++
		}
	}
	if c.Round > c.Rounds {
		return toolResult("values: "+strings.Join(c.Answers, ", "), false), nil
	}
	key := fmt.Sprintf("value%d", c.Round)
	return obj{
		"resultType": "input_required",
		"inputRequests": obj{key: obj{"method": "elicitation/create", "params": obj{
			"mode": "form", "message": fmt.Sprintf("Value %d of %d?", c.Round, c.Rounds),
			"requestedSchema": obj{"type": "object", "properties": obj{"value": obj{"type": "string"}}, "required": []string{"value"}},
		}}},
		"requestState": s.sign(c),
	}, nil
}

// ---- resources and prompts --------------------------------------------------

const notes = 5

func noteURI(n int) string { return fmt.Sprintf("fixture://notes/%d", n) }

func (s *server) resourcesList(r *request) (obj, error) {
	page, next, err := s.paginate(r, notes, resourcesPage)
	if err != nil {
		return nil, err
	}
	list := []obj{}
	for n := page[0] + 1; n <= page[1]; n++ {
		list = append(list, obj{"uri": noteURI(n), "name": fmt.Sprintf("note-%d", n), "mimeType": "text/plain"})
	}
	res := obj{"resources": list}
	if next != "" {
		res["nextCursor"] = next
	}
	return res, nil
}

func (s *server) resourcesRead(r *request) (obj, error) {
	uri, _ := r.params["uri"].(string)
	n, err := strconv.Atoi(strings.TrimPrefix(uri, "fixture://notes/"))
	if err != nil || n < 1 || n > notes || uri != noteURI(n) {
		code := -32002 // Resource not found, 2025-11-25 and earlier
		if r.modern {
			code = -32602
		}
		return nil, &rpcError{Code: code, Message: "Resource not found", Data: obj{"uri": uri}}
	}
	s.log(r, "debug", "read "+uri)
	return obj{"contents": []obj{{"uri": uri, "mimeType": "text/plain", "text": fmt.Sprintf("Note %d of %d.", n, notes)}}}, nil
}

var prompts = []obj{
	{"name": "greet", "description": "Greets someone.", "arguments": []obj{{"name": "name", "required": true}}},
	{"name": "summarise", "description": "Asks for a summary of a text.", "arguments": []obj{{"name": "text", "required": false}}},
}

func (s *server) promptsGet(r *request) (obj, error) {
	name, _ := r.params["name"].(string)
	args, _ := r.params["arguments"].(obj)
	var text string
	switch name {
	case "greet":
		who, _ := args["name"].(string)
		if who == "" {
			return nil, errorf(-32602, "prompt greet: argument name is required")
		}
		text = "Say hello to " + who + "."
	case "summarise":
		what, _ := args["text"].(string)
		text = "Summarise: " + what
	default:
		return nil, errorf(-32602, "unknown prompt: %s", name)
	}
	return obj{"description": name, "messages": []obj{{"role": "user", "content": obj{"type": "text", "text": text}}}}, nil
}

// ---- arguments --------------------------------------------------------------

// number is a JSON number argument (decoded with UseNumber).
func number(v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number: %v", v)
	}
	return n.Float64()
}

// intArg is a non-negative integer argument, or def when absent or invalid.
func intArg(args obj, key string, def int) int {
	f, err := number(args[key])
	if err != nil || f < 0 || f > 1e6 {
		return def
	}
	return int(f)
}

func copyWithout(o obj, key string) obj {
	c := obj{}
	for k, v := range o {
		if k != key {
			c[k] = v
		}
	}
	return c
}
