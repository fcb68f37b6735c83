// Package replaytest holds what the tests of the rooms that replay
// (playback's, noise, pending, shrink) share: fixture plugins and the
// tapes that run them. A test binary whose TestMain calls Main doubles as
// the fixture plugins; Env makes it run one; WriteTape writes a tape of
// the test binary as a plugin. It is for tests only.
package replaytest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/playback"
	"github.com/tapedeck/tapedeck/tape"
)

// fixtureVar names the fixture plugin a test binary runs instead of its
// tests.
const fixtureVar = "PLAYBACK_FIXTURE"

// Main is a TestMain: with PLAYBACK_FIXTURE set it runs that fixture
// plugin (see fixture) instead of the tests.
func Main(m *testing.M) {
	if name := os.Getenv(fixtureVar); name != "" {
		f := fixture(name)
		if f == nil {
			fmt.Fprintf(os.Stderr, "no fixture %q\n", name)
			os.Exit(99)
		}
		os.Exit(f())
	}
	os.Exit(m.Run())
}

// Env is the environment that makes the test binary the fixture plugin
// name, with env added.
func Env(name string, env ...string) []string {
	return append(append(os.Environ(), fixtureVar+"="+name), env...)
}

// fixture is the fixture plugin called name, nil when there is none.
func fixture(name string) func() int {
	switch name {
	case "prompt":
		return prompt
	case "randomid":
		return randomID
	case "badges":
		return badges
	case "workspace":
		return workspace
	case "toggle":
		return toggle
	case "files":
		return files
	}
	return nil
}

// prompt answers initialize and, on the click "go", asks the host to send
// "VERB note ID created TIME" to the terminal: VERB is FIXTURE_VERB
// (default Summarise); ID and TIME are FIXTURE_ID and FIXTURE_TIME, or
// with FIXTURE_COUNTER (a file counting runs) a random-looking id and a
// time that differ on every run.
func prompt() int {
	verb := envOr("FIXTURE_VERB", "Summarise")
	id, at := os.Getenv("FIXTURE_ID"), os.Getenv("FIXTURE_TIME")
	if path := os.Getenv("FIXTURE_COUNTER"); path != "" {
		b, _ := os.ReadFile(path)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		os.WriteFile(path, []byte(strconv.Itoa(n+1)), 0o600)
		ids := []string{"x7p2mz", "q0d9rk", "m4t8wa", "c2v6ne", "h9j1sd"}
		id = ids[n%len(ids)]
		at = time.Date(2026, 12, 2+n, 11, 30+n, 7*n, 0, time.UTC).Format(time.RFC3339)
	}
	return sendOnGo(verb + " note " + id + " created " + at)
}

// randomID is prompt with a note id of its own on every run: six random
// characters, a letter and a digit in turn.
func randomID() int {
	id := make([]byte, 6)
	for i := range id {
		if i%2 == 0 {
			id[i] = byte('a' + rand.IntN(26))
		} else {
			id[i] = byte('0' + rand.IntN(10))
		}
	}
	return sendOnGo("Summarise note " + string(id) + " created 2026-12-01T10:00:00Z")
}

// badges sets the badge to each element clicked; with FIXTURE_BUG the
// click "fire" sets it to "boom".
func badges() int {
	bug := os.Getenv("FIXTURE_BUG") != ""
	return serve(func(m hostMessage) []string {
		if m.Method != "ui/event" {
			return nil
		}
		text := m.Params.Element
		if bug && text == "fire" {
			text = "boom"
		}
		return []string{`{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"` + text + `"}}`}
	})
}

// workspace is a language server of newline-framed JSON-RPC that works in
// the folder initialize's rootUri names: it answers initialize with the
// first line of notes.txt there, and each textDocument/didOpen appends a
// line to opened.log there and publishes the document's uri and how many
// lines the log holds.
func workspace() int {
	var root string
	br := bufio.NewReader(os.Stdin)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m lspMessage
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			root = strings.TrimPrefix(m.Params.RootURI, "file://")
			workspaceNotes(root, m.ID)
		case "textDocument/didOpen":
			workspaceOpened(root, m.Params.TextDocument.URI)
		case "exit":
			return 0
		}
	}
}

// lspMessage is what workspace reads of a message.
type lspMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RootURI      string `json:"rootUri"`
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
	} `json:"params"`
}

// workspaceNotes answers initialize (id) with the first line of notes.txt
// in root.
func workspaceNotes(root string, id json.RawMessage) {
	b, _ := os.ReadFile(filepath.Join(root, "notes.txt"))
	first, _, _ := strings.Cut(string(b), "\n")
	q, _ := json.Marshal(first)
	fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"notes":%s}}`+"\n", id, q)
}

// workspaceOpened appends uri to opened.log in root and publishes it with
// how many lines the log holds.
func workspaceOpened(root, uri string) {
	log := filepath.Join(root, "opened.log")
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	fmt.Fprintln(f, uri)
	f.Close()
	b, _ := os.ReadFile(log)
	u, _ := json.Marshal(uri)
	fmt.Printf(`{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":%s,"opened":%d}}`+"\n", u, strings.Count(string(b), "\n"))
}

