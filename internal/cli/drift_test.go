package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDriftIsTrue: the fingerprint hashes neither secrets (a .env holding
// PIN=4711, credentials.json), nor what .gitignore excludes, nor
// tapedeck's own files in the plugin folder (tapes/, pending changes,
// tapedeck.json), nor the plugin's data folder; it holds TZ and the names
// (never the values) of the variables. After test --update and review
// --accept, clean replays say no drift even with -v (the accepted tape
// carries the live run's fingerprint), and the same holds for a stored
// session's update. A replay without a variable the recording had, or in
// another TZ, says so before the differences.
func TestDriftIsTrue(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	plugin := filepath.Join(t.TempDir(), "clock-node")
	copyDir(t, filepath.Join("testdata", "plugins", "clock-node"), plugin)
	files := map[string]string{
		".env":                "PIN=4711\n",
		"credentials.json":    `{"token":"s3cr3t"}`,
		"deploy.pem":          "-----BEGIN PRIVATE KEY-----\n",
		".gitignore":          "build-cache/\n*.log\n",
		"build-cache/warm.js": "x\n",
		"debug.log":           "x\n",
		"data/state.json":     "{}\n",
		"tapedeck.json":       "{}\n",
	}
	for name, body := range files {
		os.MkdirAll(filepath.Join(plugin, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(plugin, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"CLOCK_DIR=" + t.TempDir(), "TZ=UTC", "COSMICA_HOME=" + filepath.Join(plugin, "data")}
	tp := recordClock(t, plugin, []string{"node", "main.mjs"}, []string{"--pin-clock"}, env)
	tapes := filepath.Join(plugin, "tapes")
	os.Mkdir(tapes, 0o755)
	golden := filepath.Join(tapes, "clock.jsonl")
	b, _ := os.ReadFile(tp)
	os.WriteFile(golden, b, 0o644)

	header, _, _ := strings.Cut(string(b), "\n")
	pin := sha256.Sum256([]byte("PIN=4711\n"))
	if strings.Contains(header, hex.EncodeToString(pin[:])) {
		t.Errorf("the tape header holds the SHA-256 of .env:\n%s", header)
	}
	fp := readTapeOrFatal(t, golden).Meta.Fingerprint
	var hashed []string
	for f := range fp.Files {
		hashed = append(hashed, f)
	}
	if got, want := strings.Join(slices.Sorted(slices.Values(hashed)), " "), "agentty-plugin.json main.mjs sdk/index.mjs sdk/package.json"; got != want {
		t.Errorf("hashed %q, want %q", got, want)
	}
	if fp.Locale["TZ"] != "UTC" || !slices.Contains(fp.EnvNames, "COSMICA_HOME") || !slices.Contains(fp.EnvNames, "CLOCK_DIR") {
		t.Errorf("fingerprint locale %v, names %v: want TZ=UTC and the names COSMICA_HOME, CLOCK_DIR", fp.Locale, fp.EnvNames)
	}
	if strings.Contains(header, filepath.Join(plugin, "data")) {
		t.Errorf("the tape header holds a variable's value:\n%s", header)
	}

	// main.mjs changed: the update is pending, its drift names main.mjs
	// alone (not tapes/, the .jsonl.new, tapedeck.json or data/).
	main := filepath.Join(plugin, "main.mjs")
	src, _ := os.ReadFile(main)
	os.WriteFile(main, []byte(strings.Replace(string(src), `"draft saved "`, `"draft kept "`, 1)), 0o644)
	r := tapedeck(t, t.TempDir(), nil, env, "test", tapes, "--update")
	if r.code != 0 || !strings.Contains(string(r.stdout), "drift since the recording: main.mjs changed\n") {
		t.Fatalf("test --update: exit %d, want 0 and the drift of main.mjs alone\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(golden + ".new"); err != nil {
		t.Fatalf("no pending change: %v", err)
	}
	if r := tapedeck(t, t.TempDir(), nil, env, "replay", "-v", golden); !strings.Contains(string(r.stdout), "drift since the recording: main.mjs changed\n") {
		t.Errorf("replay -v with a change pending: want the drift of main.mjs alone\n%s", r.stdout)
	}
	if r := tapedeck(t, t.TempDir(), nil, append(env, "CI="), "review", "--accept", tapes); r.code != 0 {
		t.Fatalf("review --accept: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	driftLines := func(rs []result) int {
		n := 0
		for i, r := range rs {
			if r.code != 0 {
				t.Errorf("clean replay %d after the accept: exit %d\n%s%s", i+1, r.code, r.stdout, r.stderr)
			}
			n += strings.Count(string(r.stdout), "drift since the recording")
		}
		return n
	}
	if n := driftLines(tapedeckMany(t, 5, env, "replay", "-v", golden)); n != 0 {
		t.Errorf("%d drift lines in 5 clean replays -v after review --accept, want 0", n)
	} else {
		t.Logf("drift lines in 5 clean replays -v after review --accept: %d", n)
	}

	// Another TZ, and COSMICA_HOME not set: said before the differences.
	other := []string{env[0], "TZ=Asia/Tokyo"}
	r = tapedeck(t, t.TempDir(), nil, other, "replay", "-v", golden)
	if want := "drift since the recording: COSMICA_HOME not set now (the recording had it); TZ UTC → Asia/Tokyo\n"; !strings.Contains(string(r.stdout), want) {
		t.Errorf("replay -v without COSMICA_HOME, in Tokyo: want %q\n%s", want, r.stdout)
	}

	// A stored session's update stores the live run's fingerprint, also
	// when only the surroundings changed (a file added, the same output).
	store := t.TempDir()
	if r := tapedeck(t, store, nil, nil, "import", golden); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	os.WriteFile(filepath.Join(plugin, "sdk", "extra.mjs"), []byte("export {}\n"), 0o644)
	r = tapedeck(t, store, nil, env, "replay", "last", "--update")
	m := regexp.MustCompile(`stored the live run as session (\S+)`).FindSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("replay --update of a session: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rs []result
	for range 3 {
		rs = append(rs, tapedeck(t, store, nil, env, "replay", "-v", string(m[1])))
	}
	if n := driftLines(rs); n != 0 {
		t.Errorf("%d drift lines in 3 clean replays -v of the updated session, want 0", n)
	}
}
