// Command lsp-go is a small fixture language server for tapedeck's tests: a
// real peer that speaks the Language Server Protocol over stdio, each
// JSON-RPC 2.0 message behind a "Content-Length: N\r\n\r\n" header, with no
// newline after the body.
//
// Go standard library only, inside this module (no go.mod of its own; "go
// build ./..." skips it because it is under testdata/). Build it with
//
//	go build -o DIR/lsp-go ./testdata/lsp/go
//
// It works on any text: a word is a run of letters, digits and underscores.
// It answers initialize (serverInfo lsp-fixture-go 1.0.0; full document
// sync, hover, completion, definition), shutdown and exit, and handles
// textDocument/didOpen, didChange (full text) and didClose, publishing
// textDocument/publishDiagnostics on each open and change: one warning per
// line that contains the marker word, "TODO" unless workspace/configuration
// said otherwise ({"marker": "FIXME"} for the section "fixture"). hover says
// how often the word under the cursor occurs, completion offers the words of
// the open documents that start with the prefix before the cursor, definition
// points at the word's first occurrence. Positions count UTF-16 code units.
//
// When initialized arrives it asks the client what the client declared it
// supports: window/workDoneProgress/create with a token drawn from
// crypto/rand (and, once answered, $/progress begin and end with it),
// client/registerCapability with a random registration id (a file watcher),
// and workspace/configuration. Those two random values are the only thing
// that differs between two runs.
//
// LSP_FIXTURE_HOVER_NOUN, when set, replaces "occurrence(s)" in the hover
// text: a server whose hover changed, for the tests of replay.
//
// Requests before initialize get -32002, requests after shutdown -32600;
// exit ends it with 0 after shutdown and 1 otherwise, and so does stdin EOF.
// A header it cannot read ends it as EOF does. It logs on stderr, never on
// stdout.
//
// -broken MODE (or LSP_FIXTURE_BROKEN=MODE) makes it misbehave in one named
// way, for check's tests:
//
//	no-content-length    after the initialize answer, a window/logMessage whose
//	                     header has Content-Type but no Content-Length
//	wrong-length         after the initialize answer, a window/logMessage whose
//	                     Content-Length is one less than its body
//	notification-with-id publishDiagnostics is sent with an id
//	result-and-error     the hover answer has both result and error
//	after-shutdown       a publishDiagnostics after the shutdown answer
//	non-utf8             the hover text holds a byte that is not UTF-8 (0xFF)
//	before-init          workspace/configuration is asked before the
//	                     initialize answer
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

type obj = map[string]any

var brokenModes = []string{"no-content-length", "wrong-length", "notification-with-id",
	"result-and-error", "after-shutdown", "non-utf8", "before-init"}

// message is one JSON-RPC message in either direction; ids are kept as
// their JSON text.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type server struct {
	broken string
	logger *log.Logger
	out    io.Writer

	phase      int // 0 before initialize, 1 initialized, 2 after shutdown
	clientCaps struct {
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Workspace struct {
			Configuration         bool `json:"configuration"`
			DidChangeWatchedFiles struct {
				DynamicRegistration bool `json:"dynamicRegistration"`
			} `json:"didChangeWatchedFiles"`
		} `json:"workspace"`
	}
	docs    map[string][]string // uri -> lines
	marker  string
	nextID  int
	pending map[string]string // id text of our requests -> method
	token   string            // the work-done progress token we created
}

func main() {
	broken := flag.String("broken", os.Getenv("LSP_FIXTURE_BROKEN"), "misbehave in one named way: "+fmt.Sprint(brokenModes))
	flag.Parse()
	logger := log.New(os.Stderr, "lsp-go: ", 0)
	if *broken != "" && !slices.Contains(brokenModes, *broken) {
		logger.Printf("unknown -broken mode %q: use one of %v", *broken, brokenModes)
		os.Exit(2)
	}
	s := &server{broken: *broken, logger: logger, out: os.Stdout, docs: map[string][]string{},
		marker: "TODO", nextID: 1, pending: map[string]string{}}
	os.Exit(s.run(os.Stdin))
}

