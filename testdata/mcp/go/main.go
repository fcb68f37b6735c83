// Command mcp-go is a fixture MCP server for tapedeck's tests: a real peer
// that speaks the Model Context Protocol over stdio (JSON-RPC 2.0, one JSON
// object per line) and issues values the client must send back.
//
// Go standard library only, inside this module (no go.mod of its own; "go
// build ./..." skips it because it is under testdata/). Build it with
//
//	go build -o DIR/mcp-go ./testdata/mcp/go
//
// It is dual-era. A client that opens with "initialize" gets a legacy
// session (2025-06-18 or 2025-11-25, the version it asked for when it is one
// of these, else 2025-11-25); a request whose params._meta carries
// "io.modelcontextprotocol/protocolVersion": "2026-07-28" is served
// statelessly by the 2026-07-28 rules, with or without initialize
// ("server/discover" lists the versions).
//
// What differs between two runs is only what it draws from crypto/rand once
// per value: pagination cursors (tools/list, resources/list), task ids, the
// HMAC key that signs the state tool's requestState, and the ids nobody sees.
// It never reads the clock into its output (task timestamps are fixed), so a
// pinned clock cannot make two runs agree: a replay must carry the values
// back. The tools (see tools.go): echo, add, fail, slow (progress), ask
// (sampling/createMessage), roots (roots/list), elicit (elicitation/create),
// task (task-augmented, 2025-11-25), state (input-required with a signed
// requestState, 2026-07-28).
//
// Tool calls and tasks/result run concurrently; everything else is answered
// in the order it arrives. At stdin EOF it stops reading, fails the requests
// it is still waiting on the client for, lets running calls finish and exits
// 0. It logs one line per event on stderr, never on stdout.
//
// -broken MODE (or MCP_FIXTURE_BROKEN=MODE) makes it misbehave in one named
// way, for check's tests:
//
//	stdout-noise           prints a non-JSON banner line on stdout at start
//	before-init            sends roots/list before answering initialize
//	error-for-tool-failure the fail tool answers with a JSON-RPC error, not isError
//	unknown-progress-token slow's progress notifications carry a token nobody sent
//	id-reuse               every request it sends has id 1 (and it pings after initialized)
//	no-capability          ask, roots and elicit send their request even when the
//	                       client did not declare the capability
//	bad-result-shape       the tools/list result has no "tools" member
//	unanswered             the first tools/call of echo is never answered
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"sync"
)

// obj is a JSON object as it is written: encoding/json sorts its keys, so
// the output is the same byte for byte from run to run.
type obj = map[string]any

const (
	modernVersion = "2026-07-28"
	latestLegacy  = "2025-11-25"
	fixedTime     = "2026-01-01T00:00:00Z" // every timestamp it writes
)

var (
	legacyVersions = []string{"2025-11-25", "2025-06-18"} // newest first
	brokenModes    = []string{"stdout-noise", "before-init", "error-for-tool-failure",
		"unknown-progress-token", "id-reuse", "no-capability", "bad-result-shape", "unanswered"}
	serverInfo = obj{"name": "mcp-fixture-go", "title": "tapedeck fixture MCP server (Go)", "version": "1.0.0"}
)

// message is one JSON-RPC message in either direction. IDs are kept as their
// JSON text so that they are echoed exactly as sent.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object; as a Go error it is what a handler
// returns to answer with an error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// request is one client request being handled.
type request struct {
	ctx    context.Context
	id     json.RawMessage
	method string
	params obj  // never nil
	modern bool // params._meta names the 2026-07-28 revision
	caps   obj  // the client's capabilities for this request (never nil)
}

// reply is the client's answer to a request the server sent.
type reply struct {
	result json.RawMessage
	err    error
}

