package cli

// Real MCP and language servers, and their scripted clients, from
// testdata/mcp and testdata/lsp (see their README.md); the npm MCP servers
// and gopls that .ci/tools installs, when it did.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildPeers returns the path of each fixture program named (packages
// under testdata/, "mcp/go", "lsp/client", …) by name, built once for all
// tests (see goProgram).
func buildPeers(t *testing.T, pkgs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pkg := range pkgs {
		out[pkg] = goProgram(t, "./testdata/"+pkg, filepath.Base(filepath.Dir(pkg))+"-"+filepath.Base(pkg))
	}
	return out
}

// recordThrough runs client (with its flags) against tapedeck record
// around server, into store, and fails the test when the client says a step
// went wrong. It returns what the client printed.
func recordThrough(t *testing.T, store string, client []string, server ...string) string {
	t.Helper()
	argv := append(append(append([]string{}, client[1:]...), "--", tapedeckBin, "--store", store, "record", "--"), server...)
	cmd := exec.Command(client[0], argv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s\n%s", filepath.Base(client[0]), err, out.Bytes(), errb.Bytes())
	}
	return out.String()
}

// goplsPath is the gopls .ci/tools installed ($TAPEDECK_GOPLS); the test
// skips, saying why, without one.
func goplsPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("TAPEDECK_GOPLS")
	if p == "" {
		t.Skip("no gopls: TAPEDECK_GOPLS is not set (eval \"$(.ci/tools)\" installs gopls v0.23.0)")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no gopls at TAPEDECK_GOPLS=%s: %v", p, err)
	}
	return p
}

// npmMCPServer is the argv that runs one of the npm MCP servers .ci/tools
// installed (mcp-server-everything, …) with node; the test skips, saying
// why, without node or the servers.
func npmMCPServer(t *testing.T, name string) []string {
	t.Helper()
	dir := os.Getenv("TAPEDECK_MCP_NPM")
	if dir == "" {
		t.Skip("no npm MCP servers: TAPEDECK_MCP_NPM is not set (eval \"$(.ci/tools)\" installs them)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH: the npm MCP servers are node scripts")
	}
	script := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(script); err != nil {
		t.Skipf("no %s in TAPEDECK_MCP_NPM=%s: %v", name, dir, err)
	}
	return []string{node, script}
}