// run reads messages until exit or EOF and returns the exit code.
func (s *server) run(stdin io.Reader) int {
	s.logger.Printf("started (broken=%q)", s.broken)
	in := bufio.NewReader(stdin)
	for {
		body, err := readMessage(in)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.logger.Print(err)
			}
			s.logger.Print("stdin closed without exit")
			return s.exitCode()
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			s.logger.Printf("body is not JSON: %v", err)
			s.send(obj{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32700, "parse error: " + err.Error()}})
			continue
		}
		if m.Method == "exit" {
			s.logger.Printf("exit (%d)", s.exitCode())
			return s.exitCode()
		}
		switch {
		case m.Method == "" && m.ID != nil:
			s.answered(m)
		case m.ID == nil:
			s.notification(m)
		default:
			s.request(m)
		}
	}
}

// exitCode is 0 after shutdown, else 1.
func (s *server) exitCode() int {
	if s.phase == 2 {
		return 0
	}
	return 1
}

// readMessage reads one header block and its body. Header lines may end in
// "\r\n" or "\n"; fields other than Content-Length are ignored.
func readMessage(in *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read header: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("header line %q has no colon", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || n > 64<<20 {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("header without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(in, body); err != nil {
		return nil, fmt.Errorf("read body of %d bytes: %w", length, err)
	}
	return body, nil
}

func (s *server) request(m message) {
	if s.phase == 0 && m.Method != "initialize" {
		s.fail(m.ID, -32002, "server not initialized: "+m.Method)
		return
	}
	if s.phase == 2 {
		s.fail(m.ID, -32600, m.Method+" after shutdown")
		return
	}
	switch m.Method {
	case "initialize":
		s.initialize(m)
	case "shutdown":
		s.phase = 2
		if s.broken == "after-shutdown" {
			// Not window/logMessage: gopls sends that after its shutdown
			// answer too ("Shutdown session"). In the answer's own write,
			// so that whoever relays it sees the notification before the
			// client can have answered with exit.
			answer := s.encode(obj{"jsonrpc": "2.0", "id": m.ID, "result": nil})
			after := s.encode(obj{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": obj{"uri": "file:///after-shutdown.txt", "diagnostics": []obj{}}})
			s.write(answer, after)
			break
		}
		s.reply(m.ID, nil)
	case "textDocument/hover":
		s.hover(m)
	case "textDocument/completion":
		s.completion(m)
	case "textDocument/definition":
		s.definition(m)
	default:
		s.fail(m.ID, -32601, "method not found: "+m.Method)
	}
}

func (s *server) initialize(m message) {
	if s.phase != 0 {
		s.fail(m.ID, -32600, "initialize sent twice")
		return
	}
	var p struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(m.Params, &p)
	_ = json.Unmarshal(p.Capabilities, &s.clientCaps)
	if s.broken == "before-init" {
		s.ask("workspace/configuration", obj{"items": []obj{{"section": "fixture"}}})
	}
	s.phase = 1
	s.reply(m.ID, obj{
		"capabilities": obj{
			"positionEncoding":   "utf-16",
			"textDocumentSync":   obj{"openClose": true, "change": 1},
			"hoverProvider":      true,
			"completionProvider": obj{"triggerCharacters": []string{"."}},
			"definitionProvider": true,
		},
		"serverInfo": obj{"name": "lsp-fixture-go", "version": "1.0.0"},
	})
	switch s.broken {
	case "no-content-length":
		body, _ := json.Marshal(obj{"jsonrpc": "2.0", "method": "window/logMessage", "params": obj{"type": 3, "message": "no length"}})
		s.write([]byte("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"), body)
	case "wrong-length":
		body, _ := json.Marshal(obj{"jsonrpc": "2.0", "method": "window/logMessage", "params": obj{"type": 3, "message": "wrong length"}})
		s.write(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)-1), body)
	}
}

func (s *server) notification(m message) {
	switch m.Method {
	case "initialized":
		s.initialized()
	case "textDocument/didOpen":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
				Text    string `json:"text"`
			} `json:"textDocument"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.docs[p.TextDocument.URI] = strings.Split(p.TextDocument.Text, "\n")
		s.publish(p.TextDocument.URI, p.TextDocument.Version)
	case "textDocument/didChange":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
			} `json:"textDocument"`
			ContentChanges []struct {
				Text string `json:"text"`
			} `json:"contentChanges"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if _, open := s.docs[p.TextDocument.URI]; !open || len(p.ContentChanges) == 0 {
			s.logger.Printf("didChange of %s ignored", p.TextDocument.URI)
			return
		}
		last := p.ContentChanges[len(p.ContentChanges)-1] // full sync: the last one is the text
		s.docs[p.TextDocument.URI] = strings.Split(last.Text, "\n")
		s.publish(p.TextDocument.URI, p.TextDocument.Version)
	case "textDocument/didClose":
		var p struct {
			TextDocument struct{ URI string } `json:"textDocument"`
		}
		_ = json.Unmarshal(m.Params, &p)
		delete(s.docs, p.TextDocument.URI)
		s.notify("textDocument/publishDiagnostics", obj{"uri": p.TextDocument.URI, "diagnostics": []obj{}})
	default:
		s.logger.Printf("notification %s ignored", m.Method)
	}
}

// initialized asks the client what it declared it supports.
func (s *server) initialized() {
	s.logger.Print("initialized")
	s.notify("window/logMessage", obj{"type": 3, "message": "lsp-fixture-go ready"})
	if s.clientCaps.Window.WorkDoneProgress {
		s.token = "fixture-" + rand.Text()
		s.ask("window/workDoneProgress/create", obj{"token": s.token})
	}
	if s.clientCaps.Workspace.DidChangeWatchedFiles.DynamicRegistration {
		s.ask("client/registerCapability", obj{"registrations": []obj{{
			"id": rand.Text(), "method": "workspace/didChangeWatchedFiles",
			"registerOptions": obj{"watchers": []obj{{"globPattern": "**/*.txt"}}},
		}}})
	}
	if s.clientCaps.Workspace.Configuration {
		s.ask("workspace/configuration", obj{"items": []obj{{"section": "fixture"}}})
	}
}

// answered handles the client's answer to one of our requests.
func (s *server) answered(m message) {
	key := string(compact(m.ID))
	method, ok := s.pending[key]
	delete(s.pending, key)
	switch {
	case !ok:
		s.logger.Printf("answer to unknown request %s dropped", m.ID)
	case m.Error != nil:
		s.logger.Printf("%s failed: %s", method, m.Error.Message)
	case method == "window/workDoneProgress/create":
		s.notify("$/progress", obj{"token": s.token, "value": obj{"kind": "begin", "title": "Indexing", "percentage": 0}})
		s.notify("$/progress", obj{"token": s.token, "value": obj{"kind": "end", "message": fmt.Sprintf("%d document(s)", len(s.docs))}})
	case method == "workspace/configuration":
		var items []struct {
			Marker string `json:"marker"`
		}
		_ = json.Unmarshal(m.Result, &items)
		if len(items) > 0 && items[0].Marker != "" {
			s.marker = items[0].Marker
			s.logger.Printf("marker is %q", s.marker)
		}
	}
}

// publish sends the diagnostics of one document.
func (s *server) publish(uri string, version int) {
	diags := []obj{}
	for i, line := range s.docs[uri] {
		if col := strings.Index(line, s.marker); col >= 0 {
			start := utf16Len(line[:col])
			diags = append(diags, obj{
				"range":    obj{"start": position{i, start}, "end": position{i, start + utf16Len(s.marker)}},
				"severity": 2, "source": "lsp-fixture-go", "message": s.marker + " left in the text",
			})
		}
	}
	params := obj{"uri": uri, "version": version, "diagnostics": diags}
	if s.broken == "notification-with-id" {
		s.send(obj{"jsonrpc": "2.0", "id": 99, "method": "textDocument/publishDiagnostics", "params": params})
		return
	}
	s.notify("textDocument/publishDiagnostics", params)
}

type positionParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Position position `json:"position"`
}

