package filter

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConfigCarryAndEnv: tapedeck.json's carry rules and env names are
// read, and a bad one is refused in one line naming the file and the
// entry.
func TestConfigCarryAndEnv(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ConfigName)
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"carry": ["tools/call:result.task.taskId", "*:result.nextCursor"], "env": ["MEMORY_FILE_PATH"]}`)
	cfg, err := ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := CarryRules(cfg.Carry, path)
	if err != nil || len(rules) != 2 {
		t.Fatalf("carry rules %v: %v", rules, err)
	}
	match := func(m string, p []string) bool {
		for _, r := range rules {
			if r.MatchMethod(m) && r.Path.Match(p) {
				return true
			}
		}
		return false
	}
	if !match("tools/call", []string{"result", "task", "taskId"}) || !match("resources/list", []string{"result", "nextCursor"}) || match("tools/call", []string{"result", "task"}) {
		t.Error("the carry rules match the wrong places")
	}
	if env, err := ConfigEnv(dir); err != nil || !slices.Equal(env, []string{"MEMORY_FILE_PATH"}) {
		t.Errorf("ConfigEnv = %q, %v", env, err)
	}
	if env, err := ConfigEnv(t.TempDir()); err != nil || env != nil {
		t.Errorf("ConfigEnv of a folder without tapedeck.json = %q, %v", env, err)
	}
	for _, c := range []struct{ json, want string }{
		{`{"carry": ["no colon"]}`, `carry rule "no colon"`},
		{`{"carry": [":result.x"]}`, `carry rule ":result.x"`},
		{`{"env": ["A=B"]}`, `env "A=B"`},
		{`{"carry": "x"}`, `"carry"`},
	} {
		write(c.json)
		_, err := ReadConfig(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line naming %s and %s", c.json, err, path, c.want)
		}
	}
}
