package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

// playing is a tapedeck play the test started as the README shows it.
type playing struct {
	cmd    *exec.Cmd
	url    string
	base   string
	token  string
	events chan map[string]any
	stderr *bytes.Buffer
}

// startPlay runs the command line (as the README shows it: "tapedeck
// play …") in dir with the store in $TAPEDECK_STORE, reads the URL it
// prints and follows the page's event stream.
func startPlay(t *testing.T, dir, store, line string, env ...string) *playing {
	t.Helper()
	words := splitWords(line)
	if len(words) < 2 || words[0] != "tapedeck" || words[1] != "play" {
		t.Fatalf("%q is not a tapedeck play line", line)
	}
	cmd := exec.Command(tapedeckBin, words[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(env, "TAPEDECK_STORE="+store)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &playing{cmd: cmd, stderr: &bytes.Buffer{}, events: make(chan map[string]any, 4096)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	br := bufio.NewReader(out)
	first, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("%s printed no URL: %v\n%s", line, err, p.stderr)
	}
	m := regexp.MustCompile(`^tapedeck play: the plugin's panel is at (http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{32})\n$`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("%s printed %q, not the README's line", line, first)
	}
	go io.Copy(io.Discard, br)
	p.url = m[1]
	u, _ := url.Parse(p.url)
	p.base, p.token = "http://"+u.Host, u.Query().Get("token")
	res, err := http.Get(p.base + "/events?token=" + p.token)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the event stream: %v %v", err, res)
	}
	t.Cleanup(func() { res.Body.Close() })
	go func() { // ends when the stream does (the test closes it)
		defer close(p.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev map[string]any
				if json.Unmarshal([]byte(data), &ev) == nil {
					p.events <- ev
				}
			}
		}
	}()
	return p
}

// waitEvent waits (30 s at most) for an event of the page's stream that
// pred takes.
func (p *playing) waitEvent(t *testing.T, what string, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-p.events:
			if !ok {
				t.Fatalf("the event stream ended before %s\n%s", what, p.stderr)
			}
			if pred(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s within 30 s\n%s", what, p.stderr)
		}
	}
}

// waitFrame waits for a frame of the plugin's whose line holds text.
func (p *playing) waitFrame(t *testing.T, text string) {
	t.Helper()
	p.waitEvent(t, "frame with "+text, func(ev map[string]any) bool {
		f, _ := ev["f"].(map[string]any)
		r, _ := f["r"].(string)
		return ev["t"] == "frame" && f["d"] == "out" && strings.Contains(r, text)
	})
}

// do asks the host for what the page asks (POST /api, as the page's own).
func (p *playing) do(t *testing.T, action string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("POST", p.base+"/api", strings.NewReader(action))
	req.Header.Set("Origin", p.base)
	req.Header.Set("X-Tapedeck-Token", p.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d %v", action, res.StatusCode, out)
	}
	return out
}

// stop ends tapedeck play with Ctrl-C and wants it to exit 0, having
// stopped the plugin the host's way.
func (p *playing) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("tapedeck play after Ctrl-C: %v\n%s", err, p.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("tapedeck play did not end within 15 s of Ctrl-C")
	}
}

// readmePlayLines are the command lines the README shows for the
// playground: every "$ tapedeck play…" line, and the golden walk's test
// and record lines that follow a kept session.
func readmePlayLines(t *testing.T) []string {
	t.Helper()
	b := docsText(t)
	var lines []string
	for _, l := range strings.Split(b, "\n") {
		if strings.HasPrefix(l, "$ tapedeck play") || l == "$ tapedeck record --host tapes/greet.host.jsonl -- node main.mjs" {
			lines = append(lines, strings.TrimPrefix(l, "$ "))
		}
	}
	if !strings.Contains(b, "### The quickest way: click it in the playground") || !strings.Contains(b, "## Try it in the browser") {
		t.Fatal("README has no playground sections")
	}
	return lines
}

