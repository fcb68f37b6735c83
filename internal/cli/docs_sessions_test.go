package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// TestReadmeSessions runs every example of docs/looking.md as shown, and
// those of tapes.md's "Secrets stay home" and security-and-store.md's
// "Removing sessions", in bash, in a copy of testdata/readme, each block
// against a fresh store holding the README's two sessions (greet.tape and
// fetch.tape imported; the import example's block has greet alone, so
// that it imports fetch), with TZ=UTC and TAPEDECK_REDACT_KEY=readme-example
// as the section says: each command prints exactly what the README shows.
// The last block (a million-frame session, a recording under way, a
// damaged frame) needs setups of its own, which other tests make.
func TestReadmeSessions(t *testing.T) {
	t.Parallel()
	section := readmeAfter(t, "## Looking at sessions: ls, show, export, import")
	if !strings.Contains(section, "TZ=UTC") || !strings.Contains(section, "TAPEDECK_REDACT_KEY=readme-example") {
		t.Fatal("the section no longer says how its examples are run")
	}
	// The sections of other guides whose examples use the same store.
	for _, h := range []string{"## Secrets stay home", "## Removing sessions: rm and gc"} {
		more, _, _ := strings.Cut(readmeAfter(t, h), "\n## ")
		if !strings.Contains(more, "`TestReadmeSessions` runs them") {
			t.Fatalf("%q no longer says that its examples run against looking.md's store", h)
		}
		section += more
	}

	// The fenced blocks that hold commands, unindented.
	var blocks [][]string
	parts := strings.Split(section, "```")
	for i := 1; i < len(parts); i += 2 {
		lines := strings.Split(parts[i], "\n")[1:] // after the fence's language
		indent := ""
		for _, l := range lines {
			if j := strings.Index(l, "$ "); j >= 0 && strings.TrimSpace(l[:j]) == "" {
				indent = l[:j]
				break
			}
		}
		var block []string
		for _, l := range lines {
			block = append(block, strings.TrimPrefix(l, indent))
		}
		for len(block) > 0 && strings.TrimSpace(block[len(block)-1]) == "" {
			block = block[:len(block)-1]
		}
		if len(block) > 0 && strings.HasPrefix(block[0], "$ ") {
			blocks = append(blocks, block)
		}
	}
	if len(blocks) < 9 {
		t.Fatalf("found %d example blocks in the section, want at least 9", len(blocks))
	}

	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "COLUMNS" && k != "TZ" && k != "TAPEDECK_STORE" && k != "TAPEDECK_REDACT_KEY" && k != "NO_COLOR" {
			env = append(env, kv)
		}
	}
	env = append(env, "TZ=UTC", "TAPEDECK_REDACT_KEY=readme-example", pathWithTapedeck())
	ran := 0
	for _, block := range blocks {
		if strings.Contains(strings.Join(block, "\n"), "$ tapedeck rm big") {
			continue
		}
		ws := t.TempDir()
		copyDir(t, filepath.Join("testdata", "readme"), ws)
		store := t.TempDir()
		benv := append(env, "TAPEDECK_STORE="+store)
		tapes := []string{"greet.tape", "fetch.tape"}
		if strings.Contains(strings.Join(block, "\n"), "$ tapedeck import fetch.tape") {
			tapes = tapes[:1]
		}
		for _, tp := range tapes {
			if r := tapedeck(t, store, nil, nil, "import", filepath.Join(ws, tp)); r.code != 0 {
				t.Fatalf("import %s: %s", tp, r.stderr)
			}
		}
		// Each command and what is shown after it.
		for i := 0; i < len(block); {
			command := strings.TrimPrefix(block[i], "$ ")
			i++
			var shown []string
			for ; i < len(block) && !strings.HasPrefix(block[i], "$ "); i++ {
				shown = append(shown, block[i])
			}
			cmd := exec.Command("bash", "-c", command)
			cmd.Dir, cmd.Env = ws, benv
			out, _ := cmd.CombinedOutput()
			want := ""
			if len(shown) > 0 {
				want = strings.Join(shown, "\n") + "\n"
			}
			if string(out) != want {
				t.Errorf("$ %s\nprinted:\n%s\nthe README shows:\n%s", command, out, want)
			}
			ran++
		}
	}
	if ran < 14 {
		t.Errorf("ran %d commands of the section, want at least 14", ran)
	}
}

// TestReadmeGreetTapeComesFromItsHostScript: testdata/readme/greet.tape is what
// the README says it is, hello-node driven by greet.host.jsonl: recorded
// again, each direction carries the same bytes.
func TestReadmeGreetTapeComesFromItsHostScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "readme", "greet.host.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := copyPlugin(t, "hello-node")
	store := t.TempDir()
	cmd := exec.Command(tapedeckBin, "--store", store, "record", "--name", "greet", "--host", script, "--", "node", "main.mjs")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	_, again := exported(t, store, "greet")
	kept := t.TempDir()
	if r := tapedeck(t, kept, nil, nil, "import", filepath.Join("testdata", "readme", "greet.tape")); r.code != 0 {
		t.Fatalf("import greet.tape: %s", r.stderr)
	}
	_, tape := exported(t, kept, "greet")
	for _, d := range []frame.Dir{frame.In, frame.Out, frame.Err} {
		if got, want := stream(again, d), stream(tape, d); !bytes.Equal(got, want) {
			t.Errorf("%s recorded again:\n%s\ngreet.tape:\n%s", d, got, want)
		}
	}
}
