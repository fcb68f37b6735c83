package cli

// tapedeck play against a plugin that floods, or writes one line without
// end: the playground keeps a bounded window for the page (the store has
// every frame), so it costs time, not memory.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/internal/race"
)

// vmHWM is process pid's peak resident memory in MiB (-1 when it cannot
// be read: the process has gone).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb / 1024
		}
	}
	return -1
}

// childrenWrote is how many bytes the children of process pid have
// written so far (their /proc io's wchar), -1 when none can be read.
func childrenWrote(pid int) int64 {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return -1
	}
	n := int64(-1)
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/children")
		if err != nil {
			continue
		}
		for _, child := range strings.Fields(string(b)) {
			io, err := os.ReadFile("/proc/" + child + "/io")
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(io), "\n") {
				if v, ok := strings.CutPrefix(line, "wchar:"); ok {
					w, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					n = max(n, 0) + w
				}
			}
		}
	}
	return n
}

// TestPlayFloodCostsTimeNotMemory: tapedeck play of a plugin that floods
// its stdout with lines, writes one stdout line without end, or floods
// its stderr (flood-go), under a 4 GiB address-space limit: its peak RSS
// stays under 200 MB and stops growing once the page's window is full
// (the plugin has written 32 MiB, twice a line's bound) (the audit's build: 949 MB after 20 s of lines, out of
// memory at 10 s of the endless line), the page still gets its reset
// within the window, Ctrl-C ends it, and it says what it did not keep.
func TestPlayFloodCostsTimeNotMemory(t *testing.T) {
	t.Parallel() // its cases run one after another: each floods a core
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("floods for seconds a case")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc to read the peak RSS from")
	}
	flood := goProgram(t, "./testdata/plugins/flood-go", "flood-go")
	const (
		limit  = 200  // MiB
		guard  = 1024 // MiB: past it the run is ended at once
		growth = 30   // MiB the peak may still grow after settle
	)
	// The flood has settled once the plugin has written settleBytes (twice
	// a line's bound of 16 MiB; the page's window of 20,000 lines is full
	// long before): the endless line is cut, every window full. An
	// unbounded page grew by 45 MB/s under this flood: the 2.5 s after
	// settling would show it grow by over 100 MB.
	const settleBytes, after = 32 << 20, 2500 * time.Millisecond
	for _, c := range []struct{ mode, note string }{
		{"lines", "on the plugin's stdout"},
		{"endless", "1 line on the plugin's stdout cut at 16777217 bytes"},
		{"stderr", "on the plugin's stderr"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", `ulimit -v 4194304 && exec "$@"`, "sh", tapedeckBin, "play", "--", flood, c.mode)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "TAPEDECK_STORE="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					cmd.Wait()
				}
			}()
			first, err := bufio.NewReader(out).ReadString('\n')
			m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+)`).FindStringSubmatch(first)
			if err != nil || m == nil {
				t.Fatalf("tapedeck play printed %q (%v)\n%s", first, err, stderr.String())
			}
			pid := cmd.Process.Pid
			start := time.Now()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			var peak int64
			measure := func() {
				<-tick.C
				peak = vmHWM(pid)
				if peak < 0 {
					t.Fatalf("tapedeck play ended under the flood\n%.3000s", stderr.String())
				}
				if peak > guard {
					t.Fatalf("peak RSS %d MiB after %v: ended (guard %d MiB)", peak, time.Since(start).Round(time.Millisecond), guard)
				}
			}
			// Settled when the plugin has written settleBytes, however long
			// that takes under load (at load 7 the endless line was still
			// under its bound after 4 s).
			for deadline := start.Add(2 * time.Minute); childrenWrote(pid) < settleBytes; {
				if time.Now().After(deadline) {
					t.Fatalf("the plugin wrote %d bytes in 2 minutes, want %d", childrenWrote(pid), settleBytes)
				}
				measure()
			}
			settled, settledAt := vmHWM(pid), time.Since(start)
			for end := time.Now().Add(after); time.Now().Before(end); {
				measure()
			}
			// The page still gets everything it draws from, within the
			// window.
			u, _ := url.Parse(m[1])
			client := &http.Client{Timeout: 20 * time.Second}
			res, err := client.Get("http://" + u.Host + "/events?token=" + u.Query().Get("token"))
			if err != nil || res.StatusCode != 200 {
				t.Fatalf("the page's event stream under the flood: %v %v", err, res)
			}
			line, err := bufio.NewReaderSize(res.Body, 1<<20).ReadString('\n')
			res.Body.Close()
			var reset struct {
				T      string            `json:"t"`
				Frames []json.RawMessage `json:"frames"`
			}
			if err != nil || json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &reset) != nil || reset.T != "reset" {
				t.Fatalf("the page's first event under the flood: %.200q (%v)", line, err)
			}
			if len(reset.Frames) > 3*20000 {
				t.Errorf("the page's reset holds %d frames: more than the window", len(reset.Frames))
			}
			cmd.Process.Signal(syscall.SIGINT)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("tapedeck play after Ctrl-C: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("tapedeck play did not end within 20 s of Ctrl-C")
			}
			t.Logf("peak RSS %d MiB once the plugin had written %d MiB (at %v), %d MiB %v later", settled, settleBytes>>20, settledAt.Round(time.Millisecond), peak, after)
			if !race.Enabled { // the race-built binary's memory is the detector's
				if peak > limit {
					t.Errorf("peak RSS %d MiB after %v of flood, want under %d", peak, settledAt+after, limit)
				}
				if peak-settled > growth {
					t.Errorf("peak RSS grew from %d MiB once the flood settled to %d MiB %v later: the playground keeps what the flood says", settled, peak, after)
				}
			}
			if !strings.Contains(stderr.String(), "not kept for the page: ") || !strings.Contains(stderr.String(), c.note) {
				t.Errorf("tapedeck play did not say what it did not keep (%q):\n%.3000s", c.note, stderr.String())
			}
		})
	}
}

// cpuSeconds is the CPU time process pid has used (user and system).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// TestPlayWatchCostsNothingIdle: tapedeck play --watch in a folder of
// 4,200 folders and 21,000 files, idle: over 3 s it uses under 3 % of a
// core (the audit's build: 0.59 of a core on 100,000 files, looking at
// every file every 300 ms), and it says once that it watches only so
// many folders and files.
func TestPlayWatchCostsNothingIdle(t *testing.T) {
	t.Parallel()
	skipUnderRace(t) // it measures CPU time, which the race detector multiplies
	if testing.Short() {
		t.Skip("makes 21,000 files")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to read the CPU time from")
	}
	dir := t.TempDir()
	for i := range 4200 {
		sub := filepath.Join(dir, fmt.Sprintf("d%04d", i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.js", j)), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(tapedeckBin, "play", "--watch", "--", "sh", "-c", "while read -r line; do :; done")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TAPEDECK_STORE="+t.TempDir())
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("tapedeck play printed no URL: %v\n%s", err, stderr)
	}
	pid := cmd.Process.Pid
	// Once the watch watches (the audit's build does not say so: it had
	// a second to make its first look), idle.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "tapedeck: play: --watch: watching ") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling its output, with a deadline
	}
	before, start := cpuSeconds(pid), time.Now()
	idle := time.NewTimer(3 * time.Second)
	<-idle.C // the measure is of a time: nothing to wait for but it
	used, wall := cpuSeconds(pid)-before, time.Since(start).Seconds()
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	t.Logf("idle with --watch: %.3f s of CPU in %.1f s (%.1f %% of a core)", used, wall, 100*used/wall)
	if used/wall > 0.03 && !race.Enabled {
		t.Errorf("idle with --watch, tapedeck play used %.1f %% of a core, want under 3 %%", 100*used/wall)
	}
	log := stderr.String()
	for _, want := range []string{
		"tapedeck: play: --watch: the plugin folder has more than 4096 folders: only the first 4096 are watched\n",
		"tapedeck: play: --watch: the plugin folder has more than 20000 files: the first 20000 are stamped, and a change to another is said as added\n",
	} {
		if strings.Count(log, want) != 1 {
			t.Errorf("tapedeck play says %q %d times, want once:\n%.2000s", want, strings.Count(log, want), log)
		}
	}
}

// TestPlayWatchSaysWhatChangedSafely: tapedeck play --watch after a
// change of main.mjs and a new file whose name holds a terminal escape:
// the terminal names the file escaped, and prints what the plugin said
// differently as tapedeck diff prints it. (The audit's build printed the
// name raw, and the comparison only in the page.)
func TestPlayWatchSaysWhatChangedSafely(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the hello-node plugin cannot run")
	}
	dir := filepath.Join(t.TempDir(), "hello-node")
	copyDir(t, filepath.Join("testdata", "plugins", "hello-node"), dir)
	p := startPlay(t, dir, t.TempDir(), "tapedeck play --watch")
	p.waitFrame(t, `"method":"ui/setPanel"`)
	p.do(t, `{"do":"ui","element":"greet","event":"click"}`)
	p.waitFrame(t, `Hello, world!`)
	main := filepath.Join(dir, "main.mjs")
	b, _ := os.ReadFile(main)
	os.WriteFile(filepath.Join(dir, "x\x1b[2Jy.txt"), []byte("1"), 0o644)
	os.WriteFile(main, bytes.Replace(b, []byte(`: "Hello";`), []byte(`: "Howdy";`), 1), 0o644)
	p.waitEvent(t, "the watch comparison", func(ev map[string]any) bool {
		return ev["t"] == "watch" && strings.Contains(ev["why"].(string), "main.mjs changed")
	})
	p.stop(t)
	log := p.stderr.String()
	if strings.Contains(log, "\x1b") {
		t.Errorf("the terminal got a raw escape:\n%q", log)
	}
	for _, want := range []string{
		`x\x1b[2Jy.txt added`,
		"the plugin said something else:\nbefore vs after: ",
		`params.tree.children[0].text: "Hello" → "Howdy"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the terminal does not say %q:\n%s", want, log)
		}
	}
}

