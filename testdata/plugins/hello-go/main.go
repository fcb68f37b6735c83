// Command hello-go is a deterministic Agentty fixture plugin (API 1) for
// tapedeck tests.
//
// Go standard library only, one file. It speaks JSON-RPC 2.0, one compact JSON
// object per line, on stdin/stdout, and behaves byte-for-byte like
// ../hello-node/main.mjs and ../hello-python/main.py on stdout (stderr differs
// only in the "hello-go" prefix). Keep the three files in step: same messages,
// same key order, same stderr lines. Where Go and JavaScript differ this file
// follows the JavaScript behaviour:
//
//   - input lines and the environment are decoded as UTF-8 the WHATWG way
//     (each maximal invalid subpart becomes one U+FFFD);
//   - JSON is parsed like JSON.parse: every number is a float64, the last of
//     duplicate members wins, and a lone surrogate escape (\ud800) stays a lone
//     surrogate. Strings are kept as WTF-8, so a lone surrogate is the 3-byte
//     sequence ED A0..BF xx; output escapes it as \udxxx like JSON.stringify
//     and stderr writes U+FFFD in its place, like Node;
//   - String(v) and Number::toString are reimplemented (jsString, jsNumber);
//   - output objects are written member by member in the order of the
//     JavaScript object literals, never through a Go map.
//
// Build the binary hello-go named by agentty-plugin.json with "go build" in
// this folder, or from the repository root with
// "go build -o testdata/plugins/hello-go/ ./testdata/plugins/hello-go" (a plain
// "go build ./testdata/plugins/hello-go" leaves it in the current directory).
//
// Environment:
//
//	FIXTURE_LABEL=text      replaces "Hello" in the panel title.
//	FIXTURE_CRASH_AFTER=N   (N >= 1) exit with code 3 after handling N ui/event
//	                        notifications.
package main

import (
	"bufio"
	"errors"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

const tag = "hello-go"

var (
	label      = "Hello"
	crashAfter float64 // 0: never

	nextID   = 1                    // ids of the plugin's own requests: 1, 2, 3, ...
	pending  = map[float64]string{} // request id -> method
	clicks   = 0
	name     *string // last "name" input value, or nil
	uiEvents = 0

	exitCode = -1 // set by finish: the input loop stops and the process exits
)

// finish makes the input loop stop after the current line, with an exit code.
func finish(code int) {
	if exitCode < 0 {
		exitCode = code
	}
}

// ---- JSON values ------------------------------------------------------------

// Parsed JSON values: nil (null), bool, float64, string (WTF-8), []any, object.
type object map[string]any

// undefinedT is JavaScript's undefined: what get returns for a missing member.
type undefinedT struct{}

var undefined any = undefinedT{}

// get is the property key of v, or undefined when v is not an object or has
// no such member.
func get(v any, key string) any {
	if o, ok := v.(object); ok {
		if e, ok := o[key]; ok {
			return e
		}
	}
	return undefined
}

// ---- output -----------------------------------------------------------------

// member and obj build output objects in a fixed member order.
type member struct {
	k string
	v any
}

type obj []member

func writeLine(text string) {
	if _, err := os.Stdout.WriteString(text + "\n"); err != nil {
		// The reader went away: nothing more can be said.
		os.Exit(0)
	}
}

func logf(text string) {
	// Like Node: a lone surrogate goes out as U+FFFD.
	_, _ = os.Stderr.WriteString(replaceSurrogates(tag + ": " + text + "\n"))
}

func notify(method string, params any) {
	writeLine(stringify(obj{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}}))
}

func request(method string, params any) {
	id := nextID
	nextID++
	pending[float64(id)] = method
	writeLine(stringify(obj{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}))
}

// respond answers a host request; rawID is the id exactly as the host wrote it
// (compacted JSON text).
func respond(rawID string, result any) {
	writeLine(`{"jsonrpc":"2.0","id":` + rawID + `,"result":` + stringify(result) + "}")
}