type server struct {
	broken string
	logger *log.Logger // stderr
	stdin  io.Reader

	wmu sync.Mutex // serialises writes to stdout
	enc *json.Encoder

	wg   sync.WaitGroup // handlers running outside the read loop
	mu   sync.Mutex     // guards everything below
	done bool           // stdin is at EOF: no new requests to the client
	// Legacy session: phase 0 before initialize, 1 answered, 2 initialized.
	phase    int
	version  string
	caps     obj
	logLevel string // "" until logging/setLevel: no notifications/message
	nextID   int
	pending  map[string]chan reply         // id text of our requests -> waiter
	inFlight map[string]context.CancelFunc // id text of client requests -> cancel
	cursors  map[string]int                // issued cursor -> offset
	tasks    map[string]*task
	spent    map[string]bool // nonces of requestStates already used
	key      []byte          // HMAC key for requestState
	echoes   int             // tools/call echo seen (for -broken unanswered)
}

func main() {
	broken := flag.String("broken", os.Getenv("MCP_FIXTURE_BROKEN"), "misbehave in one named way: "+fmt.Sprint(brokenModes))
	flag.Parse()
	logger := log.New(os.Stderr, "mcp-go: ", 0)
	if *broken != "" && !slices.Contains(brokenModes, *broken) {
		logger.Printf("unknown -broken mode %q: use one of %v", *broken, brokenModes)
		os.Exit(2)
	}
	s := &server{
		broken:   *broken,
		logger:   logger,
		stdin:    os.Stdin,
		enc:      json.NewEncoder(os.Stdout),
		caps:     obj{},
		nextID:   1,
		pending:  map[string]chan reply{},
		inFlight: map[string]context.CancelFunc{},
		cursors:  map[string]int{},
		tasks:    map[string]*task{},
		spent:    map[string]bool{},
		key:      make([]byte, 32),
	}
	s.enc.SetEscapeHTML(false)
	rand.Read(s.key) // never fails (crypto/rand documents that it crashes instead)
	if err := s.run(); err != nil {
		logger.Print(err)
		os.Exit(1)
	}
}

// run reads messages until EOF, then waits for running handlers.
func (s *server) run() error {
	if s.broken == "stdout-noise" {
		fmt.Println("mcp-fixture-go 1.0.0 listening on stdio")
	}
	s.logger.Printf("started (broken=%q)", s.broken)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := bufio.NewReader(s.stdin)
	var err error
	for {
		var line []byte
		line, err = in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.handle(ctx, line)
		}
		if err != nil {
			break
		}
	}
	s.mu.Lock()
	s.done = true
	for id, ch := range s.pending {
		ch <- reply{err: errors.New("stdin closed before the client answered")}
		delete(s.pending, id)
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.logger.Print("stdin closed, bye")
	if err == io.EOF {
		return nil
	}
	return fmt.Errorf("read stdin: %w", err)
}

// handle dispatches one line.
func (s *server) handle(ctx context.Context, line []byte) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		s.logger.Printf("not JSON-RPC: %v", err)
		s.send(obj{"jsonrpc": "2.0", "id": nil, "error": errorf(-32700, "parse error: %v", err)})
		return
	}
	switch {
	case m.Method == "" && m.ID != nil:
		s.deliver(m)
	case m.Method != "" && m.ID == nil:
		s.notification(m)
	case m.Method != "":
		s.request(ctx, m)
	default:
		s.send(obj{"jsonrpc": "2.0", "id": nil, "error": errorf(-32600, "invalid request: neither method nor id")})
	}
}

