package clock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

func TestEnvKeepsWhatTheUserHas(t *testing.T) {
	p, err := Install()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, name := range []string{"clock.cjs", "sitecustomize.py"} {
		fi, err := os.Stat(filepath.Join(p.Dir(), name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", name, fi, err)
		}
	}
	if fi, _ := os.Stat(p.Dir()); fi.Mode().Perm() != 0o700 {
		t.Errorf("preload folder mode %v, want 0700", fi.Mode().Perm())
	}
	c := frame.Clock{Origin: time.UnixMilli(1700000000123), Seed: 42}
	cases := []struct {
		in         []string
		node, py   string
		wantOrigin string
	}{
		{[]string{"HOME=/h"}, "--require " + filepath.Join(p.Dir(), "clock.cjs"), p.Dir(), "1700000000123"},
		{[]string{"NODE_OPTIONS=--max-old-space-size=64", "PYTHONPATH=/mine", EnvOrigin + "=1"},
			"--max-old-space-size=64 --require " + filepath.Join(p.Dir(), "clock.cjs"), p.Dir() + ":/mine", "1700000000123"},
	}
	for _, c2 := range cases {
		env := p.Env(c2.in, c)
		got := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			if _, dup := got[k]; dup {
				t.Errorf("Env(%q) sets %s twice", c2.in, k)
			}
			got[k] = v
		}
		if got["NODE_OPTIONS"] != c2.node || got["PYTHONPATH"] != c2.py || got[EnvOrigin] != c2.wantOrigin || got[EnvSeed] != "42" {
			t.Errorf("Env(%q) = %q", c2.in, env)
		}
	}
	if p.Close() != nil {
		t.Fatal("close")
	}
	if _, err := os.Stat(p.Dir()); !os.IsNotExist(err) {
		t.Errorf("Close left %s", p.Dir())
	}
}

func TestNodeQuote(t *testing.T) {
	for in, want := range map[string]string{`/tmp/a/clock.cjs`: `/tmp/a/clock.cjs`, `/tmp/my dir/c.cjs`: `"/tmp/my dir/c.cjs"`, `/t/a"b\c`: `"/t/a\"b\\c"`} {
		if got := nodeQuote(in); got != want {
			t.Errorf("nodeQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
