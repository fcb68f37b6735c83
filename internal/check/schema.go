package check

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// schemaFS holds the schema files: one per plugin→host method (x-method),
// response.json for the plugin's answers, ui-elements.json for the element
// shapes and one ui-tree.N.json per API level of the UI tree.
//
//go:embed schemas/*.json
var schemaFS embed.FS

// schemaBase is the base URL the schema files are loaded under. Nothing is
// ever fetched: every file is added as a resource, and any other URL fails.
const schemaBase = "https://tapedeck.invalid/schemas/"

// treeFile is the URL under which each level's ui-tree.N.json is loaded.
const treeFile = "ui-tree.json"

// method is one plugin→host method as its schema file describes it.
type method struct {
	name       string
	since      int    // the API version that brought it
	permission string // the manifest permission it needs, "" for none
	section    string // the manifest section it acts on (x-section), "" for none
	file       string
}

// level is every schema compiled with one UI-tree level: the plugin's API
// version picks the level with the highest since not above it.
type level struct {
	since    int
	params   map[string]*jsonschema.Schema // by method
	response *jsonschema.Schema
	docs     map[string]any // file URL → parsed file, for the x- annotations
}

// schemas is what the embedded files give, compiled. It is built once by
// loadSchemas and only read afterwards.
type schemas struct {
	methods map[string]method
	levels  []*level       // by ascending since
	types   map[string]int // UI element type → the API version that brought it
}

// noLoader refuses every URL: all the schemas are embedded.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s is not embedded", url)
}

// loadSchemas reads and compiles the embedded schema files.
func loadSchemas() (*schemas, error) {
	files, err := fs.Glob(schemaFS, "schemas/*.json")
	if err != nil {
		return nil, fmt.Errorf("list schemas: %w", err)
	}
	raw := map[string][]byte{}
	trees := map[int]string{}
	s := &schemas{methods: map[string]method{}, types: map[string]int{}}
	for _, path := range files {
		b, err := schemaFS.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read schema %s: %w", path, err)
		}
		name := strings.TrimPrefix(path, "schemas/")
		raw[name] = b
		doc, err := parseDoc(b)
		if err != nil {
			return nil, fmt.Errorf("parse schema %s: %w", name, err)
		}
		obj, _ := doc.(map[string]any)
		if m, ok := obj["x-method"].(string); ok {
			if obj["x-direction"] != "out" {
				continue
			}
			perm, _ := obj["x-permission"].(string)
			section, _ := obj["x-section"].(string)
			s.methods[m] = method{name: m, since: intOf(obj["x-since"]), permission: perm, section: section, file: name}
		}
		if strings.HasPrefix(name, "ui-tree.") {
			trees[intOf(obj["x-since"])] = name
		}
		if name == "ui-elements.json" {
			defs, _ := obj["$defs"].(map[string]any)
			for t, d := range defs {
				if since := intOf(d.(map[string]any)["x-since"]); since > 0 {
					s.types[t] = since
				}
			}
		}
	}
	if len(trees) == 0 || len(s.methods) == 0 || raw["response.json"] == nil {
		return nil, errors.New("load schemas: the embedded schemas are incomplete")
	}
	for since, tree := range trees {
		l, err := s.compile(raw, since, tree)
		if err != nil {
			return nil, fmt.Errorf("compile schemas for API %d: %w", since, err)
		}
		s.levels = append(s.levels, l)
	}
	sort.Slice(s.levels, func(i, j int) bool { return s.levels[i].since < s.levels[j].since })
	return s, nil
}

// compile compiles every file with tree loaded as ui-tree.json.
func (s *schemas) compile(raw map[string][]byte, since int, tree string) (*level, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	l := &level{since: since, params: map[string]*jsonschema.Schema{}, docs: map[string]any{}}
	add := func(url string, b []byte) error {
		doc, err := parseDoc(b)
		if err != nil {
			return err
		}
		l.docs[url] = doc
		return c.AddResource(url, doc)
	}
	for name, b := range raw {
		if strings.HasPrefix(name, "ui-tree.") {
			continue
		}
		if err := add(schemaBase+name, b); err != nil {
			return nil, fmt.Errorf("add %s: %w", name, err)
		}
	}
	if err := add(schemaBase+treeFile, raw[tree]); err != nil {
		return nil, fmt.Errorf("add %s: %w", tree, err)
	}
	for name, m := range s.methods {
		sch, err := c.Compile(schemaBase + m.file)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", m.file, err)
		}
		l.params[name] = sch
	}
	var err error
	if l.response, err = c.Compile(schemaBase + "response.json"); err != nil {
		return nil, fmt.Errorf("compile response.json: %w", err)
	}
	return l, nil
}

// level returns the schemas for a plugin of API version api.
func (s *schemas) level(api int) *level {
	l := s.levels[0]
	for _, c := range s.levels {
		if c.since <= api {
			l = c
		}
	}
	return l
}