// try asks the host for what the page asks and returns the status and the
// answer, whatever they are.
func (p *playing) try(t *testing.T, action string) (int, map[string]any) {
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
	return res.StatusCode, out
}

// quietPlay is a tapedeck play line of a plugin that reads the host's
// frames and says nothing.
const quietPlay = "tapedeck play -- sh -c 'while read -r line; do :; done'"

// TestPlayKeepAsksBeforeOverwriting: Keep it of a name kept before
// answers 409 naming the files and leaves them as they were; with the
// overwrite flag (the page asked the person) it replaces them. (The
// audit's build replaced a kept golden without asking.)
func TestPlayKeepAsksBeforeOverwriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startPlay(t, dir, t.TempDir(), quietPlay)
	if status, res := p.try(t, `{"do":"keep","name":"greet"}`); status != 200 {
		t.Fatalf("keep: %d %v", status, res)
	}
	golden := filepath.Join(dir, "tapes", "greet.jsonl")
	first, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	status, res := p.try(t, `{"do":"keep","name":"greet"}`)
	if status != 409 || !strings.HasPrefix(fmt.Sprint(res["error"]), "tapes/greet.jsonl, tapes/greet.host.jsonl and tapes/greet.data exist already") {
		t.Errorf("keep of a name kept before: %d %v, want 409 and the files named", status, res)
	}
	if again, _ := os.ReadFile(golden); !bytes.Equal(again, first) {
		t.Error("keep without asking replaced the kept golden")
	}
	if status, res := p.try(t, `{"do":"keep","name":"greet","overwrite":true}`); status != 200 {
		t.Errorf("keep with the overwrite flag: %d %v", status, res)
	} else if again, _ := os.ReadFile(golden); bytes.Equal(again, first) {
		t.Error("keep with the overwrite flag did not replace the golden")
	}
	p.stop(t)
}

