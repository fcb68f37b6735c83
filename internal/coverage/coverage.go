// Package coverage owns what a corpus of golden tapes exercises of a
// plugin: the host methods sent and the plugin methods seen, the UI element
// types drawn, which interactive elements drawn ever received a ui/event,
// which commands the manifest contributes that no tape runs, and which
// error paths were taken. Of a peer whose profile says what it offers (an
// MCP server's tools, resources and prompts: profile.MCP.Offers), it
// counts what the tapes saw advertised against what they used. It reads
// frames (as a stream) and manifest bytes, never a database or a process,
// and keeps a bounded table of each (maxNames).
package coverage

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/message"
)

// What coverage keeps, so that a corpus of any size, or a crafted tape
// naming a method, an element or a tool of its own in every line, costs
// bounded memory and time: at most maxNames names in each table, each cut
// to maxNameLen bytes (recent.Cut); a name past maxNames is counted as
// Others. (A 641 MB tape of 300,000 methods of 2 kB each had held 2.9 GB.)
const (
	maxNames   = 4096
	maxNameLen = 512
	// Others stands for the names a table had no room for.
	Others = "(others)"
)

// name is the name table m keeps s under: s cut to maxNameLen, or Others
// when m holds maxNames names already and not s.
func name[V any](m map[string]V, s string) string {
	s = recent.Cut(s, maxNameLen)
	if _, ok := m[s]; ok || len(m) < maxNames {
		return s
	}
	return Others
}

// offer is name for a table of offers.
func offer[V any](m map[offerKey]V, kind, s string) offerKey {
	k := offerKey{kind, recent.Cut(s, maxNameLen)}
	if _, ok := m[k]; ok || len(m) < maxNames {
		return k
	}
	return offerKey{kind, Others}
}

// interactive are the element types that send ui/event (API 1 and API 4).
var interactive = map[string]bool{
	"button": true, "input": true, "list": true, "choice": true, "toggle": true,
	"select": true, "checkbox": true, "tabs": true,
}

// Plugin is what the tapes of one plugin exercise.
type Plugin struct {
	ID       string   `json:"id"`
	Tapes    []string `json:"tapes"`
	Manifest string   `json:"manifest,omitempty"` // its path; "" when none was found
	// HostMethods counts the host's requests and notifications by method;
	// PluginMethods the plugin's.
	HostMethods   map[string]int `json:"hostMethods"`
	PluginMethods map[string]int `json:"pluginMethods"`
	// Elements counts the UI elements drawn, by type, over every ui/setPanel.
	Elements map[string]int `json:"elements"`
	// Interactive lists each interactive element id drawn, with how many
	// ui/event it received.
	Interactive []Element `json:"interactive"`
	// Commands lists the commands the manifest contributes, with how many
	// times a tape ran each (command/execute).
	Commands []Command `json:"commands"`
	// HostErrors counts the host's error answers to the plugin's requests,
	// by method; PluginErrors the plugin's error replies to the host's.
	HostErrors   map[string]int `json:"hostErrors"`
	PluginErrors map[string]int `json:"pluginErrors"`
	// Profile names the host of a server ("mcp", "lsp"), "" for an Agentty
	// plugin (or a JSON-RPC peer).
	Profile string `json:"profile,omitempty"`
	// Offered lists what the peer advertised in its answers to the host's
	// list requests (an MCP server's tools, resources, resource templates
	// and prompts) and what the tapes used that it never advertised, with
	// how many times the tapes used each; empty for a peer whose profile
	// says it offers nothing.
	Offered []Offered `json:"offered,omitempty"`

	elements   map[string]*Element
	commands   map[string]*Command
	offers     []profile.Offer
	advertised map[offerKey]bool // (offer's kind, name) → seen in a list answer
	used       map[offerKey]int  // (use method, name) → how many uses
}

// Offered is one thing a peer offers (or one a tape used that it never
// advertised) and how many times the tapes used it.
type Offered struct {
	Kind       string `json:"kind"` // the offer's kind: "tool", "resource", …
	Name       string `json:"name"` // its name, uri or uri template
	Uses       int    `json:"uses"`
	Advertised bool   `json:"advertised"` // false: used, never listed
}

type offerKey struct{ kind, name string }

// offerer is a profile whose peer advertises what it offers.
type offerer interface{ Offers() []profile.Offer }

// Element is an interactive element drawn.
type Element struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Events int    `json:"events"`
}

// Command is a command the manifest contributes, or one a tape ran that
// it does not.
type Command struct {
	ID          string `json:"id"`
	Runs        int    `json:"runs"`
	Contributed bool   `json:"contributed"`
}

// New returns an empty Plugin.
func New(id string) *Plugin {
	return &Plugin{
		ID: id, HostMethods: map[string]int{}, PluginMethods: map[string]int{}, Elements: map[string]int{},
		HostErrors: map[string]int{}, PluginErrors: map[string]int{},
		elements: map[string]*Element{}, commands: map[string]*Command{},
	}
}