func respondError(rawID string, code int, message string) {
	writeLine(`{"jsonrpc":"2.0","id":` + rawID + `,"error":` + stringify(obj{{"code", code}, {"message", message}}) + "}")
}

// stringify is JSON.stringify for the values this plugin writes.
func stringify(v any) string {
	var b strings.Builder
	encode(&b, v)
	return b.String()
}

func encode(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(strconv.Itoa(v))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b.WriteString("null")
		} else {
			b.WriteString(jsNumber(v))
		}
	case string:
		quote(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			encode(b, e)
		}
		b.WriteByte(']')
	case obj:
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			quote(b, m.k)
			b.WriteByte(':')
			encode(b, m.v)
		}
		b.WriteByte('}')
	default:
		panic("stringify: unexpected type")
	}
}

const hexDigits = "0123456789abcdef"

// quote writes the WTF-8 string s as JSON.stringify does: short escapes for
// " \ \b \f \n \r \t, \u00xx for other control characters, \udxxx for lone
// surrogates, everything else as is.
func quote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if isSurrogateAt(s, i) {
			u := surrogateAt(s, i)
			b.WriteString(`\u`)
			b.WriteByte(hexDigits[u>>12&0xF])
			b.WriteByte(hexDigits[u>>8&0xF])
			b.WriteByte(hexDigits[u>>4&0xF])
			b.WriteByte(hexDigits[u&0xF])
			i += 3
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

// isSurrogateAt reports whether s[i:] starts with a WTF-8 encoded surrogate.
func isSurrogateAt(s string, i int) bool {
	return s[i] == 0xED && i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF
}

func surrogateAt(s string, i int) int {
	return 0xD000 | int(s[i+1]&0x3F)<<6 | int(s[i+2]&0x3F)
}

func replaceSurrogates(s string) string {
	if !strings.Contains(s, "\xED") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if isSurrogateAt(s, i) {
			b.WriteString("\uFFFD")
			i += 3
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// ---- text -------------------------------------------------------------------

// decodeUTF8 decodes b like the WHATWG UTF-8 decoder (Node's Buffer.toString,
// Python's "replace"): each maximal subpart of an invalid sequence becomes one
// U+FFFD.
func decodeUTF8(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			sb.WriteByte(c)
			i++
			continue
		}
		need := 0
		lo, hi := byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c >= 0xE0 && c <= 0xEF:
			need = 2
			if c == 0xE0 {
				lo = 0xA0
			} else if c == 0xED {
				hi = 0x9F
			}
		case c >= 0xF0 && c <= 0xF4:
			need = 3
			if c == 0xF0 {
				lo = 0x90
			} else if c == 0xF4 {
				hi = 0x8F
			}
		default:
			sb.WriteString("\uFFFD")
			i++
			continue
		}
		j := i + 1
		ok := true
		for k := 0; k < need; k++ {
			if j >= len(b) || b[j] < lo || b[j] > hi {
				ok = false
				break
			}
			lo, hi = 0x80, 0xBF
			j++
		}
		if !ok {
			// The offending byte (if any) starts the next sequence.
			sb.WriteString("\uFFFD")
			i = j
			continue
		}
		sb.Write(b[i:j])
		i = j
	}
	return sb.String()
}

// envString is process.env[name] of Node: ok is false when unset.
func envString(name string) (string, bool) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return "", false
	}
	return decodeUTF8([]byte(v)), true
}

// parseCount is the fixture's reading of FIXTURE_CRASH_AFTER: /^[0-9]+$/ then
// Number(s), else 0.
func parseCount(s string, ok bool) float64 {
	if !ok || s == "" {
		return 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0
	}
	return f
}

