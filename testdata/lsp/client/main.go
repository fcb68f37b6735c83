// Command lsp-client is a scripted LSP client for tapedeck's tests: it starts
// a language server command, drives it over stdio (JSON-RPC 2.0 behind
// "Content-Length: N\r\n\r\n" headers) through one fixed session, answers
// the server's requests, and prints one line per step on stdout. Run under
// it, "tapedeck record -- SERVER" records a real session:
//
//	lsp-client [flags] -- tapedeck record -- gopls
//
// Go standard library only, inside this module; build it with
// "go build -o DIR/lsp-client ./testdata/lsp/client".
//
// The session: initialize (rootUri and one workspace folder: -root), then
// initialized, didOpen of -file, hover and definition on the last occurrence
// of -hover / -definition, completion right after the first occurrence of
// -complete, a didChange that appends -change (full text, version 2) and a
// wait for the publishDiagnostics of version 2 (or of no version) with at
// least one diagnostic, then shutdown and exit, and a wait for the server to
// end.
//
// Without -root it writes a workspace of its own in a temporary folder
// (removed at the end) for -lang: "text" (notes.txt, for ../go) or "go"
// (go.mod and main.go, for gopls). Each -lang has its defaults for -file,
// -hover, -definition, -complete and -change; the file is read from -root.
//
// It declares window.workDoneProgress, workspace.configuration,
// workspace.workspaceFolders and dynamic registration of
// didChangeWatchedFiles, and answers: window/workDoneProgress/create,
// client/registerCapability, client/unregisterCapability and
// window/showMessageRequest with null; workspace/configuration with -config
// (a JSON value, default {}) for each item; workspace/workspaceFolders with
// the folder; anything else with -32601.
//
// It exits 0 when every step got what it expects, 1 when one did not (each
// such step prints a line starting "FAIL"; a message it cannot frame ends the
// session), 2 on bad usage. -v logs every message both ways on stderr.
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
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
)

type obj = map[string]any

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

func (e *rpcError) Error() string { return fmt.Sprintf("error %d %s", e.Code, e.Message) }

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// defaults of each -lang: the files of the workspace it writes, then the
// file to open and the words of each step.
var defaults = map[string]struct {
	files                                     map[string]string
	file, hover, definition, complete, change string
}{
	"text": {
		files: map[string]string{"notes.txt": "hello world\nthe world is round\nhello again\n"},
		file:  "notes.txt", hover: "world", definition: "world", complete: "wo",
		change: "TODO: mention the moon\n",
	},
	"go": {
		files: map[string]string{
			"go.mod":  "module example.com/fixture\n\ngo 1.22\n",
			"main.go": "package main\n\nimport \"fmt\"\n\nfunc greet(name string) string {\n\treturn \"hello, \" + name\n}\n\nfunc main() {\n\tfmt.Println(greet(\"world\"))\n}\n",
		},
		file: "main.go", hover: "greet", definition: "greet", complete: "fmt.",
		change: "\nfunc broken() { undefinedThing() }\n",
	},
}

type client struct {
	stdin   io.WriteCloser
	wmu     sync.Mutex
	timeout time.Duration
	verbose bool
	config  json.RawMessage
	folder  obj

	mu      sync.Mutex
	nextID  int
	waiting map[string]chan *message
	closed  error               // why reading stopped (nil while it runs)
	diags   map[string][]string // uri -> messages of the latest publish...
	diagVer map[string]int      // ... and its version (-1: none)
	diagCh  chan struct{}       // signalled on each publishDiagnostics
	asked   map[string]int      // server requests answered, by method
	notes   map[string]int      // notifications, by method
	failed  bool
}

func main() { os.Exit(run()) }