// request handles a client request: inline, or on its own goroutine for the
// methods that wait (tools/call, tasks/result).
func (s *server) request(ctx context.Context, m message) {
	r := &request{id: m.ID, method: m.Method, params: obj{}}
	if len(m.Params) > 0 {
		d := json.NewDecoder(bytes.NewReader(m.Params))
		d.UseNumber() // progress tokens and numbers go back as sent
		if err := d.Decode(&r.params); err != nil {
			s.answer(r, nil, errorf(-32602, "params of %s: %v", m.Method, err))
			return
		}
	}
	meta, _ := r.params["_meta"].(obj)
	if v, ok := meta["io.modelcontextprotocol/protocolVersion"].(string); ok {
		if v != modernVersion {
			s.answer(r, nil, &rpcError{Code: -32022, Message: "Unsupported protocol version",
				Data: obj{"supported": append([]string{modernVersion}, legacyVersions...), "requested": v}})
			return
		}
		r.modern = true
		r.caps, _ = meta["io.modelcontextprotocol/clientCapabilities"].(obj)
	} else {
		s.mu.Lock()
		r.caps = s.caps
		phase := s.phase
		s.mu.Unlock()
		if phase == 0 && m.Method != "initialize" && m.Method != "ping" && m.Method != "server/discover" {
			s.answer(r, nil, errorf(-32600, "%s before initialize: send initialize first", m.Method))
			return
		}
	}
	if r.caps == nil {
		r.caps = obj{}
	}
	if m.Method == "tools/call" || m.Method == "tasks/result" {
		if s.broken == "unanswered" && m.Method == "tools/call" && r.params["name"] == "echo" {
			s.mu.Lock()
			s.echoes++
			first := s.echoes == 1
			s.mu.Unlock()
			if first {
				s.logger.Print("-broken unanswered: not answering this echo call")
				return
			}
		}
		callCtx, cancel := context.WithCancel(ctx)
		r.ctx = callCtx
		s.mu.Lock()
		s.inFlight[string(r.id)] = cancel
		s.mu.Unlock()
		s.wg.Go(func() {
			defer cancel()
			res, err := s.dispatch(r)
			s.mu.Lock()
			delete(s.inFlight, string(r.id))
			s.mu.Unlock()
			if callCtx.Err() != nil && ctx.Err() == nil {
				s.logger.Printf("request %s cancelled: no answer", r.id)
				return
			}
			s.answer(r, res, err)
		})
		return
	}
	r.ctx = ctx
	res, err := s.dispatch(r)
	s.answer(r, res, err)
}

// dispatch runs the handler of r.method.
func (s *server) dispatch(r *request) (obj, error) {
	switch r.method {
	case "initialize":
		return s.initialize(r)
	case "ping":
		return obj{}, nil
	case "server/discover":
		return obj{"supportedVersions": append([]string{modernVersion}, legacyVersions...),
			"capabilities": s.capabilities(modernVersion), "instructions": instructions}, nil
	case "logging/setLevel":
		level, _ := r.params["level"].(string)
		if !slices.Contains(logLevels, level) {
			return nil, errorf(-32602, "unknown log level %q", level)
		}
		s.mu.Lock()
		s.logLevel = level
		s.mu.Unlock()
		return obj{}, nil
	case "tools/list":
		return s.toolsList(r)
	case "tools/call":
		return s.toolsCall(r)
	case "tasks/get":
		return s.tasksGet(r)
	case "tasks/result":
		return s.tasksResult(r)
	case "resources/list":
		return s.resourcesList(r)
	case "resources/templates/list":
		return obj{"resourceTemplates": []obj{{"uriTemplate": "fixture://notes/{n}", "name": "note", "mimeType": "text/plain"}}}, nil
	case "resources/read":
		return s.resourcesRead(r)
	case "prompts/list":
		return obj{"prompts": prompts}, nil
	case "prompts/get":
		return s.promptsGet(r)
	}
	return nil, errorf(-32601, "method not found: %s", r.method)
}

func (s *server) initialize(r *request) (obj, error) {
	want, _ := r.params["protocolVersion"].(string)
	version := latestLegacy
	if slices.Contains(legacyVersions, want) {
		version = want
	}
	caps, _ := r.params["capabilities"].(obj)
	if caps == nil {
		caps = obj{}
	}
	s.mu.Lock()
	s.phase, s.version, s.caps = 1, version, caps
	s.mu.Unlock()
	s.logger.Printf("initialize: client asked %q, answering %s", want, version)
	if s.broken == "before-init" {
		s.sendRequest("roots/list", obj{}) // its answer is logged and dropped
	}
	return obj{"protocolVersion": version, "capabilities": s.capabilities(version),
		"serverInfo": serverInfo, "instructions": instructions}, nil
}

