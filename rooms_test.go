package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// genericRooms are the packages that must work for any host: what they
// need to know of one (its framing, its handshake, its panels, its grace
// periods, its variables) they are told by a host profile
// (internal/profile), so that MCP servers and language servers go through
// the same code as Agentty plugins, and a new host is one new profile.
var genericRooms = []string{
	"frame", "message", "tape", "playback",
	"internal/relay", "internal/recorder", "internal/spool", "internal/store",
	"internal/wire", "internal/host", "internal/diff", "internal/shrink",
	"internal/golden", "internal/capture", "internal/window",
	"internal/filter", "internal/noise", "internal/pending", "internal/inorder", "internal/note",
}

// agenttyToken matches what only the Agentty host knows: its methods, its
// variables, its manifest and its initialize's API version.
var agenttyToken = regexp.MustCompile(`ui/[a-zA-Z]|panel/(open|close)|AGENTTY_|agentty-plugin\.json|apiVersion|host/(info|openUrl|revealPath|timer|copy)|prompt/inject|storage/[a-z]|net/fetch|context/(get|changed)|command/execute|url/open|terminal/send|session/get|workspace/list|browser/[a-z]`)

// TestGenericRoomsNameNoHost: no string in the code of a generic room names
// an Agentty method, variable or manifest. (Comments may give examples;
// struct tags name the stored session format's fields, which every build
// reads alike, and are left out.)
func TestGenericRoomsNameNoHost(t *testing.T) {
	for _, room := range genericRooms {
		eachLiteral(t, room, func(pos token.Position, lit *ast.BasicLit, inTag bool) {
			if lit.Kind != token.STRING || inTag {
				return
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return
			}
			if m := agenttyToken.FindString(s); m != "" {
				t.Errorf("%s: %q names the Agentty host (%s): ask its host profile (internal/profile) instead", pos, s, m)
			}
		})
	}
}

// eachLiteral calls fn with every literal of the package in dir's
// non-test files, and whether it is a struct tag.
func eachLiteral(t *testing.T, dir string, fn func(token.Position, *ast.BasicLit, bool)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		tags := map[*ast.BasicLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if fld, ok := n.(*ast.Field); ok && fld.Tag != nil {
				tags[fld.Tag] = true
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok {
				fn(fset.Position(lit.Pos()), lit, tags[lit])
			}
			return true
		})
	}
}

// TestOneJSONScanner: JSON strings are scanned by hand in one place,
// internal/jsonscan. A function elsewhere whose switch cases tell '"' from
// '\\' (where a string ends, and its escapes) is a string scanner of its
// own: use jsonscan's (SkipString, CheckString, PartialString, Unquote,
// AppendString, Compact). Dispatch on the kind of a value ('{', '[', '"')
// built on jsonscan is not scanning; nor is a check that a value starts
// with '"' or holds no '\\' (only cases that test a byte for equality
// count).
func TestOneJSONScanner(t *testing.T) {
	dirs, err := filepath.Glob("*")
	if err != nil {
		t.Fatal(err)
	}
	internal, _ := filepath.Glob("internal/*")
	for _, dir := range append(dirs, internal...) {
		if dir == "internal/jsonscan" || dir == "testdata" || dir == "bench" || !isDir(dir) || strings.HasPrefix(dir, ".") {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				chars := map[string]bool{}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if cc, ok := n.(*ast.CaseClause); ok {
						for _, e := range cc.List {
							caseChars(e, chars)
						}
					}
					return true
				})
				if chars[`'"'`] && chars[`'\\'`] {
					t.Errorf("%s: %s scans JSON strings by hand: use internal/jsonscan", name, fn.Name.Name)
				}
			}
		}
	}
}

// caseChars adds to chars the character literals a case expression tests
// a byte for equality with: the case's own value (case '"':), or one side
// of an == (case c == '"':), through && and || and parentheses.
func caseChars(e ast.Expr, chars map[string]bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.CHAR {
			chars[e.Value] = true
		}
	case *ast.ParenExpr:
		caseChars(e.X, chars)
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND, token.LOR:
			caseChars(e.X, chars)
			caseChars(e.Y, chars)
		case token.EQL:
			for _, side := range []ast.Expr{e.X, e.Y} {
				if lit, ok := side.(*ast.BasicLit); ok && lit.Kind == token.CHAR {
					chars[lit.Value] = true
				}
			}
		}
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
