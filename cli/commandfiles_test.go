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

// TestDependenciesPointOneWay enforces the package graph: the relay imports
// only the standard library, only the store imports bbolt, only diff imports
// go-diff, only cli imports urfave/cli, main imports only cli, and no
// package reaches upwards.
func TestDependenciesPointOneWay(t *testing.T) {
	const mod = "github.com/tapedeck/tapedeck"
	rules := []struct {
		pkg       string
		forbidden []string // import path prefixes
		onlyStd   bool
	}{
		{pkg: "proxy", onlyStd: true},
		{pkg: "spool", onlyStd: true},
		{pkg: "frame", onlyStd: true},
		{pkg: "tape", forbidden: []string{mod + "/store", mod + "/proxy", mod + "/recorder", "go.etcd.io/bbolt", "github.com/urfave/cli"}},
		{pkg: "recorder", forbidden: []string{mod + "/store", "go.etcd.io/bbolt", "github.com/urfave/cli"}},
		{pkg: "check", forbidden: []string{mod + "/store", mod + "/proxy", mod + "/recorder", "go.etcd.io/bbolt", "github.com/urfave/cli"}},
		{pkg: "replay", forbidden: []string{mod + "/store", mod + "/proxy", mod + "/recorder", "go.etcd.io/bbolt", "github.com/urfave/cli"}},
		{pkg: "diff", forbidden: []string{mod + "/store", mod + "/proxy", mod + "/recorder", mod + "/replay", "go.etcd.io/bbolt", "github.com/urfave/cli"}},
		{pkg: "message", onlyStd: true},
		{pkg: "jsonpath", onlyStd: true},
		{pkg: "cli/internal/escape", onlyStd: true},
		{pkg: "cli/internal/screen", forbidden: []string{mod + "/", "github.com/urfave/cli"}},
		{pkg: "store", forbidden: []string{mod + "/proxy", mod + "/recorder", mod + "/replay", mod + "/diff", "github.com/urfave/cli", "github.com/sergi/go-diff", "os/exec"}},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+"/"+r.pkg {
				continue
			}
			if r.onlyStd {
				t.Errorf("%s imports %s; it may import only the standard library", r.pkg, dep)
			}
			for _, f := range r.forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s imports %s, which it must not", r.pkg, dep)
				}
			}
		}
	}
	// Who may import the third-party libraries.
	owners := map[string]string{
		"go.etcd.io/bbolt":         mod + "/store",
		"github.com/sergi/go-diff": mod + "/diff",
		"github.com/urfave/cli/v2": mod + "/cli",
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			for lib, owner := range owners {
				if strings.HasPrefix(imp, lib) && f[0] != owner {
					t.Errorf("%s imports %s; only %s may", f[0], imp, owner)
				}
			}
		}
	}
	// main only builds and runs the command line.
	out, err = exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list .: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.Contains(imp, ".") && imp != mod+"/cli" {
			t.Errorf("main imports %s; it may import only %s/cli and the standard library", imp, mod)
		}
	}
}

// TestCommandFilesAreIndependent enforces that no file of package cli uses
// what a command file (cli/cmd_*.go) declares, but that file itself and
// app.go, which puts the commands together: what two commands share lives
// in a file (or package) of its own, and the shared files never reach back
// into a command. It type-checks package cli from its
// source, with its imports read from the build's export data, and looks up
// where each name a command file uses was declared.
func TestCommandFilesAreIndependent(t *testing.T) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "./cli").Output()
	if err != nil {
		t.Fatalf("go list -export ./cli: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok {
			exports[path] = file
		}
	}
	names, err := filepath.Glob(filepath.Join("cli", "*.go"))
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