const instructions = "A fixture server for tapedeck's tests. Tools echo, add, fail, slow, ask, roots, elicit, task, state."

// capabilities is what the server declares for a protocol version.
func (s *server) capabilities(version string) obj {
	c := obj{"tools": obj{}, "resources": obj{}, "prompts": obj{}, "logging": obj{}}
	if version == "2025-11-25" {
		c["tasks"] = obj{"requests": obj{"tools": obj{"call": obj{}}}}
	}
	return c
}

// notification handles a client notification.
func (s *server) notification(m message) {
	switch m.Method {
	case "notifications/initialized":
		s.mu.Lock()
		s.phase = 2
		s.mu.Unlock()
		s.logger.Print("initialized")
		if s.broken == "id-reuse" {
			s.sendRequest("ping", obj{})
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.mu.Lock()
		cancel := s.inFlight[string(compact(p.RequestID))]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		s.logger.Printf("notification %s ignored", m.Method)
	}
}

// deliver hands the client's answer to the request waiting for it.
func (s *server) deliver(m message) {
	key := string(compact(m.ID))
	s.mu.Lock()
	ch := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if ch == nil {
		s.logger.Printf("answer to unknown request %s dropped", m.ID)
		return
	}
	if m.Error != nil {
		ch <- reply{err: m.Error}
		return
	}
	ch <- reply{result: m.Result}
}

// sendRequest sends a request to the client and returns the channel its
// answer will arrive on (buffered: nobody has to wait for it). After stdin
// EOF it answers at once with an error.
func (s *server) sendRequest(method string, params obj) chan reply {
	ch := make(chan reply, 1)
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		ch <- reply{err: errors.New("stdin closed")}
		return ch
	}
	id := s.nextID
	if s.broken != "id-reuse" {
		s.nextID++
	}
	s.pending[fmt.Sprint(id)] = ch
	s.mu.Unlock()
	s.send(obj{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return ch
}

// call sends a request to the client and waits for its answer.
func (s *server) call(ctx context.Context, method string, params obj) (json.RawMessage, error) {
	select {
	case rep := <-s.sendRequest(method, params):
		if rep.err != nil {
			return nil, fmt.Errorf("%s: %w", method, rep.err)
		}
		return rep.result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// answer writes the response to r. Results of 2026-07-28 requests carry
// resultType and the server's identity in _meta.
func (s *server) answer(r *request, res obj, err error) {
	if err != nil {
		var re *rpcError
		if !errors.As(err, &re) {
			re = errorf(-32603, "%v", err)
		}
		s.send(obj{"jsonrpc": "2.0", "id": r.id, "error": re})
		return
	}
	if r.modern {
		if _, ok := res["resultType"]; !ok {
			res["resultType"] = "complete"
		}
		res["_meta"] = obj{"io.modelcontextprotocol/serverInfo": serverInfo}
	}
	s.send(obj{"jsonrpc": "2.0", "id": r.id, "result": res})
}

// notify sends a notification.
func (s *server) notify(method string, params obj) {
	s.send(obj{"jsonrpc": "2.0", "method": method, "params": params})
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// log sends notifications/message when the client asked for this level:
// with logging/setLevel (legacy) or the request's _meta logLevel (2026-07-28).
func (s *server) log(r *request, level, text string) {
	threshold := ""
	if r.modern {
		meta, _ := r.params["_meta"].(obj)
		threshold, _ = meta["io.modelcontextprotocol/logLevel"].(string)
	} else {
		s.mu.Lock()
		threshold = s.logLevel
		s.mu.Unlock()
	}
	if threshold == "" || slices.Index(logLevels, level) < slices.Index(logLevels, threshold) {
		return
	}
	s.notify("notifications/message", obj{"level": level, "logger": "mcp-fixture-go", "data": text})
}

// send writes one message as one line.
func (s *server) send(v obj) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.enc.Encode(v); err != nil {
		s.logger.Printf("write stdout: %v", err)
	}
}

// compact is JSON text without insignificant whitespace, to compare ids.
func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