// TestPlayKeepRefusesATapesLinkOut: a plugin folder whose tapes/ is a
// link out of it: tapedeck play says so as it starts, and Keep it refuses
// in one line, writing nothing where the link leads. (The audit's build
// followed the link.)
func TestPlayKeepRefusesATapesLinkOut(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "tapes")); err != nil {
		t.Fatal(err)
	}
	p := startPlay(t, dir, t.TempDir(), quietPlay)
	status, res := p.try(t, `{"do":"keep","name":"greet"}`)
	msg := fmt.Sprint(res["error"])
	real, _ := filepath.EvalSymlinks(outside)
	if status != 400 || !strings.HasPrefix(msg, "keep: the tapes folder tapes leads out of the plugin folder, to "+real+": ") || strings.Contains(msg, "\n") {
		t.Errorf("keep into a tapes link out of the folder: %d %q", status, msg)
	}
	if names, _ := os.ReadDir(outside); len(names) > 0 {
		t.Errorf("keep wrote %d files where the link leads", len(names))
	}
	p.stop(t)
	if !strings.Contains(p.stderr.String(), "tapedeck: play: keep: the tapes folder tapes leads out of the plugin folder") {
		t.Errorf("tapedeck play did not say so as it started:\n%s", p.stderr)
	}
}