func run() int {
	lang := flag.String("lang", "text", `the workspace and defaults without -root: "text" or "go"`)
	root := flag.String("root", "", "the workspace folder (default: a temporary one written for -lang)")
	file := flag.String("file", "", "the document to open, relative to -root")
	hover := flag.String("hover", "", "hover over the last occurrence of this word")
	definition := flag.String("definition", "", "ask the definition of the last occurrence of this word")
	complete := flag.String("complete", "", "ask completion right after the first occurrence of this text")
	change := flag.String("change", "", "text the didChange appends")
	config := flag.String("config", "{}", "the JSON value answered for each workspace/configuration item")
	timeout := flag.Duration("timeout", 30*time.Second, "how long to wait for each answer and for the diagnostics")
	verbose := flag.Bool("v", false, "log every message both ways on stderr")
	flag.Parse()
	d, ok := defaults[*lang]
	if flag.NArg() == 0 || !ok || !json.Valid([]byte(*config)) {
		fmt.Fprintln(os.Stderr, `lsp-client: usage: lsp-client [-lang text|go] [-root DIR] [-config JSON] [flags] -- SERVER [ARGS...]`)
		return 2
	}
	for _, f := range []struct {
		p   *string
		def string
	}{{file, d.file}, {hover, d.hover}, {definition, d.definition}, {complete, d.complete}, {change, d.change}} {
		if *f.p == "" {
			*f.p = f.def
		}
	}
	if *root == "" {
		dir, err := os.MkdirTemp("", "lsp-client-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "lsp-client: workspace: %v\n", err)
			return 2
		}
		defer os.RemoveAll(dir)
		for name, text := range d.files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				fmt.Fprintf(os.Stderr, "lsp-client: workspace: %v\n", err)
				return 2
			}
		}
		*root = dir
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lsp-client: -root: %v\n", err)
		return 2
	}
	text, err := os.ReadFile(filepath.Join(abs, *file))
	if err != nil {
		fmt.Fprintf(os.Stderr, "lsp-client: -file: %v\n", err)
		return 2
	}
	rootURI := fileURI(abs)
	docURI := fileURI(filepath.Join(abs, *file))

	c := &client{timeout: *timeout, verbose: *verbose, config: json.RawMessage(*config),
		folder: obj{"uri": rootURI, "name": filepath.Base(abs)}, nextID: 1,
		waiting: map[string]chan *message{}, diags: map[string][]string{}, diagVer: map[string]int{},
		diagCh: make(chan struct{}, 1), asked: map[string]int{}, notes: map[string]int{}}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err1 := cmd.StdinPipe()
	stdout, err2 := cmd.StdoutPipe()
	if err := errors.Join(err1, err2, cmd.Start()); err != nil {
		fmt.Fprintf(os.Stderr, "lsp-client: start %s: %v\n", flag.Arg(0), err)
		return 2
	}
	c.stdin = stdin
	var wg sync.WaitGroup
	readDone := make(chan struct{})
	wg.Go(func() { defer close(readDone); c.read(stdout) })

	c.session(rootURI, docURI, *file, string(text), *hover, *definition, *complete, *change)

	// Wait closes the stdout pipe: first read it to its end.
	stdin.Close()
	select {
	case <-readDone:
	case <-time.After(c.timeout):
		c.fail("exit: the server's stdout still open %v after exit: killed", c.timeout)
		cmd.Process.Kill()
	}
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		c.fail("exit: %v", err)
	} else {
		c.step("exit: 0")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step("server requests: %s", counts(c.asked))
	c.step("notifications: %s", counts(c.notes))
	if c.failed {
		return 1
	}
	return 0
}