// parseDoc parses JSON the way the schema library wants it (numbers as
// json.Number).
func parseDoc(b []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// intOf is v as an int when it is a JSON integer, else 0.
func intOf(v any) int {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	i, err := strconv.Atoi(string(n))
	if err != nil {
		return 0
	}
	return i
}

// issue is one broken constraint, before it becomes a finding.
type issue struct {
	rule    string
	path    string
	message string
}

// issues turns a validation error of instance v into issues, one per
// broken constraint. rule is the rule of constraints whose schema names
// none; prefix is prepended to the instance paths ("params", or "" for a
// whole message); api is the plugin's API version, for the explanations.
func (s *schemas) issues(l *level, err error, v any, rule, prefix string, api int) []issue {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []issue{{rule: rule, path: prefix, message: err.Error()}}
	}
	var out []issue
	seen := map[issue]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *kind.OneOf, *kind.AnyOf:
			// The branches' own errors say little: report the choice.
		default:
			if len(e.Causes) > 0 {
				for _, c := range e.Causes {
					walk(c)
				}
				return
			}
		}
		is := s.issue(l, e, v, rule, prefix, api)
		if !seen[is] {
			seen[is] = true
			out = append(out, is)
		}
	}
	walk(ve)
	return out
}

// issue explains one leaf of a validation error.
func (s *schemas) issue(l *level, e *jsonschema.ValidationError, v any, rule, prefix string, api int) issue {
	url, ptr, _ := strings.Cut(e.SchemaURL, "#")
	doc := l.docs[url]
	node, _ := pointer(doc, ptr).(map[string]any)
	keyword := ""
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		keyword = kp[0]
	}
	if r, ok := node["x-rule"].(string); ok {
		rule = r
	} else if rules, ok := doc.(map[string]any)["x-rules"].(map[string]any); ok {
		if r, ok := rules[keyword].(string); ok {
			rule = r
		} else if r, ok := rules["*"].(string); ok {
			rule = r
		}
	}
	loc := e.InstanceLocation
	val := valueAt(v, loc)
	field := prefix
	if len(loc) > 0 {
		field = loc[len(loc)-1]
	}
	var msg string
	if says, ok := node["x-says"].(string); ok {
		msg = says
		if _, obj := val.(map[string]any); !obj {
			msg += " (" + show(val) + ")"
		}
	} else {
		msg = explain(e.ErrorKind, val, field)
	}
	if rule == RuleUIUnknownType {
		t, _ := val.(string)
		loc = loc[:len(loc)-1] // the node, not its type member
		if since, ok := s.types[t]; ok && since > api {
			msg = fmt.Sprintf("element type %q needs apiVersion %d (the plugin's is %d)", t, since, api)
		} else {
			msg = "unknown element type " + show(val)
		}
	} else if t, ok := typeOf(val); ok && keyword == "required" {
		msg = t + ": " + msg
	}
	return issue{rule: rule, path: jsonPath(prefix, v, loc), message: msg}
}

// explain words one broken constraint about value val of member field.
func explain(k jsonschema.ErrorKind, val any, field string) string {
	name := ""
	if field != "" && !isIndex(field) {
		name = field + " "
	}
	switch k := k.(type) {
	case *kind.Required:
		q := make([]string, len(k.Missing))
		for i, m := range k.Missing {
			q[i] = strconv.Quote(m)
		}
		return "missing " + strings.Join(q, ", ")
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = show(w)
		}
		return fmt.Sprintf("%s%s is not one of %s", name, show(val), strings.Join(want, ", "))
	case *kind.Const:
		return fmt.Sprintf("%s%s is not %s", name, show(val), show(k.Want))
	case *kind.Type:
		return fmt.Sprintf("%sis %s, want %s", name, k.Got, strings.Join(k.Want, " or "))
	case *kind.MaxLength:
		return fmt.Sprintf("%shas %d characters, more than %d", name, k.Got, k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("%shas %d characters, fewer than %d", name, k.Got, k.Want)
	case *kind.Minimum:
		return fmt.Sprintf("%s%s is below %s", name, ratString(k.Got), ratString(k.Want))
	case *kind.Maximum:
		return fmt.Sprintf("%s%s is above %s", name, ratString(k.Got), ratString(k.Want))
	}
	// The library's own words, without its "at '/x': " prefix.
	msg := (&jsonschema.ValidationError{ErrorKind: k}).Error()
	if _, rest, ok := strings.Cut(msg, "': "); ok {
		msg = rest
	}
	return name + msg
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	return r.RatString()
}

// typeOf is the "type" member of a UI element.
func typeOf(v any) (string, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	t, ok := obj["type"].(string)
	return t, ok
}

// show is v as short JSON text, for messages.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 40
	if len(b) > max {
		r := []rune(string(b))
		if len(r) > max {
			return string(r[:max]) + "…"
		}
	}
	return string(b)
}

// pointer resolves the JSON pointer ptr ("/a/0/b") in doc; nil when it
// names nothing.
func pointer(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, tok := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return valueAt(doc, toks)
}

// valueAt is the value at the instance location loc inside v, nil when none.
func valueAt(v any, loc []string) any {
	for _, tok := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func isIndex(tok string) bool {
	if tok == "" {
		return false
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// identifier reports whether tok can follow a dot in a path.
func identifier(tok string) bool {
	for i, c := range tok {
		switch {
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return tok != ""
}

// jsonPath spells the instance location loc inside v the way tapedeck's
// paths read: prefix, then .member or [index], or ["odd member"].
func jsonPath(prefix string, v any, loc []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, tok := range loc {
		if _, arr := v.([]any); arr && isIndex(tok) {
			b.WriteString("[" + tok + "]")
		} else if identifier(tok) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		} else {
			q, _ := json.Marshal(tok)
			b.WriteString("[" + string(q) + "]")
		}
		v = valueAt(v, []string{tok})
	}
	return b.String()
}
