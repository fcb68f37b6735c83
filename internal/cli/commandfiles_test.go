package cli

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCommandFilesAreIndependent enforces that no file of package cli uses
// what a command file (cli/cmd_*.go) declares, but that file itself and
// app.go, which puts the commands together: what two commands share lives
// in a file (or package) of its own, and the shared files never reach back
// into a command. It type-checks package cli from its
// source, with its imports read from the build's export data, and looks up
// where each name a command file uses was declared.
func TestCommandFilesAreIndependent(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "./internal/cli").Output()
	if err != nil {
		t.Fatalf("go list -export ./internal/cli: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok {
			exports[path] = file
		}
	}
	names, err := filepath.Glob(filepath.Join("internal", "cli", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	if _, err := conf.Check("github.com/tapedeck/tapedeck/cli", fset, files, info); err != nil {
		t.Fatalf("type-check cli: %v", err)
	}
	isCommand := func(file string) bool { return strings.HasPrefix(filepath.Base(file), "cmd_") }
	bad := map[string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() == nil || obj.Pkg().Path() != "github.com/tapedeck/tapedeck/cli" {
			continue
		}
		user := fset.Position(id.Pos()).Filename
		decl := fset.Position(obj.Pos()).Filename
		if isCommand(decl) && user != decl && filepath.Base(user) != "app.go" {
			bad[filepath.Base(user)+" uses "+obj.Name()+" of "+filepath.Base(decl)] = true
		}
	}
	var list []string
	for b := range bad {
		list = append(list, b)
	}
	sort.Strings(list)
	for _, b := range list {
		t.Errorf("%s: only its own command file (and app.go) may use it; move it to a shared file", b)
	}
	if len(files) < 10 {
		t.Fatalf("found %d files in cli/: is the test running from the module root?", len(files))
	}
}

// TestOnlyCommandFilesSeeTheContext: the command layer reads flags where
// it declares them, so only a command file (and app.go, the root command)
// mentions urfave/cli's Context; the files the commands share take plain
// values. And a command file stays small: flags, one call, rendering.
func TestOnlyCommandFilesSeeTheContext(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob(filepath.Join("internal", "cli", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 10 {
		t.Fatalf("found %d files in cli/: is the test running from the module root?", len(names))
	}
	for _, n := range names {
		base := filepath.Base(n)
		if strings.HasSuffix(base, "_test.go") {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		command := strings.HasPrefix(base, "cmd_") || base == "app.go"
		if !command && strings.Contains(string(b), "cli.Context") {
			t.Errorf("%s mentions *cli.Context: only command files read flags; pass the values", base)
		}
		if lines := strings.Count(string(b), "\n"); command && lines > 200 {
			t.Errorf("%s has %d lines: a command file is flags, one engine call and rendering (at most 200 lines)", base, lines)
		}
	}
}
