package htmlreport

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/tape"
)

// Payloads that would run script if the page ever treated frame content as
// markup.
const (
	xssScript = `</script><script>window.__pwned=1</script>`
	xssImg    = `<img src=x onerror="window.__pwned=2">`
)

// readTape reads a tape from the repository's testdata.
func readTape(t *testing.T, name string) (*frame.Session, []frame.Frame) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tapes", name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := tape.ReadFile(data)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return f.Session, f.Frames
}

// builder makes timelines by hand.
type builder struct {
	frames []frame.Frame
	at     int64
}

func (b *builder) line(d frame.Dir, raw string) *builder {
	b.at += 1_000_000
	b.frames = append(b.frames, frame.Frame{Seq: uint64(len(b.frames) + 1), At: b.at, Dir: d, Raw: []byte(raw)})
	return b
}

func (b *builder) event(name frame.Event, code int) *builder {
	b.at += 1_000_000
	f := frame.Frame{Seq: uint64(len(b.frames) + 1), At: b.at, Event: name}
	if name == frame.EventExit {
		f.SetEnd("", &code)
	}
	b.frames = append(b.frames, f)
	return b
}

func setPanel(id int, tree string) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ui/setPanel","params":{"tree":` + tree + `}}`
}

// allElements is a tree with every element type the host knows, in the
// host's shapes (docs/agentty-elements.md), with styles, variants and
// tones, two types of later APIs, and one type it does not know.
const allElements = `{"type":"column","gap":"large","children":[
 {"type":"text","text":"Every element","style":"title"},
 {"type":"row","gap":"small","wrap":true,"children":[
  {"type":"button","id":"b1","label":"Primary","variant":"primary","icon":"play"},
  {"type":"button","id":"b2","label":"Danger","variant":"danger"},
  {"type":"button","id":"b3","label":"Ghost","variant":"ghost","disabled":true},
  {"type":"badge","text":"ok","tone":"success"},
  {"type":"badge","text":"warn","tone":"warning"},
  {"type":"badge","text":"odd","tone":"info","color":"red"}]},
 {"type":"section","title":"A section","children":[
  {"type":"input","id":"in","placeholder":"Type here","value":"typed"},
  {"type":"choice","id":"ch","options":[{"value":"a","label":"Alpha"},{"value":"b","label":"Beta"}],"value":"b"},
  {"type":"toggle","id":"tg","label":"Switch me","value":true},
  {"type":"spinner","text":"Loading"},
  {"type":"divider"},
  {"type":"list","id":"ls","items":[
   {"id":"i1","title":"First item","subtitle":"sub","detail":"3m","icon":"star","tone":"info","actions":[{"id":"rm","label":"Remove","tooltip":"remove it"},{"id":"ed","icon":"pencil"}]},
   {"id":"i2","title":"Second item","tone":"error"}]},
  {"type":"list","id":"empty","items":[],"empty":"Nothing yet"}]},
 {"type":"card","title":"A card","subtitle":"with things","children":[
  {"type":"grid","columns":2,"children":[
   {"type":"stat","label":"Runs","value":"42","detail":"+3","tone":"success"},
   {"type":"progress","label":"Upload","value":0.4,"tone":"warning"}]},
  {"type":"tabs","id":"tb","tabs":[{"id":"one","label":"One"},{"id":"two","label":"Two"}],"value":"one","children":[{"type":"text","text":"in tab one"}]},
  {"type":"table","id":"tt","columns":[{"label":"name"},{"label":"size","align":"end"}],"rows":[{"id":"a","cells":["a.txt","1 KB"]},{"id":"b","cells":["b.txt","2 KB"]}]},
  {"type":"keyValue","items":[{"label":"Model","value":"gpt"},{"label":"Tokens","value":"1200","mono":true}]},
  {"type":"callout","title":"Heads up","text":"Something happened","tone":"error"},
  {"type":"select","id":"sel","options":[{"value":"x","label":"Ex"},{"value":"y","label":"Why"}],"value":"y"},
  {"type":"checkbox","id":"cb","label":"Check me","value":true},
  {"type":"code","language":"go","text":"x := 1"},
  {"type":"flow","id":"fl","steps":[{"id":"n1","title":"Plan","state":"done"},{"id":"n2","title":"Build"}]},
  {"type":"popover","id":"pop","title":"More","children":[{"type":"text","text":"inside the popover"}]},
  {"type":"image","src":"https://example.invalid/cat.png","alt":"a cat"},
  {"type":"graph","values":[1,3,2,5,4],"title":"trend"}]},
 {"type":"sparkle","text":"?"}
]}`

// elementTypes are the types allElements draws, unknown aside.
var elementTypes = []string{"column", "row", "section", "text", "button", "input", "list", "choice", "toggle", "badge", "spinner", "divider",
	"card", "grid", "tabs", "table", "keyValue", "stat", "progress", "callout", "select", "checkbox", "code", "flow", "popover", "image", "graph"}

