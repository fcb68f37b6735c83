package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/check"
)

// checkFinding is one finding as `check --json` prints it; every member
// must be present.
type checkFinding struct {
	Level   *string `json:"level"`
	Rule    *string `json:"rule"`
	Seq     *uint64 `json:"seq"`
	Method  *string `json:"method"`
	Message *string `json:"message"`
	Path    *string `json:"path"`
}

func (f checkFinding) String() string {
	return *f.Level + " " + *f.Rule + " " + *f.Path + ": " + *f.Message
}

// checkJSON runs `check --json` and parses its findings.
func checkJSON(t *testing.T, store string, args ...string) ([]checkFinding, result) {
	t.Helper()
	r := tapedeck(t, store, nil, nil, append([]string{"check", "--json"}, args...)...)
	var found []checkFinding
	if err := json.Unmarshal(r.stdout, &found); err != nil {
		t.Fatalf("check --json %v: exit %d: %v\nstdout: %s\nstderr: %s", args, r.code, err, r.stdout, r.stderr)
	}
	for _, f := range found {
		if f.Level == nil || f.Rule == nil || f.Seq == nil || f.Method == nil || f.Message == nil || f.Path == nil {
			t.Fatalf("check --json %v: a finding lacks a member: %s", args, r.stdout)
		}
	}
	return found, r
}

