package check

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// mcpFS holds the MCP schema files: common.json (the shapes messages
// share) and one file per method (x-method), which says who sends it
// (x-from: client, server or both), the section of the specification
// that defines it (x-section), and its shapes under $defs: params, result,
// and result-task (a task-augmented request's answer).
//
//go:embed schemas/mcp/*.json
var mcpFS embed.FS

// mcpMethod is one MCP method as its schema file describes it.
type mcpMethod struct {
	name    string
	from    string // "client", "server" or "both"
	section string // e.g. "server/tools"
	params  *jsonschema.Schema
	result  *jsonschema.Schema
	task    *jsonschema.Schema // the result of a task-augmented request; nil when the method has none
}

// sentBy reports whether s may send the method.
func (m *mcpMethod) sentBy(s side) bool {
	return m.from == "both" || m.from == "client" && s == hostSide || m.from == "server" && s == peerSide
}

// mcpSchemas is the MCP schemas, compiled.
type mcpSchemas struct {
	methods       map[string]*mcpMethod
	inputRequired *jsonschema.Schema // a 2026-07-28 input_required result
}

// loadMCPSchemas reads and compiles the embedded MCP schema files.
func loadMCPSchemas() (*mcpSchemas, error) {
	files, err := fs.Glob(mcpFS, "schemas/mcp/*.json")
	if err != nil {
		return nil, fmt.Errorf("list MCP schemas: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	docs := map[string]map[string]any{}
	for _, path := range files {
		b, err := mcpFS.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read MCP schema %s: %w", path, err)
		}
		doc, err := parseDoc(b)
		if err != nil {
			return nil, fmt.Errorf("parse MCP schema %s: %w", path, err)
		}
		url := schemaBase + strings.TrimPrefix(path, "schemas/")
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("add MCP schema %s: %w", path, err)
		}
		obj, _ := doc.(map[string]any)
		docs[url] = obj
	}
	s := &mcpSchemas{methods: map[string]*mcpMethod{}}
	compile := func(url, def string) (*jsonschema.Schema, error) {
		defs, _ := docs[url]["$defs"].(map[string]any)
		if defs[def] == nil {
			return nil, nil
		}
		sch, err := c.Compile(url + "#/$defs/" + def)
		if err != nil {
			return nil, fmt.Errorf("compile %s %s: %w", url, def, err)
		}
		return sch, nil
	}
	for url, obj := range docs {
		name, ok := obj["x-method"].(string)
		if !ok {
			continue
		}
		m := &mcpMethod{name: name}
		m.from, _ = obj["x-from"].(string)
		m.section, _ = obj["x-section"].(string)
		if m.from != "client" && m.from != "server" && m.from != "both" || m.section == "" {
			return nil, fmt.Errorf("MCP schema %s: x-from %q, x-section %q", url, m.from, m.section)
		}
		if m.params, err = compile(url, "params"); err != nil {
			return nil, err
		}
		if m.result, err = compile(url, "result"); err != nil {
			return nil, err
		}
		if m.task, err = compile(url, "result-task"); err != nil {
			return nil, err
		}
		s.methods[name] = m
	}
	if s.inputRequired, err = compile(schemaBase+"mcp/common.json", "inputRequired"); err != nil || s.inputRequired == nil || len(s.methods) == 0 {
		return nil, errors.Join(errors.New("load MCP schemas: the embedded schemas are incomplete"), err)
	}
	return s, nil
}

// schemaIssues turns a validation error of instance v into issues, one
// per broken constraint; prefix is prepended to the paths ("params",
// "result").
func schemaIssues(err error, v any, prefix string) []issue {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []issue{{path: prefix, message: err.Error()}}
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
		loc := e.InstanceLocation
		field := prefix
		if len(loc) > 0 {
			field = loc[len(loc)-1]
		}
		is := issue{path: jsonPath(prefix, v, loc), message: explain(e.ErrorKind, valueAt(v, loc), field)}
		if !seen[is] {
			seen[is] = true
			out = append(out, is)
		}
	}
	walk(ve)
	return out
}
