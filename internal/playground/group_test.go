package playground

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNothingLeftBehind: a plugin that starts a child in a session of its
// own (setsid: out of its process group) at every start, restarted three
// times and then ended with the playground: once each restart has
// returned, the child of the run before is gone, and once the playground
// has ended, the last one too. (Today's build left each of them running:
// 11 after 10 restarts.)
func TestNothingLeftBehind(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid(1)")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: what leaves the group is found by Linux's subreaper")
	}
	for _, mode := range []string{"exit", "hang"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "plugins", "setsid-sh", "main.sh"))
			if err != nil {
				t.Fatal(err)
			}
			pidfile := filepath.Join(t.TempDir(), "child.pid")
			p := play(t, t.TempDir(), func(o *Options) {
				o.Command = []string{"sh", script, mode}
				o.Env = append(os.Environ(), "SETSID_PIDFILE="+pidfile)
			})
			var pids []int
			child := func() int {
				t.Helper()
				var pid int
				if !waitUntil(20*time.Second, func() bool {
					b, _ := os.ReadFile(pidfile)
					pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
					return pid > 0 && !slices.Contains(pids, pid)
				}) {
					t.Fatalf("run %d wrote no new pid into %s\n%s", len(pids)+1, pidfile, p.log)
				}
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
				pids = append(pids, pid)
				return pid
			}
			for i := range 3 {
				pid := child()
				if status, res := p.post(t, `{"do":"restart"}`); status != 200 {
					t.Fatalf("restart: %d %v", status, res)
				}
				if alive(pid) {
					t.Errorf("restart %d: the plugin's setsid child %d of the run before lives on", i+1, pid)
				}
			}
			last := child()
			p.end()
			if alive(last) {
				t.Errorf("the plugin's setsid child %d outlived the playground", last)
			}
		})
	}
}