// jsNumber is Number::toString of ECMAScript.
func jsNumber(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	case x == 0:
		return "0"
	}
	sign := ""
	if x < 0 {
		sign = "-"
		x = -x
	}
	// Shortest round-trip digits: "d.ddde±XX".
	e := strconv.FormatFloat(x, 'e', -1, 64)
	p := strings.IndexByte(e, 'e')
	digits := strings.Replace(e[:p], ".", "", 1)
	exp, _ := strconv.Atoi(e[p+1:])
	k := len(digits)
	n := exp + 1
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		es := strconv.Itoa(n - 1)
		if n-1 >= 0 {
			es = "+" + es
		}
		if k == 1 {
			s = digits + "e" + es
		} else {
			s = digits[:1] + "." + digits[1:] + "e" + es
		}
	}
	return sign + s
}

// jsString is String(v) of JavaScript for a parsed JSON value.
func jsString(v any) string {
	switch v := v.(type) {
	case undefinedT:
		return "undefined"
	case nil:
		return "null"
	case string:
		return v
	case bool:
		if v {
			return "true"
		}
		return "false"
	case float64:
		return jsNumber(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			if e != nil {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}

// ---- JSON.parse -------------------------------------------------------------

var errSyntax = errors.New("not JSON")

type parser struct {
	s string
	i int
}

// parseJSON parses s like JSON.parse.
func parseJSON(s string) (any, error) {
	p := &parser{s: s}
	p.ws()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, errSyntax
	}
	return v, nil
}

func (p *parser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) lit(word string, v any) (any, error) {
	if !strings.HasPrefix(p.s[p.i:], word) {
		return nil, errSyntax
	}
	p.i += len(word)
	return v, nil
}

func (p *parser) value() (any, error) {
	if p.i >= len(p.s) {
		return nil, errSyntax
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == 't':
		return p.lit("true", true)
	case c == 'f':
		return p.lit("false", false)
	case c == 'n':
		return p.lit("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, errSyntax
}

func (p *parser) object() (any, error) {
	o := object{}
	p.i++ // '{'
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return o, nil
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, errSyntax
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, errSyntax
		}
		p.i++
		p.ws()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		o[k] = v // the last of duplicate members wins
		p.ws()
		if p.i >= len(p.s) {
			return nil, errSyntax
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.ws()
		case '}':
			p.i++
			return o, nil
		default:
			return nil, errSyntax
		}
	}
}

func (p *parser) array() (any, error) {
	a := []any{}
	p.i++ // '['
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.ws()
		if p.i >= len(p.s) {
			return nil, errSyntax
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.ws()
		case ']':
			p.i++
			return a, nil
		default:
			return nil, errSyntax
		}
	}
}

func (p *parser) digits() int {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

func (p *parser) number() (any, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if p.digits() == 0 {
		return nil, errSyntax
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, errSyntax
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, errSyntax
		}
	}
	// Correctly rounded; out of range gives ±Inf or ±0 like JavaScript.
	f, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, errSyntax
	}
	return f, nil
}

func hex4(s string) (int, bool) {
	if len(s) < 4 {
		return 0, false
	}
	n := 0
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

// str parses a JSON string token at p.i into WTF-8.
func (p *parser) str() (string, error) {
	p.i++ // '"'
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", errSyntax
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", errSyntax
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		p.i++ // '\\'
		if p.i >= len(p.s) {
			return "", errSyntax
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			u, ok := hex4(p.s[p.i:])
			if !ok {
				return "", errSyntax
			}
			p.i += 4
			if u >= 0xD800 && u <= 0xDBFF && strings.HasPrefix(p.s[p.i:], `\u`) {
				if l, ok := hex4(p.s[p.i+2:]); ok && l >= 0xDC00 && l <= 0xDFFF {
					p.i += 6
					b.WriteRune(rune(0x10000 + (u-0xD800)<<10 + (l - 0xDC00)))
					continue
				}
			}
			writeWTF8(&b, u)
		default:
			return "", errSyntax
		}
	}
}

