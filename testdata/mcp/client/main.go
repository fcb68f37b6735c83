// Command mcp-client is a scripted MCP client for tapedeck's tests: it starts
// a server command, drives it over stdio (JSON-RPC 2.0, one object per line)
// through a named scenario, answers the server's own requests, and prints one
// line per step on stdout. Run under it, "tapedeck record -- SERVER" records
// a real session:
//
//	mcp-client [flags] -- tapedeck record -- mcp-go
//
// Go standard library only, inside this module; build it with
// "go build -o DIR/mcp-client ./testdata/mcp/client".
//
// Scenarios (-scenario):
//
//	basic       initialize, initialized, logging/setLevel info (when the
//	            server declares logging), tools/list
//	            following every cursor, tools/call echo, add, fail, slow (with
//	            a progressToken), ask, roots, elicit, resources/list following
//	            every cursor, resources/read, prompts/list, prompts/get
//	            (the tools of ../go, ../node and ../python)
//	list        initialize, initialized, every page of tools/list,
//	            resources/list and prompts/list the server declares, ping: for
//	            any server (the npm servers); add -call for tools
//	cursors     tools/list and resources/list following every cursor, then
//	            the second page of the first of them that has one, twice with
//	            the same cursor
//	tasks       tools/call of -task (default task={"text":"done as a task"})
//	            as a task (params.task), tasks/get every pollInterval until
//	            it is no longer working, tasks/result, tasks/get of an
//	            unknown id ("Task not found")
//	state       server/discover, then the 2026-07-28 state tool: every
//	            input-required round answered and its requestState sent back,
//	            then the first requestState again ("invalid requestState")
//	concurrent  five slow calls at once, each with its own progressToken
//
// Every scenario but state opens with initialize (-version, default
// 2025-11-25) and notifications/initialized, then runs the -call tools
// (-call 'name={"json":"arguments"}', repeatable, in order), then waits for
// every -await method the server must have asked (e.g. -await roots/list for
// server-everything, which asks 350 ms after initialized), then closes the
// server's stdin and waits for it to exit: -exit-wait (default 2s), then
// SIGTERM and as long again, then SIGKILL (the stdio transport's shutdown).
//
// The client declares the capabilities named by -caps (default
// sampling,roots,elicitation) and answers: sampling/createMessage with
// "fixture answer to: PROMPT"; roots/list with -root (default: the working
// directory); elicitation/create by filling every property of the requested
// schema (strings "answer N", numbers 1, booleans true, enums their first
// value); ping with {}; anything else with -32601.
//
// It exits 0 when every step got the answer it expects, 1 when one did not
// (each such step prints a line starting "FAIL"), 2 on bad usage. -v logs
// every line both ways on stderr.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

type obj = map[string]any

// message is one JSON-RPC message in either direction.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("error %d %s", e.Code, e.Message) }

type client struct {
	stdin   io.WriteCloser
	wmu     sync.Mutex
	timeout time.Duration
	start   time.Duration // the wait for initialize's answer
	verbose bool
	caps    obj
	root    string
	version string
	task    string // name=JSON of the tool the tasks scenario calls

	serverCaps map[string]json.RawMessage // from initialize's answer

	mu       sync.Mutex
	cond     *sync.Cond // broadcast when asked changes or stdout ends
	nextID   int
	waiting  map[string]chan *message
	closed   bool           // the server's stdout ended
	progress map[string]int // progress token (JSON text) -> notifications seen
	notes    map[string]int // other notifications by method
	asked    map[string]int // server requests answered, by method
	answers  int            // elicitation answers given
	noise    int            // stdout lines that were not JSON
	failed   bool
}

type callFlag []string

func (c *callFlag) String() string     { return strings.Join(*c, " ") }
func (c *callFlag) Set(v string) error { *c = append(*c, v); return nil }

func main() { os.Exit(run()) }