// TestPlayAsTheReadmeShows runs the README's playground lines as shown:
// tapedeck play in a copy of hello-node, the clicks of the golden walk
// (as the page sends them), Keep it; tapedeck test passes on the kept
// tape; the record --host line of the kept script (its second line, the
// README's) records the same session again; --open starts $BROWSER with
// a file that leads to the URL (never the URL and its token); a command
// after --; --watch shows what a saved change changes.
func TestPlayAsTheReadmeShows(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the hello-node plugin cannot run")
	}
	ran := map[string]bool{}
	plugin := filepath.Join(t.TempDir(), "hello-node")
	copyDir(t, filepath.Join("testdata", "plugins", "hello-node"), plugin)
	os.Remove(filepath.Join(plugin, "host.jsonl"))
	st := t.TempDir()

	t.Run("keep it", func(t *testing.T) {
		p := startPlay(t, plugin, st, "tapedeck play")
		ran["tapedeck play"] = true
		p.waitFrame(t, `"method":"ui/setPanel"`)
		p.do(t, `{"do":"ui","element":"name","event":"change","value":"Ada"}`)
		p.do(t, `{"do":"ui","element":"greet","event":"click"}`)
		p.waitFrame(t, `Hello, Ada!`)
		p.do(t, `{"do":"ui","element":"ask","event":"click"}`)
		p.waitFrame(t, `prompt asked`)
		k := p.do(t, `{"do":"keep","name":"greet"}`)
		if k["same"] != true || !strings.HasPrefix(k["test"].(string), "ok    tapes/greet.jsonl  ") {
			t.Errorf("keep: %v", k)
		}
		p.stop(t)

		r := readmeCmd(t, plugin, []string{"TAPEDECK_STORE=" + st}, "tapedeck test", nil)
		ran["tapedeck test"] = true
		wantIn(t, r, 0, "ok    tapes/greet.jsonl  ", "1 passed, 0 failed")
		if !strings.Contains(p.stderr.String(), "tapedeck: play: kept session ") || !strings.Contains(p.stderr.String(), "tapedeck: play: its replay passes: tapedeck test tapes") {
			t.Errorf("the terminal does not say what Keep it kept:\n%s", p.stderr)
		}

		script, err := os.ReadFile(filepath.Join(plugin, "tapes", "greet.host.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		second := strings.Split(string(script), "\n")[1]
		line, ok := strings.CutPrefix(second, "// Record it again from the plugin's folder: ")
		if !ok || line != "tapedeck record --host tapes/greet.host.jsonl -- node main.mjs" {
			t.Fatalf("the kept script's second line is %q, not the README's record line", second)
		}
		again := t.TempDir()
		asPrinted(t, plugin, again, line, "")
		ran[line] = true
		tp, err := playback.ReadTape(filepath.Join(plugin, "tapes", "greet.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		// The same session modulo timing: what the host said, and what the
		// plugin said, each in its order (an answer the host gives at once
		// and a frame the plugin writes at the same time cross either way).
		for _, dir := range []frame.Dir{frame.In, frame.Out} {
			kept := storedLines(t, st, tp.Meta.ID, dir)
			rerecorded := storedLines(t, again, "last", dir)
			if !slices.Equal(kept, rerecorded) {
				t.Errorf("the kept script recorded another session (%s):\nkept:\n%s\nagain:\n%s", dir, strings.Join(kept, "\n"), strings.Join(rerecorded, "\n"))
			}
		}
	})

	t.Run("open", func(t *testing.T) {
		// The fake browser writes its arguments into a FIFO: reading it
		// waits for exactly that write.
		opened := filepath.Join(t.TempDir(), "opened")
		if err := syscall.Mkfifo(opened, 0o600); err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() { b, _ := os.ReadFile(opened); got <- b }()
		browser := filepath.Join(t.TempDir(), "browser")
		os.WriteFile(browser, []byte("#!/bin/sh\necho \"$@\" > '"+opened+"'\n"), 0o755)
		p := startPlay(t, plugin, t.TempDir(), "tapedeck play --open", "BROWSER="+browser)
		ran["tapedeck play --open"] = true
		select {
		case b := <-got:
			// The browser gets a file of the user's that leads to the URL:
			// the token is on no command line (/proc/PID/cmdline is
			// everyone's to read).
			arg := strings.TrimSpace(string(b))
			f, err := url.Parse(arg)
			if err != nil || f.Scheme != "file" || strings.Contains(arg, p.token) {
				t.Fatalf("$BROWSER was started with %q, want the file:// URL of a page that leads to %s", b, p.url)
			}
			page, err := os.ReadFile(f.Path)
			if info, serr := os.Stat(f.Path); err != nil || serr != nil || info.Mode() != 0o600 || !strings.Contains(string(page), "url="+p.url+`"`) {
				t.Errorf("$BROWSER was given %s (%v), which does not lead to %s:\n%s", arg, err, p.url, page)
			}
		case <-time.After(30 * time.Second):
			os.WriteFile(opened, nil, 0o600) // ends the reader
			<-got
			t.Errorf("$BROWSER was not started with the URL %s", p.url)
		}
		p.stop(t)
	})

	t.Run("fresh dir", func(t *testing.T) {
		if testing.Short() {
			t.Skip("plays Cosmica twice")
		}
		// Cosmica's settings are in COSMICA_HOME; without them it writes
		// into ~/CosmicaNotes.
		dir := cosmicaPlugin(t)
		real, home := t.TempDir(), t.TempDir()
		os.MkdirAll(filepath.Join(real, "notes"), 0o755)
		os.WriteFile(filepath.Join(real, "config.json"), []byte(`{"notes":"notes"}`), 0o644)
		env := []string{"COSMICA_HOME=" + real, "HOME=" + home}
		session := func(line, name string) map[string]any {
			t.Helper()
			p := startPlay(t, dir, t.TempDir(), line, env...)
			ran[line] = true
			p.waitFrame(t, "Cosmica: 0 notes")
			p.do(t, `{"do":"ui","element":"new","event":"click"}`)
			p.waitFrame(t, "Cosmica: 1 notes")
			p.do(t, `{"do":"ui","element":"new","event":"click"}`)
			p.waitFrame(t, "Cosmica: 2 notes")
			k := p.do(t, `{"do":"keep","name":"`+name+`"}`)
			p.stop(t)
			return k
		}
		if k := session("tapedeck play --fresh-dir COSMICA_HOME", "notes"); k["same"] != true {
			t.Errorf("keep: %v", k)
		}
		r := readmeCmd(t, dir, append([]string{"TAPEDECK_STORE=" + t.TempDir()}, env...), "tapedeck test", nil)
		wantIn(t, r, 0, "ok    tapes/notes.jsonl  ", "1 passed, 0 failed")
		if strings.Contains(string(r.stdout), "note:") {
			t.Errorf("tapedeck test of the kept tape says more than ok:\n%s", r.stdout)
		}
		for _, d := range []string{home, filepath.Join(real, "notes")} {
			if ents, _ := os.ReadDir(d); len(ents) != 0 {
				t.Errorf("play or test wrote into %s: %v", d, ents)
			}
		}
		// On the real clock the random names and times differ in every
		// replay: Keep it says so, and what to do.
		k := session("tapedeck play --fresh-dir COSMICA_HOME --pin-clock=false", "unpinned")
		why, _ := k["why"].([]any)
		if k["same"] != false || len(why) == 0 || !strings.HasPrefix(why[0].(string), "Clock and randomness: the session ran on the real clock") {
			t.Errorf("keep on the real clock: %v", k)
		}
	})

	t.Run("a command", func(t *testing.T) {
		bare := filepath.Join(t.TempDir(), "bare")
		copyDir(t, plugin, bare)
		os.Remove(filepath.Join(bare, "agentty-plugin.json"))
		p := startPlay(t, bare, t.TempDir(), "tapedeck play -- node main.mjs")
		ran["tapedeck play -- node main.mjs"] = true
		p.waitFrame(t, `"method":"ui/setPanel"`)
		p.stop(t)
	})

	t.Run("watch", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "hello-node")
		copyDir(t, plugin, dir)
		p := startPlay(t, dir, t.TempDir(), "tapedeck play --watch")
		ran["tapedeck play --watch"] = true
		p.waitFrame(t, `"method":"ui/setPanel"`)
		p.do(t, `{"do":"ui","element":"greet","event":"click"}`)
		p.waitFrame(t, `Hello, world!`)
		main := filepath.Join(dir, "main.mjs")
		b, _ := os.ReadFile(main)
		os.WriteFile(main, bytes.Replace(b, []byte(`: "Hello";`), []byte(`: "Howdy";`), 1), 0o644)
		ev := p.waitEvent(t, "the watch comparison", func(ev map[string]any) bool { return ev["t"] == "watch" })
		text, _ := ev["text"].(string)
		if ev["why"] != "main.mjs changed" || ev["same"] != false || !strings.Contains(text, `params.tree.children[0].text: "Hello" → "Howdy"`) || strings.Contains(text, "missing") {
			t.Errorf("the watch comparison: %v", ev)
		}
		p.stop(t)
	})

	for _, line := range readmePlayLines(t) {
		if !ran[line] {
			t.Errorf("the README shows %q, which no test ran", line)
		}
	}
}

// storedLines are a stored session's lines of direction d (their bytes;
// no events, no times).
func storedLines(t *testing.T, dir, ref string, d frame.Dir) []string {
	t.Helper()
	st, err := store.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Recover(); err != nil {
		t.Fatal(err)
	}
	rec, err := playback.FromStore(st, ref)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range rec.Frames {
		if !f.IsEvent() && f.Dir == d {
			out = append(out, string(f.Raw))
		}
	}
	return out
}

// TestPlayWithoutAPlugin: no manifest and no command is one line that
// says what play drives and what to do instead, and exit 2.
func TestPlayWithoutAPlugin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := readmeCmd(t, dir, []string{"TAPEDECK_STORE=" + t.TempDir()}, "tapedeck play", nil)
	want := "tapedeck: play: no agentty-plugin.json in " + dir + ": play is Agentty's host and drives Agentty plugins: give a plugin's command after -- (tapedeck play -- COMMAND [ARGS…]); " +
		"drive an MCP server with a host script: tapedeck record --host SCRIPT --profile mcp -- SERVER [ARGS…]\n"
	if r.code != 2 || string(r.stderr) != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
	}
}
