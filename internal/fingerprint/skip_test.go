package fingerprint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// TestTakeLeavesOutSecretsAndOwnFiles: only what the runtime could load is
// hashed; never a dotfile, a key or credential file, what .gitignore
// excludes, tapedeck's own files or a data folder a variable names. The
// main is hashed even when .gitignore excludes it (a built main).
func TestTakeLeavesOutSecretsAndOwnFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"agentty-plugin.json":      `{"id":"p"}`,
		"dist/main.js":             "1",
		"src/util.js":              "2",
		"src/tokenizer.js":         "4",
		"lib/nested/keep.js":       "3",
		".env":                     "PIN=4711\n",
		".npmrc":                   "//registry/:_authToken=x",
		"conf/.secret.json":        "x",
		"credentials.json":         "x",
		"client_secret.json":       "x",
		"deploy.pem":               "x",
		"id_ed25519":               "x",
		"server.key":               "x",
		"api_token.txt":            "x",
		".gitignore":               "dist/\n*.log\n/build\n!keep.log\nsrc/**/gen-*.js\n",
		"debug.log":                "x",
		"keep.log":                 "kept",
		"build/out.js":             "x",
		"src/a/b/gen-1.js":         "x",
		"tapes/recipes.jsonl":      "x",
		"tapes/recipes.jsonl.new":  "x",
		"greet.jsonl":              "x",
		"greet.jsonl.new":          "x",
		"tapedeck.json":            "{}",
		"state/db.json":            "x",
		"home/cache.json":          "x",
		".cache/x.js":              "x",
		"vendor/.hidden/inside.js": "x",
		"golden_test.go":           "x",
		"go.mod":                   "x",
		"go.sum":                   "x",
		"testdata/fixture.txt":     "x",
		"main.go":                  "5",
	})
	env := []string{"PLUGIN_HOME=" + filepath.Join(dir, "home"), "STATE_DIR=state"}
	fp, err := Take(context.Background(), Options{Command: []string{"/no/node", "dist/main.js"}, Dir: dir, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for f := range fp.Files {
		files = append(files, f)
	}
	if got, want := strings.Join(slices.Sorted(slices.Values(files)), " "), "agentty-plugin.json dist/main.js keep.log lib/nested/keep.js main.go src/tokenizer.js src/util.js"; got != want {
		t.Errorf("hashed\n %q\nwant\n %q", got, want)
	}
	b, _ := json.Marshal(fp)
	sum := sha256.Sum256([]byte("PIN=4711\n"))
	if strings.Contains(string(b), hex.EncodeToString(sum[:])) || strings.Contains(string(b), filepath.Join(dir, "home")) {
		t.Errorf("the fingerprint holds a secret's hash or a variable's value: %s", b)
	}
	if !slices.Equal(fp.EnvNames, []string{"PLUGIN_HOME", "STATE_DIR"}) {
		t.Errorf("names %q", fp.EnvNames)
	}
}

// TestCompareSaysLocaleAndMissingVariables: TZ and the locale are drift; a
// variable the recording had and the replay lacks is named first; files
// an older fingerprint hashed that are tapedeck's own or secrets are not
// "removed".
func TestCompareSaysLocaleAndMissingVariables(t *testing.T) {
	rec := &frame.Fingerprint{OS: "linux", Arch: "amd64",
		Files:    map[string]string{"main.mjs": "1", "tapes/a.jsonl": "1", "a.jsonl.new": "1", ".env": "1", "tapedeck.json": "1"},
		Locale:   map[string]string{"TZ": "Europe/Berlin", "LANG": "de_DE.UTF-8"},
		EnvNames: []string{"CLOCK_DIR", "COSMICA_HOME"}}
	live := &frame.Fingerprint{OS: "linux", Arch: "amd64",
		Files:    map[string]string{"main.mjs": "1", "tapes/b.jsonl": "1", "b.jsonl.new": "1"},
		Locale:   map[string]string{"LANG": "de_DE.UTF-8", "LC_ALL": "C"},
		EnvNames: []string{"CLOCK_DIR", "OTHER"}}
	d := Compare(rec, live)
	if want := "COSMICA_HOME not set now (the recording had it); LC_ALL (unset) → C; TZ Europe/Berlin → (unset)"; d.Summary != want {
		t.Errorf("summary\n got %q\nwant %q", d.Summary, want)
	}
	if len(d.Added)+len(d.Removed)+len(d.Changed) != 0 {
		t.Errorf("files drifted: %+v", d)
	}
	same := *rec
	same.Files = map[string]string{"main.mjs": "1"}
	if d := Compare(rec, &same); !d.None() {
		t.Errorf("Compare with only tapedeck's files gone: %+v", d)
	}
}