// UseProfile says which host the plugin's tapes were recorded with: for a
// server's (an MCP or a language server's) it sets Profile, and when the
// profile says what its server offers, AddTape counts it. Call it before
// AddTape.
func (p *Plugin) UseProfile(prof profile.Profile) {
	if !profile.IsServer(prof) {
		return
	}
	p.Profile = prof.Name()
	if o, ok := prof.(offerer); ok && p.offers == nil {
		p.offers = o.Offers()
		p.advertised, p.used = map[offerKey]bool{}, map[offerKey]int{}
	}
}

// manifest is what coverage reads of agentty-plugin.json.
type manifest struct {
	ID          string `json:"id"`
	Contributes struct {
		Commands []struct {
			ID string `json:"id"`
		} `json:"commands"`
	} `json:"contributes"`
}

// ManifestID reads the plugin id of a manifest.
func ManifestID(b []byte) (string, error) {
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("parse manifest: %w", err)
	}
	return m.ID, nil
}

// AddManifest takes the commands a manifest contributes, found at path.
func (p *Plugin) AddManifest(path string, b []byte) error {
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("parse manifest %s: %w", path, err)
	}
	p.Manifest = path
	for _, c := range m.Contributes.Commands {
		if c.ID == "" {
			continue
		}
		if p.commands[c.ID] == nil {
			p.commands[c.ID] = &Command{ID: c.ID}
		}
		p.commands[c.ID].Contributed = true
	}
	return nil
}

// AddTape takes the frames of one tape (or session), named name, as each
// yields them (each frame is fn's only while it runs), and returns each's
// error.
func (p *Plugin) AddTape(name string, each func(fn func(*frame.Frame) error) error) error {
	p.Tapes = append(p.Tapes, name)
	size := func(method string) int { return len(method) }
	hostCalls := recent.New(1<<16, 4<<20, size)   // host request id → method
	pluginCalls := recent.New(1<<16, 4<<20, size) // plugin request id → method
	method := func(calls *recent.Map[string], m *message.Message) string {
		s, _ := calls.Get(recent.Key(m.IDKey()))
		return s
	}
	return each(func(f *frame.Frame) error {
		if f.IsEvent() || f.Dir == frame.Err {
			return nil
		}
		m := message.Parse(f.Raw)
		switch {
		case f.Dir == frame.In && m.IsCall():
			p.count(p.HostMethods, m.Method)
			if m.Kind == message.Request {
				hostCalls.Put(recent.Key(m.IDKey()), recent.Cut(m.Method, maxNameLen))
			}
			p.hostCall(&m)
			p.use(&m)
		case f.Dir == frame.In && m.Kind == message.ErrorReply:
			p.count(p.HostErrors, orUnknown(method(pluginCalls, &m)))
		case f.Dir == frame.Out && m.IsCall():
			p.count(p.PluginMethods, m.Method)
			if m.Kind == message.Request {
				pluginCalls.Put(recent.Key(m.IDKey()), recent.Cut(m.Method, maxNameLen))
			}
			if m.Method == "ui/setPanel" {
				p.panel(m.Params)
			}
		case f.Dir == frame.Out && m.Kind == message.ErrorReply:
			p.count(p.PluginErrors, orUnknown(method(hostCalls, &m)))
		case f.Dir == frame.Out && m.Kind == message.Response && len(p.offers) > 0:
			p.advertise(method(hostCalls, &m), m.Result)
		}
		return nil
	})
}

// count adds one to what table m keeps s under.
func (p *Plugin) count(m map[string]int, s string) { m[name(m, s)]++ }

func orUnknown(method string) string {
	if method == "" {
		return "(unknown request)"
	}
	return method
}

// hostCall counts what a host frame exercises: an event on an element, a
// command run.
func (p *Plugin) hostCall(m *message.Message) {
	var params struct {
		Element string `json:"element"`
		Command string `json:"command"`
	}
	json.Unmarshal(m.Params, &params)
	switch m.Method {
	case "ui/event":
		if params.Element == "" {
			return
		}
		id := name(p.elements, params.Element)
		e := p.elements[id]
		if e == nil { // an event on an element no tape drew
			e = &Element{ID: id}
			p.elements[id] = e
		}
		e.Events++
	case "command/execute":
		if params.Command == "" {
			return
		}
		id := name(p.commands, params.Command)
		c := p.commands[id]
		if c == nil {
			c = &Command{ID: id}
			p.commands[id] = c
		}
		c.Runs++
	}
}

// use counts a host request that uses something the peer offers.
func (p *Plugin) use(m *message.Message) {
	for _, o := range p.offers {
		if m.Method != o.Use {
			continue
		}
		var params map[string]json.RawMessage
		var name string
		if json.Unmarshal(m.Params, &params) == nil && json.Unmarshal(params[o.UseKey], &name) == nil && name != "" {
			p.used[offer(p.used, o.Use, name)]++
		}
		return // offers that share a use method (resources and templates) count it once
	}
}