func run() int {
	scenario := flag.String("scenario", "basic", "basic, list, cursors, tasks, state or concurrent")
	caps := flag.String("caps", "sampling,roots,elicitation", "client capabilities to declare, comma-separated")
	version := flag.String("version", "2025-11-25", "protocolVersion sent in initialize")
	timeout := flag.Duration("timeout", 10*time.Second, "how long to wait for each answer")
	startTimeout := flag.Duration("start-timeout", 60*time.Second, "how long to wait for the answer to initialize, which waits for the server to start (node loading its modules on a loaded machine takes more than 10s)")
	exitWait := flag.Duration("exit-wait", 2*time.Second, "how long to wait for the server to exit after its stdin closes, and then after SIGTERM")
	root := flag.String("root", "", "the root to answer roots/list with (default: the working directory)")
	verbose := flag.Bool("v", false, "log every line both ways on stderr")
	task := flag.String("task", `task={"text":"done as a task"}`, "the tool the tasks scenario calls as a task, as name=JSON")
	var calls, await callFlag
	flag.Var(&calls, "call", `a tool to call after the scenario, as name={"arg":"value"} (repeatable)`)
	flag.Var(&await, "await", "a request method the server must send before the client closes (repeatable)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "mcp-client: no server command: mcp-client [flags] -- SERVER [ARGS...]")
		return 2
	}
	if *root == "" {
		wd, _ := os.Getwd()
		*root = (&url.URL{Scheme: "file", Path: filepath.ToSlash(wd)}).String()
	}
	c := &client{timeout: *timeout, start: *startTimeout, verbose: *verbose, caps: obj{}, root: *root, version: *version, task: *task,
		nextID: 1, waiting: map[string]chan *message{}, progress: map[string]int{},
		notes: map[string]int{}, asked: map[string]int{}}
	c.cond = sync.NewCond(&c.mu)
	for _, name := range strings.Split(*caps, ",") {
		if name = strings.TrimSpace(name); name != "" {
			c.caps[name] = obj{}
		}
	}

	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err1 := cmd.StdinPipe()
	stdout, err2 := cmd.StdoutPipe()
	if err := errors.Join(err1, err2, cmd.Start()); err != nil {
		fmt.Fprintf(os.Stderr, "mcp-client: start %s: %v\n", flag.Arg(0), err)
		return 2
	}
	c.stdin = stdin
	var wg sync.WaitGroup
	readDone := make(chan struct{})
	wg.Go(func() { defer close(readDone); c.read(stdout) })

	scenarios := map[string]func(){
		"basic": c.basic, "list": c.list, "cursors": c.cursors,
		"tasks": c.tasks, "state": c.state, "concurrent": c.concurrent,
	}
	fn := scenarios[*scenario]
	if fn == nil {
		fmt.Fprintf(os.Stderr, "mcp-client: unknown -scenario %q: use basic, list, cursors, tasks, state or concurrent\n", *scenario)
		stdin.Close()
		cmd.Wait()
		return 2
	}
	if *scenario != "state" {
		c.initialize()
	}
	fn()
	for _, call := range calls {
		c.callFlag(call)
	}
	for _, method := range await {
		c.awaitRequest(method)
	}

	// Shut down as the stdio transport says: close stdin, wait, SIGTERM,
	// wait, SIGKILL. Wait closes the stdout pipe: first read it to its end.
	stdin.Close()
	ended := "stdin closed"
	select {
	case <-readDone:
	case <-time.After(*exitWait):
		ended = fmt.Sprintf("SIGTERM: still running %v after its stdin closed", *exitWait)
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-readDone:
		case <-time.After(*exitWait):
			c.fail("exit: still running %v after SIGTERM: killed", *exitWait)
			cmd.Process.Kill()
		}
	}
	wg.Wait()
	c.step("exit: %v (%s)", exitText(cmd.Wait()), ended)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.noise > 0 {
		c.step("noise: %d stdout line(s) were not JSON", c.noise)
	}
	if len(c.notes) > 0 {
		var counts []string
		for method, n := range c.notes {
			counts = append(counts, fmt.Sprintf("%s x%d", method, n))
		}
		slices.Sort(counts)
		c.step("notifications: %s", strings.Join(counts, ", "))
	}
	if c.failed {
		return 1
	}
	return 0
}