// wordAt returns the word around the position and its first and last
// UTF-16 columns, or "" when there is none.
func (s *server) wordAt(p positionParams) (word string, start, end int) {
	lines := s.docs[p.TextDocument.URI]
	if p.Position.Line < 0 || p.Position.Line >= len(lines) {
		return "", 0, 0
	}
	units := utf16.Encode([]rune(lines[p.Position.Line]))
	isWord := func(i int) bool {
		r := rune(units[i])
		return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	start = min(max(p.Position.Character, 0), len(units))
	for start > 0 && isWord(start-1) {
		start--
	}
	end = start
	for end < len(units) && isWord(end) {
		end++
	}
	return string(utf16.Decode(units[start:end])), start, end
}

func (s *server) hover(m message) {
	var p positionParams
	_ = json.Unmarshal(m.Params, &p)
	word, start, end := s.wordAt(p)
	if word == "" {
		s.reply(m.ID, nil)
		return
	}
	count := 0
	for _, line := range s.docs[p.TextDocument.URI] {
		count += len(words(line, word))
	}
	noun := "occurrence(s)"
	if n := os.Getenv("LSP_FIXTURE_HOVER_NOUN"); n != "" {
		noun = n // a changed hover, for the tests that a replay catches one
	}
	text := fmt.Sprintf("**%s**: %d %s in this document", word, count, noun)
	result := obj{"contents": obj{"kind": "markdown", "value": text},
		"range": obj{"start": position{p.Position.Line, start}, "end": position{p.Position.Line, end}}}
	switch s.broken {
	case "result-and-error":
		s.send(obj{"jsonrpc": "2.0", "id": m.ID, "result": result, "error": rpcError{-32603, "hover failed"}})
	case "non-utf8":
		result["contents"] = obj{"kind": "markdown", "value": "\x00INVALID\x00"}
		body, _ := json.Marshal(obj{"jsonrpc": "2.0", "id": m.ID, "result": result})
		body = bytes.Replace(body, []byte(`\u0000INVALID\u0000`), []byte(text+" \xff"), 1)
		s.write(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)), body)
	default:
		s.reply(m.ID, result)
	}
}

