package cli

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// programs are the Go fixture programs (the MCP and LSP peers and their
// clients, flood-go) built for one run of the tests, each once, into a
// folder e2e.Run makes and removes: a link is seconds of CPU, and a dozen
// tests run the same four peers.
type programs struct {
	dir string
	mu  sync.Mutex
	m   map[string]*program // by package
}

// program is one build, done once.
type program struct {
	once sync.Once
	path string
	err  error
}

// builtPrograms is this run's programs; e2e.Run sets it before any test
// runs.
var builtPrograms *programs

// goProgram returns the path of the program built from pkg (a package path
// from the module root, "./testdata/mcp/go"), named name, building it the
// first time a test asks. A test that needs the program in a folder of its
// own copies it.
func goProgram(t testing.TB, pkg, name string) string {
	t.Helper()
	ps := builtPrograms
	ps.mu.Lock()
	p := ps.m[pkg]
	if p == nil {
		p = &program{path: filepath.Join(ps.dir, strconv.Itoa(len(ps.m)), name)}
		ps.m[pkg] = p
	}
	ps.mu.Unlock()
	p.once.Do(func() {
		if out, err := exec.Command("go", "build", "-o", p.path, pkg).CombinedOutput(); err != nil {
			p.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if p.err != nil {
		t.Fatal(p.err)
	}
	if filepath.Base(p.path) != name {
		t.Fatalf("%s was built as %s, asked for as %s", pkg, filepath.Base(p.path), name)
	}
	return p.path
}