// toggle keeps a dark mode, turned on and off by the click "dark"; each
// click draws the panel with the mode, the element clicked and a title,
// "done" after "go", or "broken" with FIXTURE_BUG.
func toggle() int {
	dark := false
	return serve(func(m hostMessage) []string {
		if m.Method != "ui/event" {
			return nil
		}
		el := m.Params.Element
		if el == "dark" {
			dark = !dark
		}
		title := "working"
		if el == "go" {
			title = "done"
			if os.Getenv("FIXTURE_BUG") != "" {
				title = "broken"
			}
		}
		return []string{TogglePanel(dark, el, title)}
	})
}

// files lists the files opened so far ("open:NAME" clicks) with their
// tone: "ok", "bad" for FIXTURE_BAD, "new" for FIXTURE_NEW.
func files() int {
	var items []string
	return serve(func(m hostMessage) []string {
		name, ok := strings.CutPrefix(m.Params.Element, "open:")
		if m.Method != "ui/event" || !ok {
			return nil
		}
		tone := "ok"
		switch name {
		case os.Getenv("FIXTURE_BAD"):
			tone = "bad"
		case os.Getenv("FIXTURE_NEW"):
			tone = "new"
		}
		items = append(items, fmt.Sprintf(`{"file":%q,"tone":%q}`, name, tone))
		return []string{FilesPanel(items)}
	})
}

// sendOnGo is a plugin that, on the click "go", asks the host to send text
// to the terminal.
func sendOnGo(text string) int {
	q, _ := json.Marshal(text)
	return serve(func(m hostMessage) []string {
		if m.Method == "ui/event" && m.Params.Element == "go" {
			return []string{`{"jsonrpc":"2.0","id":1,"method":"terminal/send","params":{"text":` + string(q) + `}}`}
		}
		return nil
	})
}

// TogglePanel is the panel of the toggle fixture.
func TogglePanel(dark bool, last, title string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"ui/setPanel","params":{"dark":%v,"last":%q,"title":%q}}`, dark, last, title)
}

// FilesPanel is the panel of the files fixture listing items.
func FilesPanel(items []string) string {
	return `{"jsonrpc":"2.0","method":"ui/setPanel","params":{"items":[` + strings.Join(items, ",") + `]}}`
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

type hostMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Element string `json:"element"`
	} `json:"params"`
}

// serve is a plugin's loop: it answers initialize, exits on shutdown or
// the end of stdin, and writes what on says of every other line.
func serve(on func(hostMessage) []string) int {
	br := bufio.NewReader(os.Stdin)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m hostMessage
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}` + "\n")
		case "shutdown":
			return 0
		default:
			for _, l := range on(m) {
				os.Stdout.WriteString(l + "\n")
			}
		}
	}
}

// Line is one recorded line: "in …", "out …", "err …", or "eof" and
// "exit" for those events.
type Line = string

// WriteTape writes lines as a tape of the test binary (run as a fixture)
// in a folder of its own and reads it back.
func WriteTape(t testing.TB, lines ...Line) *playback.Recording {
	t.Helper()
	code := 0
	meta := &frame.Session{ID: frame.NewID(time.Now()), Command: []string{os.Args[0]}, Status: frame.StatusComplete, Started: time.Now()}
	var frames []frame.Frame
	for i, l := range lines {
		f := frame.Frame{Seq: uint64(i + 1), At: int64(i) * int64(time.Millisecond)}
		dir, raw, _ := strings.Cut(l, " ")
		switch dir {
		case "in":
			f.Dir = frame.In
		case "out":
			f.Dir = frame.Out
		case "err":
			f.Dir = frame.Err
		case "eof":
			f.Event, f.Dir = frame.EventEOF, frame.In
		case "exit":
			f.Event = frame.EventExit
			f.SetEnd("", &code)
		default:
			t.Fatalf("bad line %q", l)
		}
		if !f.IsEvent() {
			f.Raw = []byte(raw)
			meta.Frames.Add(f.Dir, 1)
		}
		frames = append(frames, f)
	}
	path := filepath.Join(t.TempDir(), "session.jsonl")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tape.WriteAll(file, meta, frames); err != nil {
		t.Fatal(err)
	}
	file.Close()
	rec, err := playback.ReadTape(path)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// The lines of a session's opening and ending.
const (
	InitIn   = `in {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	InitOut  = `out {"jsonrpc":"2.0","id":1,"result":{}}`
	Shutdown = `in {"jsonrpc":"2.0","method":"shutdown","params":{}}`
)

// Click is the host line of a click on element.
func Click(element string) Line {
	return `in {"jsonrpc":"2.0","method":"ui/event","params":{"element":"` + element + `","event":"click"}}`
}

// PromptTape is a recording of the prompt fixture: one click, which sends
// "Summarise note 8f3k2q created 2026-12-01T10:00:00Z" to the terminal.
func PromptTape(t testing.TB) *playback.Recording {
	return WriteTape(t,
		InitIn, InitOut,
		Click("go"),
		`out {"jsonrpc":"2.0","id":1,"method":"terminal/send","params":{"text":"Summarise note 8f3k2q created 2026-12-01T10:00:00Z"}}`,
		`in {"jsonrpc":"2.0","id":1,"result":{}}`,
		Shutdown, "eof", "exit")
}