func (s *server) completion(m message) {
	var p positionParams
	_ = json.Unmarshal(m.Params, &p)
	word, start, _ := s.wordAt(p)
	units := utf16.Encode([]rune(word))
	prefix := string(utf16.Decode(units[:min(max(p.Position.Character-start, 0), len(units))]))
	seen := map[string]bool{}
	for _, lines := range s.docs {
		for _, line := range lines {
			for _, w := range strings.FieldsFunc(line, func(r rune) bool { return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) }) {
				if strings.HasPrefix(w, prefix) && w != prefix {
					seen[w] = true
				}
			}
		}
	}
	items := []obj{}
	for _, w := range slices.Sorted(maps.Keys(seen)) {
		items = append(items, obj{"label": w, "kind": 1})
	}
	s.reply(m.ID, obj{"isIncomplete": false, "items": items})
}

func (s *server) definition(m message) {
	var p positionParams
	_ = json.Unmarshal(m.Params, &p)
	word, _, _ := s.wordAt(p)
	if word != "" {
		for i, line := range s.docs[p.TextDocument.URI] {
			if cols := words(line, word); len(cols) > 0 {
				s.reply(m.ID, obj{"uri": p.TextDocument.URI, "range": obj{
					"start": position{i, cols[0]}, "end": position{i, cols[0] + utf16Len(word)}}})
				return
			}
		}
	}
	s.reply(m.ID, nil)
}

// words returns the UTF-16 columns where word occurs in line as a whole word.
func words(line, word string) []int {
	var cols []int
	isWord := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 0; ; {
		j := strings.Index(line[i:], word)
		if j < 0 {
			return cols
		}
		at := i + j
		before, _ := lastRune(line[:at])
		after, _ := firstRune(line[at+len(word):])
		if !isWord(before) && !isWord(after) {
			cols = append(cols, utf16Len(line[:at]))
		}
		i = at + len(word)
	}
}

func firstRune(s string) (rune, bool) {
	for _, r := range s {
		return r, true
	}
	return 0, false
}

func lastRune(s string) (rune, bool) {
	r := []rune(s)
	if len(r) == 0 {
		return 0, false
	}
	return r[len(r)-1], true
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// ---- the wire ----------------------------------------------------------------

func (s *server) reply(id json.RawMessage, result any) {
	s.send(obj{"jsonrpc": "2.0", "id": id, "result": result})
}

func (s *server) fail(id json.RawMessage, code int, msg string) {
	s.send(obj{"jsonrpc": "2.0", "id": id, "error": rpcError{code, msg}})
}

func (s *server) notify(method string, params obj) {
	s.send(obj{"jsonrpc": "2.0", "method": method, "params": params})
}

// ask sends a request to the client; its answer comes to answered.
func (s *server) ask(method string, params obj) {
	id := s.nextID
	s.nextID++
	s.pending[strconv.Itoa(id)] = method
	s.send(obj{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func (s *server) send(v obj) {
	if msg := s.encode(v); msg != nil {
		s.write(msg, nil)
	}
}

// encode is v as a message: its header and its body; nil when v cannot
// be encoded.
func (s *server) encode(v obj) []byte {
	body, err := json.Marshal(v)
	if err != nil {
		s.logger.Printf("encode: %v", err)
		return nil
	}
	return append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)), body...)
}

// write writes a header and a body (or two messages) in one write.
func (s *server) write(header, body []byte) {
	if _, err := s.out.Write(append(header, body...)); err != nil {
		s.logger.Printf("write stdout: %v", err)
	}
}

func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
