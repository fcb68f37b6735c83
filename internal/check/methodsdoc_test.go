package check

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostMethodsDoc: docs/agentty-host-methods.md has a row for every
// method check knows, with the API level and the permission check uses,
// and no row for a method check does not know.
func TestHostMethodsDoc(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agentty-host-methods.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `") {
			cells := strings.Split(line, " | ")
			rows[strings.Trim(cells[0], "| `")+" "+strings.TrimSpace(cells[1])] = line
		}
	}
	for _, m := range Methods() {
		key := fmt.Sprintf("%s %d", m.Name, m.Since)
		line, ok := rows[key]
		if !ok {
			t.Errorf("docs/agentty-host-methods.md has no row for %s at API %d", m.Name, m.Since)
			continue
		}
		delete(rows, key)
		if m.Permission != "" && !strings.Contains(line, "`"+m.Permission+"`") {
			t.Errorf("%s's row does not name its permission %s: %s", m.Name, m.Permission, line)
		}
		if m.Permission == "" && strings.Contains(line, ".") && strings.Contains(strings.Split(line, " | ")[2], "`") {
			t.Errorf("%s needs no permission, but its row names one: %s", m.Name, line)
		}
	}
	for key := range rows {
		t.Errorf("docs/agentty-host-methods.md lists %s, which check does not know", key)
	}
}

// TestManifestDocShowsTheBundledOne: the manifest docs/agentty-manifest.md
// shows is hello-node's, byte for byte, and check reads it.
func TestManifestDocShowsTheBundledOne(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agentty-manifest.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "```json\n")
	block, _, _ = strings.Cut(block, "```")
	dir := filepath.Join("..", "..", "testdata", "plugins", "hello-node")
	have, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if block != string(have) {
		t.Errorf("docs/agentty-manifest.md shows:\n%s\nwant hello-node's:\n%s", block, have)
	}
	m, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil || m == nil || m.ID != "hello-node" || len(m.Permissions) != 1 {
		t.Errorf("check reads the shown manifest as %+v, %v", m, err)
	}
}
