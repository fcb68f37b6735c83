package wrap

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tapedeck/tapedeck/internal/jsonscan"
)

// Runtimes a manifest can name. An absent runtime means node.
const (
	RuntimeNode       = "node"
	RuntimePython     = "python"
	RuntimeExecutable = "executable"
	RuntimeWasm       = "wasm"
)

// Manifest is what wrap needs from agentty-plugin.json. Members are matched
// by their exact (decoded) name, as the host's JSON parser does; encoding/json
// would also accept "Main" for "main".
type Manifest struct {
	ID      string
	Name    string
	Version string
	Main    string
	// Runtime is the runtime as written; "" when the member is absent, which
	// the host reads as node (see EffectiveRuntime).
	Runtime    string
	HasRuntime bool

	raw     []byte
	members []member
	open    int // index of the top-level '{'
}

// EffectiveRuntime is the runtime the host uses: Runtime, or node when the
// manifest names none.
func (m *Manifest) EffectiveRuntime() string {
	if !m.HasRuntime {
		return RuntimeNode
	}
	return m.Runtime
}

// member is one top-level member of the manifest object, as byte offsets:
// the key runs over raw[keyStart:keyEnd] (quotes included), the value over
// raw[valStart:valEnd].
type member struct {
	key              string
	keyStart, keyEnd int
	valStart, valEnd int
}

// ParseManifest reads manifest bytes. It fails (wrapping ErrManifest) on
// anything that is not one JSON object, on a duplicate id, main or runtime
// (a byte-level edit could not tell which one the host reads), and on those
// members when they are not strings. It does not judge the values: Prepare
// does.
func ParseManifest(raw []byte) (*Manifest, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrManifest)
	}
	open := jsonscan.SkipSpace(raw, 0)
	if open >= len(raw) || raw[open] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrManifest)
	}
	members, err := scanMembers(raw, open, ErrManifest)
	if err != nil {
		return nil, err
	}
	m := &Manifest{raw: raw, members: members, open: open}
	seen := map[string]bool{}
	for _, mb := range members {
		var dst *string
		switch mb.key {
		case "id":
			dst = &m.ID
		case "main":
			dst = &m.Main
		case "runtime":
			dst = &m.Runtime
			m.HasRuntime = true
		case "name":
			json.Unmarshal(raw[mb.valStart:mb.valEnd], &m.Name) // informational only
			continue
		case "version":
			json.Unmarshal(raw[mb.valStart:mb.valEnd], &m.Version)
			continue
		default:
			continue
		}
		if seen[mb.key] {
			return nil, fmt.Errorf("%w: %q appears twice; keep one", ErrManifest, mb.key)
		}
		seen[mb.key] = true
		if raw[mb.valStart] != '"' {
			return nil, fmt.Errorf("%w: %q is %s, not a string", ErrManifest, mb.key, raw[mb.valStart:mb.valEnd])
		}
		if err := json.Unmarshal(raw[mb.valStart:mb.valEnd], dst); err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrManifest, mb.key, err)
		}
	}
	return m, nil
}

// Splice returns the manifest with the values of runtime and main replaced
// and every other byte as it was. When the manifest has no runtime member,
// one is inserted right after the opening brace, copying the file's own
// whitespace before its first member and around its first colon, so
// `{\n  "id": …` becomes `{\n  "runtime": "executable",\n  "id": …`. This
// insertion is the only change that is not a value replacement.
func (m *Manifest) Splice(runtime, main string) ([]byte, error) {
	var mainM, rtM *member
	for i := range m.members {
		switch m.members[i].key {
		case "main":
			mainM = &m.members[i]
		case "runtime":
			rtM = &m.members[i]
		}
	}
	if mainM == nil {
		return nil, fmt.Errorf("%w: the manifest has no \"main\"", ErrNoMain)
	}
	type edit struct {
		start, end int
		text       []byte
	}
	edits := []edit{{mainM.valStart, mainM.valEnd, jsonString(main)}}
	if rtM != nil {
		edits = append(edits, edit{rtM.valStart, rtM.valEnd, jsonString(runtime)})
	} else {
		first := m.members[0] // there is a main, so there is a first member
		var ins bytes.Buffer
		ins.Write(m.raw[m.open+1 : first.keyStart]) // the indentation before the first member
		ins.WriteString(`"runtime"`)
		ins.Write(m.raw[first.keyEnd:first.valStart]) // the colon with its spacing
		ins.Write(jsonString(runtime))
		ins.WriteByte(',')
		edits = append(edits, edit{m.open + 1, m.open + 1, ins.Bytes()})
	}
	if edits[len(edits)-1].start < edits[0].start {
		edits[0], edits[len(edits)-1] = edits[len(edits)-1], edits[0]
	}
	var out bytes.Buffer
	pos := 0
	for _, e := range edits {
		out.Write(m.raw[pos:e.start])
		out.Write(e.text)
		pos = e.end
	}
	out.Write(m.raw[pos:])
	return out.Bytes(), nil
}

// jsonString is s as a JSON string, without HTML escaping.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// scanMembers lists the top-level members of the object opening at
// raw[open]. raw is valid JSON (checked by the caller), which keeps the
// scanner small; it still never indexes past the end. Its errors wrap bad,
// which names the file (ErrManifest, ErrMCPConfig).
func scanMembers(raw []byte, open int, bad error) ([]member, error) {
	var ms []member
	i := open + 1
	for {
		i = jsonscan.SkipSpace(raw, i)
		if i >= len(raw) {
			return nil, fmt.Errorf("%w: unexpected end", bad)
		}
		if raw[i] == '}' {
			return ms, nil
		}
		if raw[i] == ',' {
			i = jsonscan.SkipSpace(raw, i+1)
		}
		ks := i
		ke, _ := jsonscan.SkipString(raw, ks)
		var key string
		if err := json.Unmarshal(raw[ks:ke], &key); err != nil {
			return nil, fmt.Errorf("%w: member name at byte %d: %w", bad, ks, err)
		}
		i = jsonscan.SkipSpace(raw, ke)
		if i >= len(raw) || raw[i] != ':' {
			return nil, fmt.Errorf("%w: no ':' after %q", bad, key)
		}
		vs := jsonscan.SkipSpace(raw, i+1)
		ve, ok := jsonscan.SkipValue(raw, vs)
		if !ok {
			return nil, fmt.Errorf("%w: unexpected end", bad)
		}
		ms = append(ms, member{key: key, keyStart: ks, keyEnd: ke, valStart: vs, valEnd: ve})
		i = ve
	}
}
