package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependenciesPointOneWay enforces the package graph: the relay imports
// only the standard library, only the store imports bbolt, only diff imports
// go-diff, only main imports urfave/cli, and no package reaches upwards.
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
		"github.com/urfave/cli/v2": mod,
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
}