// advertise notes what the peer's answer to a list request (method) names.
func (p *Plugin) advertise(method string, result json.RawMessage) {
	for _, o := range p.offers {
		if method == "" || method != o.List {
			continue
		}
		var res map[string]json.RawMessage
		var items []map[string]json.RawMessage
		if json.Unmarshal(result, &res) != nil || json.Unmarshal(res[o.Items], &items) != nil {
			return
		}
		for _, it := range items {
			var name string
			if json.Unmarshal(it[o.Key], &name) == nil && name != "" {
				p.advertised[offer(p.advertised, o.Kind, name)] = true
			}
		}
	}
}

// finishOffered lists what was advertised, in the order of the profile's
// offers then by name, with its uses (a template's: those of every name it
// matches), then what was used but matches nothing advertised.
func (p *Plugin) finishOffered() {
	p.Offered = p.Offered[:0]
	claimed := map[offerKey]bool{} // uses that something advertised accounts for
	for _, o := range p.offers {
		var names []string
		for k := range p.advertised {
			if k.kind == o.Kind {
				names = append(names, k.name)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			k := offerKey{o.Use, n}
			uses := p.used[k]
			if uses > 0 {
				claimed[k] = true
			}
			if o.Template {
				uses = 0
				for k, c := range p.used {
					if k.kind == o.Use && profile.MatchTemplate(n, k.name) {
						uses += c
						claimed[k] = true
					}
				}
			}
			p.Offered = append(p.Offered, Offered{Kind: o.Kind, Name: n, Uses: uses, Advertised: true})
		}
	}
	var extra []Offered
	for k, c := range p.used {
		if claimed[k] {
			continue
		}
		for _, o := range p.offers {
			if o.Use == k.kind {
				extra = append(extra, Offered{Kind: o.Kind, Name: k.name, Uses: c})
				break
			}
		}
	}
	sort.Slice(extra, func(i, j int) bool {
		if extra[i].Kind != extra[j].Kind {
			return extra[i].Kind < extra[j].Kind
		}
		return extra[i].Name < extra[j].Name
	})
	p.Offered = append(p.Offered, extra...)
}

// panel counts the elements of a ui/setPanel tree.
func (p *Plugin) panel(params json.RawMessage) {
	var v struct {
		Tree any `json:"tree"`
	}
	if json.Unmarshal(params, &v) != nil {
		return
	}
	// Iteratively, so that a hostile tree's depth costs no stack.
	stack := []any{v.Tree}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := n.(type) {
		case []any:
			stack = append(stack, x...)
		case map[string]any:
			if t, ok := x["type"].(string); ok {
				p.count(p.Elements, t)
				if id, ok := x["id"].(string); ok && interactive[t] {
					id = name(p.elements, id)
					e := p.elements[id]
					if e == nil {
						e = &Element{ID: id}
						p.elements[id] = e
					}
					e.Type = recent.Cut(t, maxNameLen)
				}
			}
			for _, c := range x {
				switch c.(type) {
				case []any, map[string]any:
					stack = append(stack, c)
				}
			}
		}
	}
}

// Finish sorts what was gathered; call it once every tape is added.
func (p *Plugin) Finish() {
	p.Interactive = p.Interactive[:0]
	for _, e := range p.elements {
		p.Interactive = append(p.Interactive, *e)
	}
	sort.Slice(p.Interactive, func(i, j int) bool { return p.Interactive[i].ID < p.Interactive[j].ID })
	p.Commands = p.Commands[:0]
	for _, c := range p.commands {
		p.Commands = append(p.Commands, *c)
	}
	sort.Slice(p.Commands, func(i, j int) bool { return p.Commands[i].ID < p.Commands[j].ID })
	sort.Strings(p.Tapes)
	if p.offers != nil {
		p.finishOffered()
	}
}

// Covered is how much of what can be exercised was: the contributed
// commands run and the interactive element ids drawn that received an
// event, of all of them (an event on an element no tape drew counts as
// neither), and the things the peer advertised that a tape used (one it
// never advertised counts as neither). total 0 means there was nothing to
// exercise.
func (p *Plugin) Covered() (done, total int) {
	for _, c := range p.Commands {
		if !c.Contributed {
			continue
		}
		total++
		if c.Runs > 0 {
			done++
		}
	}
	for _, e := range p.Interactive {
		if e.Type == "" {
			continue
		}
		total++
		if e.Events > 0 {
			done++
		}
	}
	for _, o := range p.Offered {
		if !o.Advertised {
			continue
		}
		total++
		if o.Uses > 0 {
			done++
		}
	}
	return done, total
}

// Percent is Covered as a percentage; 100 when there is nothing to cover.
func (p *Plugin) Percent() float64 {
	done, total := p.Covered()
	if total == 0 {
		return 100
	}
	return 100 * float64(done) / float64(total)
}