// writeWTF8 writes a BMP code unit, a lone surrogate included.
func writeWTF8(b *strings.Builder, u int) {
	switch {
	case u < 0x80:
		b.WriteByte(byte(u))
	case u < 0x800:
		b.WriteByte(byte(0xC0 | u>>6))
		b.WriteByte(byte(0x80 | u&0x3F))
	default:
		b.WriteByte(byte(0xE0 | u>>12))
		b.WriteByte(byte(0x80 | u>>6&0x3F))
		b.WriteByte(byte(0x80 | u&0x3F))
	}
}

// ---- raw id -----------------------------------------------------------------

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// skipString: end index of the JSON string token starting at s[i] (a '"').
func skipString(s string, i int) int {
	i++
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return i
}

func skipValue(s string, i int) int {
	c := s[i]
	if c == '"' {
		return skipString(s, i)
	}
	if c == '{' || c == '[' {
		depth := 0
		for i < len(s) {
			d := s[i]
			if d == '"' {
				i = skipString(s, i)
				continue
			}
			if d == '{' || d == '[' {
				depth++
			} else if d == '}' || d == ']' {
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(s) && !strings.ContainsRune(",}] \t\r\n", rune(s[i])) {
		i++
	}
	return i
}

func skipWS(s string, i int) int {
	for i < len(s) && isWS(s[i]) {
		i++
	}
	return i
}

// compact removes insignificant whitespace from a valid JSON text.
func compact(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c == '"' {
			j := skipString(s, i)
			b.WriteString(s[i:j])
			i = j
			continue
		}
		if !isWS(c) {
			b.WriteByte(c)
		}
		i++
	}
	return b.String()
}

// rawMember is the raw (compacted) text of the last top-level member key of
// the JSON object text s, which parseJSON has already accepted.
func rawMember(s, key string) string {
	found := ""
	i := skipWS(s, 0) + 1 // past '{'
	for {
		i = skipWS(s, i)
		if i >= len(s) || s[i] == '}' {
			break
		}
		kEnd := skipString(s, i)
		k, _ := (&parser{s: s[i:kEnd]}).str()
		i = skipWS(s, kEnd) + 1 // past ':'
		i = skipWS(s, i)
		vEnd := skipValue(s, i)
		if k == key {
			found = compact(s[i:vEnd])
		}
		i = skipWS(s, vEnd)
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
	return found
}

// ---- behaviour --------------------------------------------------------------

func panelTree() obj {
	return obj{
		{"type", "column"},
		{"gap", "medium"},
		{"children", []any{
			obj{{"type", "text"}, {"text", label}, {"style", "title"}},
			obj{{"type", "text"}, {"text", "clicked " + strconv.Itoa(clicks) + " times"}, {"style", "muted"}},
			obj{{"type", "input"}, {"id", "name"}, {"placeholder", "Your name"}},
			obj{{"type", "button"}, {"id", "greet"}, {"label", "Greet"}, {"variant", "primary"}},
			obj{{"type", "button"}, {"id", "ask"}, {"label", "Ask the agent"}},
			obj{
				{"type", "list"},
				{"id", "items"},
				{"items", []any{
					obj{{"id", "a"}, {"title", "Alpha"}, {"tone", "info"}},
					obj{{"id", "b"}, {"title", "Beta"}, {"subtitle", "second"}, {"tone", "success"},
						{"actions", []any{obj{{"id", "rm"}, {"label", "Remove"}}}}},
				}},
			},
			obj{{"type", "badge"}, {"text", "v1"}, {"tone", "neutral"}},
		}},
	}
}

func setPanel() {
	request("ui/setPanel", obj{{"tree", panelTree()}})
}

func handleRequest(msg object, method, line string) {
	rawID := rawMember(line, "id")
	if method == "initialize" {
		respond(rawID, obj{{"sdkVersion", "fixture-1"}, {"apiVersion", 1}})
		logf("initialized " + jsString(get(get(get(msg, "params"), "plugin"), "id")))
		return
	}
	respondError(rawID, -32601, "unknown method "+method)
}

func handleEvent(params any) {
	element := get(params, "element")
	event := get(params, "event")
	switch {
	case element == "greet" && event == "click":
		clicks++
		setPanel()
		who := "world"
		if name != nil && *name != "" {
			who = *name
		}
		notify("ui/notify", obj{{"message", "Hello, " + who + "!"}, {"kind", "success"}})
	case element == "name" && event == "change":
		value := get(params, "value")
		if value == undefined || value == nil {
			name = nil
		} else {
			s := jsString(value)
			name = &s
		}
	case element == "ask" && event == "click":
		request("prompt/inject", obj{{"text", "Say hello"}, {"target", "ask"}})
	case element == "items" && event == "action":
		logf("action " + jsString(get(params, "action")) + " on " + jsString(get(params, "item")))
	}
}

func handleNotification(msg object, method string) {
	switch method {
	case "panel/open":
		setPanel()
	case "ui/event":
		handleEvent(get(msg, "params"))
		uiEvents++
		if crashAfter > 0 && float64(uiEvents) >= crashAfter {
			logf("simulated crash after " + strconv.Itoa(uiEvents) + " ui/event messages")
			finish(3)
		}
	case "context/changed":
		notify("ui/setBadge", obj{{"text", "ctx"}})
	case "shutdown":
		logf("bye")
		finish(0)
	default:
		// unknown notifications are ignored
	}
}

func handleResponse(msg object) {
	id, ok := msg["id"].(float64)
	if !ok {
		return
	}
	method, ok := pending[id]
	if !ok {
		return
	}
	delete(pending, id)
	if method != "prompt/inject" {
		return
	}
	if e := get(msg, "error"); e != undefined && e != nil {
		notify("ui/notify", obj{{"message", "prompt failed: " + jsString(get(e, "message"))}, {"kind", "error"}})
	} else {
		notify("ui/notify", obj{{"message", "prompt " + jsString(get(get(msg, "result"), "status"))}, {"kind", "info"}})
	}
}

func handleLine(line string) {
	line = strings.TrimSuffix(line, "\r")
	if strings.Trim(line, " \t\r") == "" {
		return
	}
	v, err := parseJSON(line)
	if err != nil {
		logf("ignoring non-JSON line")
		return
	}
	msg, ok := v.(object)
	if !ok {
		logf("ignoring non-object message")
		return
	}
	method, isString := get(msg, "method").(string)
	id := get(msg, "id")
	hasID := id != undefined && id != nil
	switch {
	case isString && hasID:
		handleRequest(msg, method, line)
	case isString:
		handleNotification(msg, method)
	case hasID:
		handleResponse(msg)
	default:
		logf("ignoring message without method or id")
	}
}

// run reads stdin, split on "\n" only (not on a lone "\r"), and handles each
// line decoded as UTF-8. It returns the exit code.
func run() int {
	in := bufio.NewReaderSize(os.Stdin, 64*1024)
	var acc []byte
	for {
		chunk, err := in.ReadSlice('\n')
		acc = append(acc, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // a long line: keep accumulating
		}
		if err == nil {
			acc = acc[:len(acc)-1] // the '\n'
		}
		if err == nil || len(acc) > 0 {
			handleLine(decodeUTF8(acc))
			acc = acc[:0]
			if exitCode >= 0 {
				return exitCode
			}
		}
		if err != nil {
			// EOF, or a read error, which also ends the input.
			logf("bye")
			return 0
		}
	}
}

func main() {
	// Like Node and Python: a closed stdout is an error on write, not SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	if s, ok := envString("FIXTURE_LABEL"); ok {
		label = s
	}
	crashAfter = parseCount(envString("FIXTURE_CRASH_AFTER"))
	os.Exit(run())
}