func (c *client) session(rootURI, docURI, file, text, hover, definition, complete, change string) {
	res, err := c.request("initialize", obj{
		"processId":  nil, // the same in every recording
		"clientInfo": obj{"name": "lsp-fixture-client", "version": "1.0.0"},
		"rootUri":    rootURI, "workspaceFolders": []obj{c.folder},
		"capabilities": obj{
			"general": obj{"positionEncodings": []string{"utf-16"}},
			"window":  obj{"workDoneProgress": true},
			"workspace": obj{"configuration": true, "workspaceFolders": true,
				"didChangeWatchedFiles": obj{"dynamicRegistration": true}},
			"textDocument": obj{
				"synchronization":    obj{"dynamicRegistration": false},
				"hover":              obj{"contentFormat": []string{"markdown", "plaintext"}},
				"completion":         obj{"completionItem": obj{"snippetSupport": false}},
				"definition":         obj{},
				"publishDiagnostics": obj{"versionSupport": true},
			},
		},
	})
	if err != nil {
		c.fail("initialize: %v", err)
		return
	}
	var init struct {
		ServerInfo struct{ Name, Version string } `json:"serverInfo"`
	}
	json.Unmarshal(res, &init)
	version := init.ServerInfo.Version
	var build struct{ Version string } // gopls sends its whole build info as JSON
	if json.Unmarshal([]byte(version), &build) == nil && build.Version != "" {
		version = build.Version + " (build info)"
	}
	c.step("initialize: %s %s", init.ServerInfo.Name, version)
	c.notify("initialized", obj{})
	c.notify("textDocument/didOpen", obj{"textDocument": obj{"uri": docURI, "languageId": languageID(file), "version": 1, "text": text}})
	doc := obj{"uri": docURI}

	if pos, ok := find(text, hover, true, false); !ok {
		c.fail("hover: %q is not in %s", hover, file)
	} else if res, err := c.request("textDocument/hover", obj{"textDocument": doc, "position": pos}); err != nil {
		c.fail("hover: %v", err)
	} else {
		var h struct {
			Contents json.RawMessage `json:"contents"`
		}
		json.Unmarshal(res, &h)
		c.step("hover %s: %q", hover, firstLine(hoverText(h.Contents)))
	}

	if pos, ok := find(text, complete, false, true); !ok {
		c.fail("completion: %q is not in %s", complete, file)
	} else if res, err := c.request("textDocument/completion", obj{"textDocument": doc, "position": pos}); err != nil {
		c.fail("completion: %v", err)
	} else {
		var list struct {
			Items []struct{ Label string } `json:"items"`
		}
		if json.Unmarshal(res, &list) != nil || list.Items == nil {
			json.Unmarshal(res, &list.Items) // a bare CompletionItem[]
		}
		var labels []string
		for _, item := range list.Items[:min(3, len(list.Items))] {
			labels = append(labels, item.Label)
		}
		c.step("completion after %q: %d item(s), first %s", complete, len(list.Items), strings.Join(labels, " "))
	}

	if pos, ok := find(text, definition, true, false); !ok {
		c.fail("definition: %q is not in %s", definition, file)
	} else if res, err := c.request("textDocument/definition", obj{"textDocument": doc, "position": pos}); err != nil {
		c.fail("definition: %v", err)
	} else {
		var locs []struct {
			URI   string                   `json:"uri"`
			Range struct{ Start position } `json:"range"`
		}
		if json.Unmarshal(res, &locs) != nil {
			locs = locs[:0]
			var one struct {
				URI   string                   `json:"uri"`
				Range struct{ Start position } `json:"range"`
			}
			if json.Unmarshal(res, &one) == nil && one.URI != "" {
				locs = append(locs, one)
			}
		}
		if len(locs) == 0 {
			c.fail("definition of %s: none", definition)
		} else {
			name := strings.TrimPrefix(locs[0].URI, strings.TrimSuffix(docURI, file))
			c.step("definition of %s: %s:%d:%d", definition, name, locs[0].Range.Start.Line+1, locs[0].Range.Start.Character+1)
		}
	}

	c.notify("textDocument/didChange", obj{"textDocument": obj{"uri": docURI, "version": 2},
		"contentChanges": []obj{{"text": text + change}}})
	c.awaitDiagnostics(docURI)

	if _, err := c.request("shutdown", nil); err != nil {
		c.fail("shutdown: %v", err)
	} else {
		c.step("shutdown: ok")
	}
	c.notify("exit", nil)
}

// awaitDiagnostics waits for diagnostics of the document after the change.
func (c *client) awaitDiagnostics(uri string) {
	deadline := time.After(c.timeout)
	for {
		c.mu.Lock()
		msgs, ver, closed := c.diags[uri], c.diagVer[uri], c.closed
		c.mu.Unlock()
		if len(msgs) > 0 && (ver == 2 || ver == -1) {
			c.step("diagnostics after the change: %d, first %q", len(msgs), msgs[0])
			return
		}
		if closed != nil {
			c.fail("diagnostics after the change: none before the server's stdout ended")
			return
		}
		select {
		case <-c.diagCh:
		case <-deadline:
			c.fail("diagnostics after the change: none within %v", c.timeout)
			return
		}
	}
}

// find returns the position of text in doc: of its first or last
// occurrence, one character into it, or right after it.
func find(doc, text string, last, after bool) (position, bool) {
	i := strings.Index(doc, text)
	if last {
		i = strings.LastIndex(doc, text)
	}
	if i < 0 || text == "" {
		return position{}, false
	}
	at := i + 1
	if after {
		at = i + len(text)
	}
	line := strings.Count(doc[:at], "\n")
	start := strings.LastIndex(doc[:at], "\n") + 1
	return position{line, len(utf16.Encode([]rune(doc[start:at])))}, true
}

func languageID(file string) string {
	switch filepath.Ext(file) {
	case ".go":
		return "go"
	case ".mod":
		return "go.mod"
	}
	return "plaintext"
}

// hoverText is the text of a Hover's contents in any of its three shapes.
func hoverText(raw json.RawMessage) string {
	var markup struct{ Value string }
	if json.Unmarshal(raw, &markup) == nil && markup.Value != "" {
		return markup.Value
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	json.Unmarshal(raw, &list)
	var parts []string
	for _, item := range list {
		parts = append(parts, hoverText(item))
	}
	return strings.Join(parts, "\n")
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "```") {
			return line
		}
	}
	return ""
}

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

func counts(m map[string]int) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s x%d", k, n))
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func (c *client) step(format string, args ...any) { fmt.Printf(format+"\n", args...) }

func (c *client) fail(format string, args ...any) {
	fmt.Printf("FAIL "+format+"\n", args...)
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
}

// ---- the wire ----------------------------------------------------------------