func TestDataCannotEndTheScript(t *testing.T) {
	b := &builder{}
	b.line(frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"`+strings.ReplaceAll(xssImg, `"`, `\"`)+`"}}`)
	b.line(frame.Err, xssScript)
	b.line(frame.Out, setPanel(1, `{"type":"text","text":"`+strings.ReplaceAll(xssScript+xssImg, `"`, `\"`)+"\u2028\u2029 & <!--\"}"))
	b.line(frame.Out, "raw \u2028 line <!-- "+xssScript)
	meta := &frame.Session{ID: "x", Name: xssScript}
	var out bytes.Buffer
	err := Session(&out, meta, Slice(b.frames), []Finding{{Seq: 2, Level: "error", Rule: "r", Message: xssImg}})
	if err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if n := strings.Count(strings.ToLower(page), "<script"); n != 2 {
		t.Errorf("the page has %d <script elements, want 2 (the data and the page's own)", n)
	}
	for _, bad := range []string{xssScript, "<img", "\u2028", "\u2029", "<!--"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q verbatim", bad)
		}
	}
	// The data block holds the content exactly.
	m := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no data block")
	}
	var data pageData
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatalf("data block: %v", err)
	}
	if got := data.Frames[1].R; got != xssScript {
		t.Errorf("stderr frame in the data = %q, want %q", got, xssScript)
	}
	if data.Meta.Name != xssScript || data.Findings[0].Message != xssImg {
		t.Errorf("meta name %q, finding %q: not carried exactly", data.Meta.Name, data.Findings[0].Message)
	}
	// The title is escaped by the template.
	if !strings.Contains(page, "<title>tapedeck · session &lt;/script&gt;") {
		t.Errorf("title not escaped:\n%s", page[:min(len(page), 600)])
	}
}

func TestContentSecurityPolicyAllowsOnlyThePageScript(t *testing.T) {
	var out bytes.Buffer
	if err := Session(&out, nil, Slice(nil), nil); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	m := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindStringSubmatch(page)
	policy := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if policy == nil {
		t.Fatal("no Content-Security-Policy")
	}
	csp := html.UnescapeString(policy[1])
	if m == nil {
		t.Fatal("no page script")
	}
	sum := sha256.Sum256([]byte(m[1]))
	want := "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if !strings.Contains(csp, want) {
		t.Errorf("the policy %q does not name the script's hash %s", csp, want)
	}
	if !strings.Contains(csp, "default-src 'none'") {
		t.Error("the policy does not forbid loading anything")
	}
}

