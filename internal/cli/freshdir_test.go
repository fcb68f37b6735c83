package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/datafolder"
)

// cosmicaPlugin copies testdata/plugins/cosmica-node, with the SDK it
// runs on, into a folder of the test's, and returns the plugin's folder.
func cosmicaPlugin(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, sub := range []string{"cosmica-node", filepath.Join("clock-node", "sdk")} {
		src := filepath.Join("testdata", "plugins", sub)
		if err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			to := filepath.Join(root, sub, rel)
			if d.IsDir() {
				return os.MkdirAll(to, 0o755)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "cosmica-node")
}

// TestFreshDirIsNoFalsePass: Cosmica keeps its notes in the folder its
// settings in COSMICA_HOME name, and without them in ~/CosmicaNotes. A
// tape recorded with a real COSMICA_HOME replayed with --fresh-dir
// COSMICA_HOME used to pass on an empty folder while the plugin wrote into
// the real home: now each run says that the plugin left the folder
// unused. A tape that carries a copy of the folder (NAME.data/env/
// COSMICA_HOME) gives each run a copy of it, without the flag: it passes,
// says nothing, and writes neither the real COSMICA_HOME nor the home.
func TestFreshDirIsNoFalsePass(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir := cosmicaPlugin(t)
	real, home := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(real, "config.json"), []byte(`{"notes":"notes"}`), 0o644)
	store := t.TempDir()
	cmd := exec.Command(tapedeckBin, "--store", store, "record", "--name", "cosmica", "--pin-clock", "--", "node", "main.mjs")
	cmd.Dir = dir
	env := []string{"HOME=" + home}
	cmd.Env = append(os.Environ(), append(env, "COSMICA_HOME="+real)...)
	h := newHost(t, cmd)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.9.0"},"plugin":{"id":"cosmica-node","name":"Cosmica","version":"1.0.0","dataDir":"/data/cosmica-node"},"language":"en","context":{}}}`)
	h.awaitResponse("1")
	h.send(`{"jsonrpc":"2.0","method":"panel/open","params":{"context":{}}}`)
	h.send(`{"jsonrpc":"2.0","id":%s,"result":null}`, h.awaitRequest("ui/setPanel"))
	h.send(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"new","event":"click","context":{}}}`)
	h.send(`{"jsonrpc":"2.0","id":%s,"result":{"status":"asked"}}`, h.awaitRequest("prompt/inject"))
	h.send(`{"jsonrpc":"2.0","id":%s,"result":null}`, h.awaitRequest("ui/setPanel"))
	h.finish()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record: %v", err)
	}
	tapes := filepath.Join(dir, "tapes")
	os.Mkdir(tapes, 0o755)
	tape := filepath.Join(tapes, "cosmica.jsonl")
	if r := tapedeck(t, store, nil, nil, "export", "cosmica", "--relative", "-o", tape); r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	// Back to the folder as it was: only the settings.
	os.RemoveAll(filepath.Join(real, "notes"))

	const unused = "note: the plugin did not use the folder this run gave it in COSMICA_HOME for a fresh start"
	r := tapedeckIn(t, dir, t.TempDir(), env, "test", "--fresh-dir", "COSMICA_HOME")
	if r.code != 0 || !strings.Contains(string(r.stdout), "ok    tapes/cosmica.jsonl") || !strings.Contains(string(r.stdout), unused) {
		t.Errorf("test --fresh-dir COSMICA_HOME of a tape without its copy: exit %d, want a pass that says the folder was unused:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "CosmicaNotes")); len(ents) == 0 {
		t.Error("the plugin did not fall back to ~/CosmicaNotes: the test tests nothing")
	}
	os.RemoveAll(filepath.Join(home, "CosmicaNotes"))

	// The tape carries what the session started from.
	data := datafolder.Beside(tape)
	os.MkdirAll(datafolder.EnvDir(data, "COSMICA_HOME"), 0o755)
	os.WriteFile(filepath.Join(datafolder.EnvDir(data, "COSMICA_HOME"), "config.json"), []byte(`{"notes":"notes"}`), 0o644)
	if err := (&datafolder.Start{Env: map[string]string{"COSMICA_HOME": real}}).Write(data); err != nil {
		t.Fatal(err)
	}
	r = tapedeckIn(t, dir, t.TempDir(), env, "replay", "tapes/cosmica.jsonl")
	if r.code != 0 || strings.Contains(string(r.stdout)+string(r.stderr), "note:") {
		t.Errorf("replay of a tape that carries COSMICA_HOME: exit %d, want a pass without notes:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = tapedeckIn(t, dir, t.TempDir(), env, "test", "-j", "8", "tapes", "tapes", "tapes", "tapes", "tapes", "tapes", "tapes", "tapes")
	if r.code != 0 || strings.Count(string(r.stdout), "ok    ") != 8 {
		t.Errorf("8 at once: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, d := range []string{home, filepath.Join(real, "notes")} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("a replay wrote into %s: %v", d, ents)
		}
	}
}