func exitText(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

// ---- scenarios ---------------------------------------------------------------

func (c *client) initialize() {
	res, err := c.requestWithin("initialize", obj{"protocolVersion": c.version, "capabilities": c.caps,
		"clientInfo": obj{"name": "mcp-fixture-client", "version": "1.0.0"}}, c.start)
	if err != nil {
		c.fail("initialize: %v", err)
		return
	}
	var init struct {
		ProtocolVersion string                         `json:"protocolVersion"`
		ServerInfo      struct{ Name, Version string } `json:"serverInfo"`
		Capabilities    map[string]json.RawMessage     `json:"capabilities"`
	}
	json.Unmarshal(res, &init)
	names := make([]string, 0, len(init.Capabilities))
	for k := range init.Capabilities {
		names = append(names, k)
	}
	slices.Sort(names)
	c.step("initialize: %s %s, protocol %s, capabilities %s", init.ServerInfo.Name, init.ServerInfo.Version,
		init.ProtocolVersion, strings.Join(names, ","))
	c.serverCaps = init.Capabilities
	c.notify("notifications/initialized", nil)
}

func (c *client) basic() {
	if _, ok := c.serverCaps["logging"]; ok {
		if _, err := c.request("logging/setLevel", obj{"level": "info"}); err != nil {
			c.fail("logging/setLevel: %v", err)
		}
	}
	c.listAll("tools/list", "tools", "name")
	c.callTool("echo", obj{"text": "hello"}, nil)
	c.callTool("add", obj{"a": 2, "b": 3}, nil)
	c.callTool("fail", obj{}, nil)
	c.callTool("slow", obj{"steps": 3}, "slow-1")
	c.callTool("ask", obj{"prompt": "What is 2+2?"}, nil)
	c.callTool("roots", obj{}, nil)
	c.callTool("elicit", obj{}, nil)
	uris := c.listAll("resources/list", "resources", "uri")
	if len(uris) > 0 {
		res, err := c.request("resources/read", obj{"uri": uris[0]})
		var read struct{ Contents []struct{ Text string } }
		json.Unmarshal(res, &read)
		if err != nil || len(read.Contents) == 0 {
			c.fail("resources/read %s: %v", uris[0], err)
		} else {
			c.step("resources/read %s: %q", uris[0], read.Contents[0].Text)
		}
	}
	names := c.listAll("prompts/list", "prompts", "name")
	if len(names) > 0 {
		res, err := c.request("prompts/get", obj{"name": names[0], "arguments": obj{"name": "Ada"}})
		var got struct {
			Messages []struct{ Content struct{ Text string } }
		}
		json.Unmarshal(res, &got)
		if err != nil || len(got.Messages) == 0 {
			c.fail("prompts/get %s: %v", names[0], err)
		} else {
			c.step("prompts/get %s: %q", names[0], got.Messages[0].Content.Text)
		}
	}
}

// list lists what any server declares, for the npm servers.
func (c *client) list() {
	for _, l := range []struct{ capability, method, key, field string }{
		{"tools", "tools/list", "tools", "name"},
		{"resources", "resources/list", "resources", "uri"},
		{"prompts", "prompts/list", "prompts", "name"},
	} {
		if _, ok := c.serverCaps[l.capability]; ok {
			c.listAll(l.method, l.key, l.field)
		}
	}
	if _, err := c.request("ping", obj{}); err != nil {
		c.fail("ping: %v", err)
	} else {
		c.step("ping: ok")
	}
}

func (c *client) cursors() {
	c.listAll("tools/list", "tools", "name")
	c.listAll("resources/list", "resources", "uri")
	for _, l := range []struct{ method, key, field string }{
		{"tools/list", "tools", "name"}, {"resources/list", "resources", "uri"},
	} {
		res, err := c.request(l.method, nil)
		var first struct {
			NextCursor any `json:"nextCursor"`
		}
		json.Unmarshal(res, &first)
		if err != nil || first.NextCursor == nil {
			continue
		}
		for i := 1; i <= 2; i++ {
			res, err := c.request(l.method, obj{"cursor": first.NextCursor})
			var page map[string][]map[string]any
			json.Unmarshal(res, &page)
			if err != nil {
				c.fail("%s second page, time %d: %v", l.method, i, err)
				continue
			}
			var items []string
			for _, item := range page[l.key] {
				v, _ := item[l.field].(string)
				items = append(items, v)
			}
			c.step("%s second page, time %d: %s", l.method, i, strings.Join(items, " "))
		}
		return
	}
	c.fail("cursors: neither tools/list nor resources/list has a second page")
}

// tasks calls c.task (name=JSON) as a task and polls it to its end.
func (c *client) tasks() {
	name, args := c.parseCall(c.task)
	if args == nil {
		return
	}
	res, err := c.request("tools/call", obj{"name": name, "arguments": args, "task": obj{"ttl": 60000}})
	var created struct {
		Task struct {
			TaskID       string `json:"taskId"`
			Status       string `json:"status"`
			PollInterval int    `json:"pollInterval"`
		} `json:"task"`
	}
	json.Unmarshal(res, &created)
	if err != nil || created.Task.TaskID == "" {
		c.fail("tools/call %s: no task (%v)", name, err)
		return
	}
	c.step("tools/call %s: task %s", name, created.Task.Status)
	id := created.Task.TaskID
	// Poll as often as the task's pollInterval asks (at most every 5 s),
	// the first time at once.
	interval := time.Duration(min(max(created.Task.PollInterval, 10), 5000)) * time.Millisecond
	deadline := time.Now().Add(c.timeout)
	for polls := 0; ; polls++ {
		if polls > 0 {
			time.Sleep(interval)
		}
		res, err := c.request("tasks/get", obj{"taskId": id})
		var t struct{ Status string }
		json.Unmarshal(res, &t)
		if err != nil {
			c.fail("tasks/get: %v", err)
			return
		}
		if t.Status != "working" {
			c.step("tasks/get: %s", t.Status)
			break
		}
		if time.Now().After(deadline) {
			c.fail("tasks/get: still working after %v", c.timeout)
			return
		}
	}
	res, err = c.request("tasks/result", obj{"taskId": id})
	if err != nil {
		c.fail("tasks/result: %v", err)
	} else {
		c.step("tasks/result: %s", toolText(res))
	}
	if _, err := c.request("tasks/get", obj{"taskId": "no-such-task"}); err != nil {
		c.step("tasks/get unknown id: %v", err)
	} else {
		c.fail("tasks/get unknown id: answered with a result")
	}
}

// modernMeta is the _meta every 2026-07-28 request carries.
func (c *client) modernMeta() obj {
	return obj{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         obj{"name": "mcp-fixture-client", "version": "1.0.0"},
		"io.modelcontextprotocol/clientCapabilities": c.caps}
}

func (c *client) state() {
	res, err := c.request("server/discover", obj{"_meta": c.modernMeta()})
	var disc struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	json.Unmarshal(res, &disc)
	if err != nil {
		c.fail("server/discover: %v", err)
		return
	}
	c.step("server/discover: versions %s", strings.Join(disc.SupportedVersions, " "))
	params := obj{"name": "state", "arguments": obj{"rounds": 2}, "_meta": c.modernMeta()}
	var firstState string
	for round := 1; ; round++ {
		res, err := c.request("tools/call", params)
		if err != nil {
			c.fail("tools/call state, round %d: %v", round, err)
			return
		}
		var ir struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		json.Unmarshal(res, &ir)
		if ir.ResultType != "input_required" {
			c.step("tools/call state, round %d: %s", round, toolText(res))
			break
		}
		if round > 10 {
			c.fail("tools/call state: still input_required after 10 rounds")
			return
		}
		responses := obj{}
		keys := make([]string, 0, len(ir.InputRequests))
		for key, raw := range ir.InputRequests {
			var req message
			json.Unmarshal(raw, &req)
			responses[key], _ = c.answer(req.Method, req.Params)
			keys = append(keys, key)
		}
		slices.Sort(keys)
		c.step("tools/call state, round %d: input required (%s)", round, strings.Join(keys, " "))
		if firstState == "" {
			firstState = ir.RequestState
		}
		params = obj{"name": "state", "arguments": obj{"rounds": 2}, "_meta": c.modernMeta(),
			"inputResponses": responses, "requestState": ir.RequestState}
	}
	params["requestState"] = firstState
	if _, err := c.request("tools/call", params); err != nil {
		c.step("tools/call state, first requestState again: %v", err)
	} else {
		c.fail("tools/call state, first requestState again: accepted")
	}
}

func (c *client) concurrent() {
	var wg sync.WaitGroup
	for i := 1; i <= 5; i++ {
		wg.Go(func() { c.callTool("slow", obj{"steps": 4, "ms": 25}, fmt.Sprintf("slow-%d", i)) })
	}
	wg.Wait()
}

// ---- steps -------------------------------------------------------------------

// listAll follows every cursor of a list method and returns field of each
// item.
func (c *client) listAll(method, key, field string) []string {
	var all []string
	var cursor any
	for pages := 1; ; pages++ {
		var params obj
		if cursor != nil {
			params = obj{"cursor": cursor}
		}
		res, err := c.request(method, params)
		if err != nil {
			c.fail("%s page %d: %v", method, pages, err)
			return all
		}
		var page map[string]json.RawMessage
		json.Unmarshal(res, &page)
		var items []map[string]any
		if err := json.Unmarshal(page[key], &items); err != nil || page[key] == nil {
			c.fail("%s page %d: no %q array in the result", method, pages, key)
			return all
		}
		for _, item := range items {
			v, _ := item[field].(string)
			all = append(all, v)
		}
		cursor = nil
		json.Unmarshal(page["nextCursor"], &cursor)
		if cursor == nil {
			c.step("%s: %d in %d page(s): %s", method, len(all), pages, strings.Join(all, " "))
			return all
		}
		if pages == 100 {
			c.fail("%s: still a nextCursor after 100 pages", method)
			return all
		}
	}
}

// callTool calls a tool, with a progressToken when token is not nil, and
// prints its text (and the progress notifications seen for the token).
func (c *client) callTool(name string, args obj, token any) {
	params := obj{"name": name, "arguments": args}
	if token != nil {
		params["_meta"] = obj{"progressToken": token}
	}
	res, err := c.request("tools/call", params)
	if err != nil {
		c.fail("tools/call %s: %v", name, err)
		return
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	json.Unmarshal(res, &r)
	line := fmt.Sprintf("tools/call %s: %s", name, toolText(res))
	if r.IsError {
		line += " (isError)"
	}
	if token != nil {
		t, _ := json.Marshal(token)
		c.mu.Lock()
		n := c.progress[string(t)]
		c.mu.Unlock()
		line += fmt.Sprintf(" [%d progress]", n)
	}
	c.step("%s", line)
}

// callFlag runs one -call name=JSON.
func (c *client) callFlag(spec string) {
	if name, args := c.parseCall(spec); args != nil {
		c.callTool(name, args, "call-"+name)
	}
}

// parseCall splits name=JSON; args is nil (and the step failed) when the
// JSON is not an object.
func (c *client) parseCall(spec string) (name string, args obj) {
	name, argsText, _ := strings.Cut(spec, "=")
	args = obj{}
	if argsText != "" {
		if err := json.Unmarshal([]byte(argsText), &args); err != nil || args == nil {
			c.fail("%s: the arguments are not a JSON object", spec)
			return name, nil
		}
	}
	return name, args
}

// awaitRequest waits until the server has sent a request of method (and it
// was answered), or the timeout.
func (c *client) awaitRequest(method string) {
	deadline := time.AfterFunc(c.timeout, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer deadline.Stop()
	start := time.Now()
	c.mu.Lock()
	for c.asked[method] == 0 && !c.closed && time.Since(start) < c.timeout {
		c.cond.Wait()
	}
	n := c.asked[method]
	c.mu.Unlock()
	if n == 0 {
		c.fail("await %s: the server did not ask it within %v", method, c.timeout)
		return
	}
	c.step("await %s: asked", method)
}

// toolText is the text of a CallToolResult's first text block.
func toolText(res json.RawMessage) string {
	var r struct {
		Content []struct{ Type, Text string } `json:"content"`
	}
	json.Unmarshal(res, &r)
	for _, block := range r.Content {
		if block.Type == "text" {
			first, _, _ := strings.Cut(block.Text, "\n")
			return fmt.Sprintf("%q", first)
		}
	}
	return fmt.Sprintf("(%d content blocks, no text)", len(r.Content))
}

func (c *client) step(format string, args ...any) { fmt.Printf(format+"\n", args...) }

func (c *client) fail(format string, args ...any) {
	fmt.Printf("FAIL "+format+"\n", args...)
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
}

// ---- the wire ----------------------------------------------------------------

// request sends a request and waits for its answer; a JSON-RPC error comes
// back as *rpcError.
func (c *client) request(method string, params obj) (json.RawMessage, error) {
	return c.requestWithin(method, params, c.timeout)
}

// requestWithin is request with its own wait.
func (c *client) requestWithin(method string, params obj, timeout time.Duration) (json.RawMessage, error) {
	ch := make(chan *message, 1)
	c.mu.Lock()
	id := c.nextID
	c.nextID++
	key := fmt.Sprint(id)
	c.waiting[key] = ch
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, errors.New("the server's stdout is closed")
	}
	m := obj{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	c.write(m)
	select {
	case resp := <-ch:
		if resp == nil {
			return nil, errors.New("the server's stdout closed before it answered")
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-time.After(timeout):
		c.mu.Lock()
		delete(c.waiting, key)
		c.mu.Unlock()
		return nil, fmt.Errorf("no answer to %s (id %d) within %v", method, id, timeout)
	}
}

func (c *client) notify(method string, params obj) {
	m := obj{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	c.write(m)
}

func (c *client) write(m obj) {
	line, _ := json.Marshal(m)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.verbose {
		fmt.Fprintf(os.Stderr, "mcp-client > %s\n", line)
	}
	if _, err := c.stdin.Write(append(line, '\n')); err != nil && c.verbose {
		fmt.Fprintf(os.Stderr, "mcp-client: write: %v\n", err)
	}
}

// read reads the server's stdout until it ends: it routes answers, answers
// the server's requests and counts notifications.
func (c *client) read(stdout io.Reader) {
	in := bufio.NewReader(stdout)
	for {
		line, err := in.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if c.verbose {
				fmt.Fprintf(os.Stderr, "mcp-client < %s\n", t)
			}
			c.dispatch(t)
		}
		if err != nil {
			break
		}
	}
	c.mu.Lock()
	c.closed = true
	for key, ch := range c.waiting {
		ch <- nil
		delete(c.waiting, key)
	}
	c.cond.Broadcast()
	c.mu.Unlock()
}

func (c *client) dispatch(line []byte) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		fmt.Fprintf(os.Stderr, "mcp-client: not JSON on the server's stdout: %.80q\n", line)
		c.mu.Lock()
		c.noise++
		c.mu.Unlock()
		return
	}
	switch {
	case m.Method == "" && m.ID != nil:
		var b bytes.Buffer
		json.Compact(&b, m.ID)
		c.mu.Lock()
		ch := c.waiting[b.String()]
		delete(c.waiting, b.String())
		c.mu.Unlock()
		if ch == nil {
			fmt.Fprintf(os.Stderr, "mcp-client: answer to unknown id %s\n", m.ID)
			return
		}
		ch <- &m
	case m.ID != nil:
		res, rpcErr := c.answer(m.Method, m.Params)
		reply := obj{"jsonrpc": "2.0", "id": m.ID}
		if rpcErr != nil {
			reply["error"] = rpcErr
		} else {
			reply["result"] = res
		}
		c.write(reply)
		c.mu.Lock()
		c.asked[m.Method]++
		c.cond.Broadcast()
		c.mu.Unlock()
	default:
		c.mu.Lock()
		if m.Method == "notifications/progress" {
			var p struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			}
			json.Unmarshal(m.Params, &p)
			var b bytes.Buffer
			json.Compact(&b, p.ProgressToken)
			c.progress[b.String()]++
		} else {
			c.notes[m.Method]++
		}
		c.mu.Unlock()
	}
}

// answer is the client's result for a server request (or an input request
// of a 2026-07-28 input-required result).
func (c *client) answer(method string, params json.RawMessage) (obj, *rpcError) {
	switch method {
	case "ping":
		return obj{}, nil
	case "roots/list":
		return obj{"roots": []obj{{"uri": c.root, "name": "fixture root"}}}, nil
	case "sampling/createMessage":
		var p struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(params, &p)
		prompt := ""
		if len(p.Messages) > 0 {
			var block struct{ Text string }
			json.Unmarshal(p.Messages[len(p.Messages)-1].Content, &block)
			prompt = block.Text
		}
		return obj{"role": "assistant", "content": obj{"type": "text", "text": "fixture answer to: " + prompt},
			"model": "fixture-model", "stopReason": "endTurn"}, nil
	case "elicitation/create":
		var p struct {
			RequestedSchema struct {
				Properties map[string]property `json:"properties"`
			} `json:"requestedSchema"`
		}
		json.Unmarshal(params, &p)
		c.mu.Lock()
		c.answers++
		n := c.answers
		c.mu.Unlock()
		content := obj{}
		for name, prop := range p.RequestedSchema.Properties {
			content[name] = prop.value(n)
		}
		return obj{"action": "accept", "content": content}, nil
	}
	return nil, &rpcError{Code: -32601, Message: "method not found: " + method}
}

// property is one property of an elicitation's requested schema.
type property struct {
	Type    string          `json:"type"`
	Format  string          `json:"format"`
	Default json.RawMessage `json:"default"`
	Enum    []any           `json:"enum"`
	OneOf   []struct {
		Const any `json:"const"`
	} `json:"oneOf"`
	Items *property `json:"items"`
	AnyOf []struct {
		Const any `json:"const"`
	} `json:"anyOf"`
}

// value is the client's answer for the property in its n-th elicitation:
// the default when there is one, else the first choice, else a value of
// the type ("answer N" for a plain string).
func (p property) value(n int) any {
	var def any
	if len(p.Default) > 0 && json.Unmarshal(p.Default, &def) == nil {
		return def
	}
	switch {
	case len(p.Enum) > 0:
		return p.Enum[0]
	case len(p.OneOf) > 0:
		return p.OneOf[0].Const
	case len(p.AnyOf) > 0:
		return p.AnyOf[0].Const
	}
	switch p.Type {
	case "number", "integer":
		return 1
	case "boolean":
		return true
	case "array":
		if p.Items != nil {
			return []any{p.Items.value(n)}
		}
		return []any{}
	}
	switch p.Format {
	case "email":
		return "ada@example.com"
	case "uri":
		return "https://example.com/"
	case "date":
		return "2026-01-01"
	case "date-time":
		return "2026-01-01T00:00:00Z"
	}
	return fmt.Sprintf("answer %d", n)
}
