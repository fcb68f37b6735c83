package redact

import (
	"reflect"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

func TestSessionHeader(t *testing.T) {
	argv := []string{"node", "main.js", "--api-key=sk-live-1", "--name=sk-live-2", "--verbose"}
	env := map[string]string{"AGENTTY_TOKEN": "t0k", "AGENTTY_PLUGIN_ID": "p", "HOME_DIR": "/home/sk-live-3"}
	m := &frame.Session{
		Name:    "run sk-live-4",
		Command: argv,
		Cwd:     "/work/sk-live-5",
		Env:     env,
		Tags:    map[string]string{"secret": "s", "team": "sk-live-6"},
		Error:   "failed with sk-live-7",
	}
	r := newRedactor(t, true, []string{`sk-live-[0-9]+`})
	r.Session(m)
	want := &frame.Session{
		Name:    "run " + ph("sk-live-4"),
		Command: []string{"node", "main.js", "--api-key=" + ph("sk-live-1"), "--name=" + ph("sk-live-2"), "--verbose"},
		Cwd:     "/work/" + ph("sk-live-5"),
		Env:     map[string]string{"AGENTTY_TOKEN": ph("t0k"), "AGENTTY_PLUGIN_ID": "p", "HOME_DIR": "/home/" + ph("sk-live-3")},
		Tags:    map[string]string{"secret": ph("s"), "team": ph("sk-live-6")},
		Error:   "failed with " + ph("sk-live-7"),
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("Session:\n got %+v\nwant %+v", m, want)
	}
	if argv[2] != "--api-key=sk-live-1" || env["AGENTTY_TOKEN"] != "t0k" {
		t.Error("Session changed the caller's command or environment in place")
	}
	counts := r.Counts()
	if counts[0].N != 6 || !counts[1].Default || counts[1].N != 3 {
		t.Errorf("Counts = %+v, want 6 regexp matches and 3 default", counts)
	}
	again := *want
	r.Session(&again) // redacting twice changes nothing
	if !reflect.DeepEqual(&again, want) {
		t.Errorf("a second Session changed %+v", again)
	}
	var nilRedactor *Redactor
	nilRedactor.Session(m) // no redaction asked: nothing to do
}