// TestCheckFixturePlugins records the hello fixtures through the real
// binary, driven as the host drives them, and checks the sessions: a
// well-behaved plugin must give no error and no warning (and, its manifest
// being found in the recorded working directory, no info either).
func TestCheckFixturePlugins(t *testing.T) {
	t.Parallel()
	for _, p := range []struct{ name, runtime, main string }{
		{"hello-node", "node", "main.mjs"},
		{"hello-python", "python3", "main.py"},
	} {
		t.Run(p.name, func(t *testing.T) {
			if _, err := exec.LookPath(p.runtime); err != nil {
				t.Skipf("%s is not installed: %v", p.runtime, err)
			}
			store := t.TempDir()
			dir, err := filepath.Abs(filepath.Join("testdata", "plugins", p.name))
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(tapedeckBin, "--store", store, "record", "--name", "check-"+p.name, "--", p.runtime, p.main)
			cmd.Dir = dir // the host starts a plugin in its folder
			h := newHost(t, cmd)
			h.send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.9.0"},"plugin":{"id":%q,"name":"Hello","version":"1.0.0","dir":%q,"dataDir":"/data/x"},"language":"en","context":{"workspace":null,"pane":null,"language":"en"}}}`, p.name, dir)
			h.send(`{"jsonrpc":"2.0","method":"panel/open","params":{"context":{"workspace":null,"pane":null,"language":"en"}}}`)
			h.awaitResponse("7")
			h.send(`{"jsonrpc":"2.0","id":%s,"result":null}`, h.awaitRequest("ui/setPanel"))
			h.send(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"greet","event":"click","context":{}}}`)
			h.send(`{"jsonrpc":"2.0","id":%s,"result":null}`, h.awaitRequest("ui/setPanel"))
			h.awaitNotification("ui/notify")
			h.finish()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("record %s: %v", p.name, err)
			}

			found, r := checkJSON(t, store, "check-"+p.name)
			for _, f := range found {
				t.Errorf("finding in a clean session: %v", f)
			}
			if r.code != 0 {
				t.Errorf("check exit = %d, want 0; stderr: %s", r.code, r.stderr)
			}

			// The same session as a tape, checked in text form.
			tapePath := filepath.Join(t.TempDir(), p.name+".jsonl")
			if r := tapedeck(t, store, nil, nil, "export", "-o", tapePath, "check-"+p.name); r.code != 0 {
				t.Fatalf("export: exit %d: %s", r.code, r.stderr)
			}
			if b, err := os.ReadFile(tapePath); err != nil || !strings.Contains(string(b), `"method":"ui/notify"`) {
				t.Fatalf("the recorded session lacks the greeting (%v):\n%s", err, b)
			}
			r = tapedeck(t, store, nil, nil, "check", tapePath)
			if r.code != 0 || string(r.stdout) != "0 errors, 0 warnings, 0 info\n" {
				t.Errorf("check %s: exit %d, stdout %q, stderr %q", tapePath, r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestCheckTapes runs check on rule tapes: exit 1 with an error finding,
// 0 without, and the finding's frame, method and words in both forms.
func TestCheckTapes(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	tapes := filepath.Join("internal", "check", "testdata", "rules")

	found, r := checkJSON(t, store, filepath.Join(tapes, "notify-dropped.jsonl"))
	if r.code != 1 {
		t.Errorf("check notify-dropped: exit %d, want 1; stderr: %s", r.code, r.stderr)
	}
	var rules []string
	for _, f := range found {
		rules = append(rules, *f.Rule)
		if *f.Rule == "notify-dropped" && (*f.Seq != 5 || *f.Method != "ui/notify" || *f.Level != "error" || !strings.Contains(*f.Message, "drops")) {
			t.Errorf("notify-dropped finding = %v at #%d", f, *f.Seq)
		}
	}
	if got := strings.Join(rules, " "); got != "manifest-missing notify-dropped notify-kind" {
		t.Errorf("rules found = %s, want manifest-missing notify-dropped notify-kind", got)
	}

	r = tapedeck(t, store, nil, nil, "check", filepath.Join(tapes, "ui-bad-enum.jsonl"))
	out := string(r.stdout)
	if r.code != 1 || !strings.Contains(out, "#4") || !strings.Contains(out, "params.tree.children[0].variant: variant \"big\" is not one of") ||
		!strings.HasSuffix(out, "2 errors, 0 warnings, 1 info\n") {
		t.Errorf("check ui-bad-enum: exit %d\n%s", r.code, out)
	}

	// Warnings alone do not fail.
	if r := tapedeck(t, store, nil, nil, "check", filepath.Join(tapes, "badge-length.jsonl")); r.code != 0 {
		t.Errorf("check badge-length: exit %d, want 0\n%s", r.code, r.stdout)
	}
	for _, clean := range []string{"clean", "clean-api2", "clean-api4"} {
		found, r := checkJSON(t, store, filepath.Join(tapes, clean+".jsonl"))
		if r.code != 0 || len(found) != 1 || *found[0].Rule != "manifest-missing" {
			t.Errorf("check %s: exit %d, findings %v", clean, r.code, found)
		}
	}
}

// TestCheckManifest: --manifest turns the permission rules on; a session's
// working directory is where the manifest is looked for otherwise.
func TestCheckManifest(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	tape := filepath.Join("internal", "check", "testdata", "rules", "permission-missing.jsonl")
	found, r := checkJSON(t, store, tape)
	if r.code != 0 || len(found) != 1 || *found[0].Rule != "manifest-missing" || *found[0].Seq != 0 {
		t.Errorf("without a manifest: exit %d, findings %v", r.code, found)
	}

	manifest := filepath.Join(t.TempDir(), "agentty-plugin.json")
	if err := os.WriteFile(manifest, []byte(`{"id":"t","apiVersion":1,"permissions":["prompt.inject"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	found, r = checkJSON(t, store, "--manifest", manifest, tape)
	if r.code != 1 || len(found) != 1 || *found[0].Rule != "permission-missing" || *found[0].Seq != 4 || *found[0].Method != "session/get" {
		t.Errorf("with --manifest: exit %d, findings %v", r.code, found)
	}

	// A tape whose recorded working directory is relative is read from the
	// tape's folder, as replay does.
	dir := t.TempDir()
	b, err := os.ReadFile(tape)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"cwd":""`, `"cwd":"plugin"`, 1))
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "plugin"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(manifest, filepath.Join(dir, "plugin", "agentty-plugin.json")); err != nil {
		t.Fatal(err)
	}
	found, r = checkJSON(t, store, filepath.Join(dir, "t.jsonl"))
	if r.code != 1 || len(found) != 1 || *found[0].Rule != "permission-missing" {
		t.Errorf("manifest from the tape's cwd: exit %d, findings %v", r.code, found)
	}
}

// TestCheckKnowsTheBrowser records the browser-node fixture (the SDK's X
// Feed Reader's browser/* calls: sites, open, wait, eval, close, with the
// browser.control permission and a browser section at API 3) as the host
// drives it: check finds nothing, where it once called each browser/*
// request an unknown method.
func TestCheckKnowsTheBrowser(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "plugins", "browser-node"))
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	cmd := exec.Command(tapedeckBin, "--store", store, "record", "--name", "browser", "--host", "host.jsonl", "--", "node", "main.mjs")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record browser-node: %v\n%s", err, out)
	}
	found, r := checkJSON(t, store, "browser")
	if r.code != 0 || len(found) != 0 {
		t.Errorf("check of the browser plugin: exit %d, findings %s", r.code, r.stdout)
	}
	if !strings.Contains(string(tapedeck(t, store, nil, nil, "show", "browser").stdout), "browser/eval") {
		t.Errorf("the session holds no browser/eval: is the fixture calling the browser?")
	}
}

// TestCheckKeepsABoundOfFindings: a tape with a finding in each of 10,500
// frames. check counts every one (the closing line, the exit status) but
// shows the first check.MaxKept, and says on stderr what it let go, in
// text and in JSON alike.
func TestCheckKeepsABoundOfFindings(t *testing.T) {
	t.Parallel()
	const n = check.MaxKept + 500
	frames := make([]frame.Frame, n)
	for i := range frames {
		frames[i] = frame.Frame{Seq: uint64(i + 1), At: int64(i) * 1e8, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","method":"no/such","params":{}}`)} // ten a second: under the rate limits
	}
	path := writeFile(t, "many.jsonl", tapeOf(t, frame.Session{ID: "01m8b1gtape00000000000000002", Name: "many", Status: frame.StatusComplete}, frames))
	store := t.TempDir()
	// With the manifest's info, n+1 findings: MaxKept shown, 501 let go.
	cut := fmt.Sprintf("tapedeck: check: findings not shown: 501 (method-unknown 501); the first %d are kept\n", check.MaxKept)

	r := tapedeck(t, store, nil, nil, "check", path)
	out := string(r.stdout)
	if r.code != 1 || string(r.stderr) != cut || !strings.HasSuffix(out, fmt.Sprintf("\n%d errors, 0 warnings, 1 info\n", n)) {
		t.Errorf("check: exit %d, stderr %q, ending %q; want 1, %q and the count of all %d", r.code, r.stderr, out[max(0, len(out)-80):], cut, n)
	}
	if rows := strings.Count(out, "method-unknown"); rows != check.MaxKept-1 {
		t.Errorf("check showed %d method-unknown rows, want %d", rows, check.MaxKept-1)
	}

	found, r := checkJSON(t, store, path)
	if r.code != 1 || string(r.stderr) != cut || len(found) != check.MaxKept || *found[0].Rule != "manifest-missing" || *found[1].Seq != 1 {
		t.Errorf("check --json: exit %d, stderr %q, %d findings; want 1, %q and %d from manifest-missing and #1 on", r.code, r.stderr, len(found), cut, check.MaxKept)
	}
}
