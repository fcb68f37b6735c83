package redact

import (
	"maps"
	"slices"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
)

// Session redacts a session's metadata in place, as a tape's header carries
// it: the regular expressions apply to its name, tags, command, working
// directory, environment and error, and the default rule (when on) to the
// values of environment variables and tags whose name looks like a
// credential (as for headers: token, secret, key, authorization, cookie …)
// and of command arguments spelled --NAME=VALUE with such a NAME. What it
// replaces counts toward Counts, like what Line replaces. METHOD:PATH rules
// name messages, not the header, and do not apply. The command, tags and
// environment are replaced by copies, never changed where they are shared.
func (r *Redactor) Session(m *frame.Session) {
	if r == nil || m == nil {
		return
	}
	m.Command, m.Env, m.Tags = slices.Clone(m.Command), maps.Clone(m.Env), maps.Clone(m.Tags)
	str := func(s string) string {
		if out, changed := r.replace([]byte(s)); changed {
			return string(out)
		}
		return s
	}
	dflt := r.defaultRule()
	secret := func(name, value string) string {
		if dflt == nil || value == "" || !credential(name) || isPlaceholder([]byte(value)) {
			return value
		}
		dflt.n++
		return Placeholder(r.key, []byte(value))
	}
	m.Name = str(m.Name)
	m.Cwd = str(m.Cwd)
	m.Error = str(m.Error)
	for i, a := range m.Command {
		if name, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") {
			if v := secret(strings.TrimLeft(name, "-"), value); v != value {
				a = name + "=" + v
			}
		}
		m.Command[i] = str(a)
	}
	for _, kv := range []map[string]string{m.Env, m.Tags} {
		for k, v := range kv {
			kv[k] = str(secret(k, v))
		}
	}
}

// defaultRule is the default credential rule, or nil when it is off.
func (r *Redactor) defaultRule() *rule {
	for i := range r.rules {
		if r.rules[i].dflt {
			return &r.rules[i]
		}
	}
	return nil
}