// TestScriptUsesNoMarkupAPIs keeps the page's script on DOM APIs: nothing
// that parses a string as HTML or as code.
func TestScriptUsesNoMarkupAPIs(t *testing.T) {
	for _, name := range []string{"panel.js", "timeline.js", "report.js"} {
		js, err := assets.ReadFile("assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute('on", "createContextualFragment", "DOMParser", "srcdoc", "</script", "<!--"} {
			if bytes.Contains(js, []byte(bad)) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}

func TestTimelinePairsRequestsAndResponses(t *testing.T) {
	b := &builder{}
	b.line(frame.In, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`)            // 0
	b.line(frame.Out, `{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":{}}}`) // 1
	b.line(frame.Out, `{"jsonrpc":"2.0","id":7,"result":{}}`)                                 // 2 answers 0
	b.line(frame.In, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`)      // 3 answers 1
	b.line(frame.Err, "plain \xff\xfe bytes \\ here")                                         // 4
	b.line(frame.Out, `not json`)                                                             // 5
	b.event(frame.EventExit, 3)                                                               // 6
	got := timeline(b.frames)
	check := func(i int, field string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("frame %d %s = %v, want %v", i, field, got, want)
		}
	}
	check(0, "pair", got[0].P, 0) // the page gives it its answer
	check(2, "pair", got[2].P, 1)
	check(2, "latency", got[2].L, int64(2_000_000))
	check(2, "method", got[2].M, "initialize")
	check(1, "pair", got[1].P, 0)
	check(3, "pair", got[3].P, 2)
	check(3, "kind", got[3].K, "error")
	check(3, "method", got[3].M, "ui/setPanel")
	check(4, "kind", got[4].K, "stderr")
	check(4, "text", got[4].R, `plain \xff\xfe bytes \\ here`)
	check(4, "escaped", got[4].B, true)
	check(4, "host's text", got[4].U, "plain \uFFFD bytes \\ here") // as message.Parse replaces
	check(5, "kind", got[5].K, "stray")
	check(5, "json", got[5].J, false)
	check(1, "json", got[1].J, true)
	check(6, "event", got[6].E, "the plugin exited with code 3")
	check(6, "dir", got[6].D, "ev")
}

func TestLineDiff(t *testing.T) {
	tests := []struct {
		a, b string
		want string // one op per row
	}{
		{"a\nb\nc", "a\nb\nc", "==="},
		{"a\nb\nc", "a\nB\nc", "=~="},
		{"a\nb\nc", "a\nc", "=-="},
		{"a\nc", "a\nb\nc", "=+="},
		{"a\nb\nc\nd", "a\nX\nY\nZ\nd", "=~~+="},
		{"", "a", "+"},
		{"a", "", "-"},
	}
	for _, tt := range tests {
		var ops string
		for _, l := range lineDiff(tt.a, tt.b) {
			ops += l.Op
		}
		if ops != tt.want {
			t.Errorf("lineDiff(%q, %q) = %s, want %s", tt.a, tt.b, ops, tt.want)
		}
	}
	rows := lineDiff("a\nb\nc", "a\nB\nc")
	if r := rows[1]; r.A != 2 || r.L != "b" || r.B != 2 || r.R != "B" {
		t.Errorf("changed row = %+v, want line 2 b against line 2 B", r)
	}
}

func TestElementPath(t *testing.T) {
	tests := []struct {
		segs []string
		want string
		ok   bool
	}{
		{[]string{"params", "tree", "children", "[2]", "label"}, "tree.children[2].label", true},
		{[]string{"params", "tree"}, "tree", true},
		{[]string{"params"}, "tree", true},
		{[]string{"id"}, "", false},
		{[]string{"params", "other"}, "", false},
	}
	for _, tt := range tests {
		got, ok := elementPath(tt.segs)
		if got != tt.want || ok != tt.ok {
			t.Errorf("elementPath(%q) = %q, %v; want %q, %v", tt.segs, got, ok, tt.want, tt.ok)
		}
	}
}

func TestReplayOutlinesTheChangedElement(t *testing.T) {
	rec, live := labelReplay("Hello", "Howdy")
	res := diff.Frames(rec, live, diff.Options{})
	var out bytes.Buffer
	if err := Replay(&out, ReplayInput{Name: "t", Recorded: Slice(rec), Live: Slice(live), Diff: res}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindStringSubmatch(out.String())
	var data pageData
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatal(err)
	}
	if len(data.Replay.Diffs) != 1 {
		t.Fatalf("%d differences, want 1", len(data.Replay.Diffs))
	}
	d := data.Replay.Diffs[0]
	if !d.Panel || !reflect.DeepEqual(d.Outline, []string{"tree.children[0].text"}) {
		t.Errorf("panel %v, outline %q; want true, [tree.children[0].text]", d.Panel, d.Outline)
	}
	if d.Rec.Index != 2 || d.Live.Index != 2 {
		t.Errorf("sides at frames %d and %d, want 2 and 2", d.Rec.Index, d.Live.Index)
	}
	changed := 0
	for _, l := range d.Lines {
		if l.Op != "=" {
			changed++
			if !strings.Contains(l.L, "Hello") || !strings.Contains(l.R, "Howdy") {
				t.Errorf("changed row %+v, want Hello against Howdy", l)
			}
		}
	}
	if changed != 1 {
		t.Errorf("%d changed rows, want 1", changed)
	}
}

// labelReplay is a recording and a replay of a plugin whose first text
// changed from old to new.
func labelReplay(old, new string) (rec, live []frame.Frame) {
	run := func(label string) []frame.Frame {
		b := &builder{}
		b.line(frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
		b.line(frame.Out, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		b.line(frame.Out, setPanel(1, `{"type":"column","children":[{"type":"text","text":"`+label+`"},{"type":"button","id":"go","label":"Go"}]}`))
		b.line(frame.In, `{"jsonrpc":"2.0","id":1,"result":null}`)
		b.line(frame.In, `{"jsonrpc":"2.0","method":"shutdown","params":{}}`)
		b.event(frame.EventEOF, 0)
		b.event(frame.EventExit, 0)
		return b.frames
	}
	return run(old), run(new)
}

func TestIndexEscapes(t *testing.T) {
	var out bytes.Buffer
	err := Index(&out, "tapedeck test", []IndexEntry{{Name: xssScript, Href: "a.html", Status: "fail", Detail: xssImg}})
	if err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if strings.Contains(page, xssScript) || strings.Contains(page, "<img") || strings.Contains(strings.ToLower(page), "<script") {
		t.Errorf("index page carries markup from its entries:\n%s", page)
	}
	if !strings.Contains(page, `<a href="a.html">`) {
		t.Errorf("index page does not link the report:\n%s", page)
	}
}

// TestReplaySaysTheDifferencesNotKept: the page's notes say how many
// differences the comparison found past those it kept.
func TestReplaySaysTheDifferencesNotKept(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	in := ReplayInput{Name: "t.jsonl", Meta: &frame.Session{ID: "x"}, Diff: diff.Result{Differences: []diff.Difference{{Kind: diff.Extra, What: "notification x", Live: &diff.Side{Seq: 1, Raw: "{}"}}}, More: 7}}
	if err := Replay(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "differences not kept: 7 more (tapedeck keeps the first 1 of a comparison)") {
		t.Error("the page does not say the 7 differences not kept")
	}
}