func (c *client) request(method string, params any) (json.RawMessage, error) {
	ch := make(chan *message, 1)
	c.mu.Lock()
	id := c.nextID
	c.nextID++
	key := strconv.Itoa(id)
	c.waiting[key] = ch
	closed := c.closed
	c.mu.Unlock()
	if closed != nil {
		return nil, fmt.Errorf("not sent: %w", closed)
	}
	m := obj{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
	select {
	case resp := <-ch:
		if resp == nil {
			c.mu.Lock()
			defer c.mu.Unlock()
			return nil, fmt.Errorf("no answer: %w", c.closed)
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-time.After(c.timeout):
		c.mu.Lock()
		delete(c.waiting, key)
		c.mu.Unlock()
		return nil, fmt.Errorf("no answer to %s (id %d) within %v", method, id, c.timeout)
	}
}

func (c *client) notify(method string, params any) {
	m := obj{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
}

func (c *client) send(m obj) {
	body, _ := json.Marshal(m)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.verbose {
		fmt.Fprintf(os.Stderr, "lsp-client > %s\n", body)
	}
	frame := append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)), body...)
	if _, err := c.stdin.Write(frame); err != nil && c.verbose {
		fmt.Fprintf(os.Stderr, "lsp-client: write: %v\n", err)
	}
}

// read reads the server's messages until its stdout ends or a message
// cannot be framed.
func (c *client) read(stdout io.Reader) {
	in := bufio.NewReader(stdout)
	var err error
	for {
		var body []byte
		if body, err = readMessage(in); err != nil {
			break
		}
		if c.verbose {
			fmt.Fprintf(os.Stderr, "lsp-client < %s\n", body)
		}
		c.dispatch(body)
	}
	framing := !errors.Is(err, io.EOF)
	if framing {
		c.fail("reading the server: %v", err)
	} else {
		err = errors.New("the server's stdout ended")
	}
	c.mu.Lock()
	c.closed = err
	for key, ch := range c.waiting {
		ch <- nil
		delete(c.waiting, key)
	}
	c.mu.Unlock()
	select {
	case c.diagCh <- struct{}{}:
	default:
	}
	if framing {
		c.stdin.Close() // a stream we cannot frame: end the session
		io.Copy(io.Discard, in)
	}
}

// readMessage reads one header block and its body.
func readMessage(in *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("header: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("header line %.60q has no colon", line)
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
		return nil, errors.New("a header without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(in, body); err != nil {
		return nil, fmt.Errorf("body of %d bytes: %w", length, err)
	}
	return body, nil
}

func (c *client) dispatch(body []byte) {
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		c.fail("a message from the server is not JSON: %v: %.80q", err, body)
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
			fmt.Fprintf(os.Stderr, "lsp-client: answer to unknown id %s\n", m.ID)
			return
		}
		ch <- &m
	case m.ID != nil:
		if m.Method == "textDocument/publishDiagnostics" {
			c.diagnostics(m.Params) // a notification sent with an id: still take it
		}
		result, rpcErr := c.answer(m.Method, m.Params)
		reply := obj{"jsonrpc": "2.0", "id": m.ID}
		if rpcErr != nil {
			reply["error"] = rpcErr
		} else {
			reply["result"] = result
		}
		c.send(reply)
		c.mu.Lock()
		c.asked[m.Method]++
		c.mu.Unlock()
	default:
		c.mu.Lock()
		c.notes[m.Method]++
		c.mu.Unlock()
		if m.Method == "textDocument/publishDiagnostics" {
			c.diagnostics(m.Params)
		}
	}
}

// diagnostics keeps the latest diagnostics of a document and wakes
// awaitDiagnostics.
func (c *client) diagnostics(params json.RawMessage) {
	var p struct {
		URI         string `json:"uri"`
		Version     *int   `json:"version"`
		Diagnostics []struct {
			Message string `json:"message"`
		} `json:"diagnostics"`
	}
	json.Unmarshal(params, &p)
	var msgs []string
	for _, d := range p.Diagnostics {
		msgs = append(msgs, d.Message)
	}
	c.mu.Lock()
	c.diags[p.URI] = msgs
	c.diagVer[p.URI] = -1
	if p.Version != nil {
		c.diagVer[p.URI] = *p.Version
	}
	c.mu.Unlock()
	select {
	case c.diagCh <- struct{}{}:
	default:
	}
}

// answer is the client's result for a server request.
func (c *client) answer(method string, params json.RawMessage) (any, *rpcError) {
	switch method {
	case "window/workDoneProgress/create", "client/registerCapability",
		"client/unregisterCapability", "window/showMessageRequest":
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(params, &p)
		answers := make([]json.RawMessage, len(p.Items))
		for i := range answers {
			answers[i] = c.config
		}
		return answers, nil
	case "workspace/workspaceFolders":
		return []obj{c.folder}, nil
	}
	return nil, &rpcError{Code: -32601, Message: "method not found: " + method}
}
