package check

import (
	"sort"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/message"
)

// Method is one method the real host knows, as check knows it.
type Method struct {
	Name string
	// Dir is frame.Out for a plugin→host method, frame.In for host→plugin.
	Dir frame.Dir
	// Kind is message.Request or message.Notification for a host→plugin
	// method; 0 for a plugin→host one, which the plugin may send as either.
	Kind message.Kind
	// Since is the API version that brought it.
	Since int
	// Permission is the manifest permission it needs, "" for none.
	Permission string
	// Section is the manifest section it acts on ("browser": the sites of
	// browser.sites), "" for none.
	Section string
}

// hostMethods is what the host sends a plugin (plugin-protocol-v1.md,
// host-behaviour.md), and browser/hidden, which the host sends when the
// user takes a plugin's page out of the browser panel. check follows
// initialize, shutdown and tools/call; the others are listed so that
// Methods tells every method the host knows.
var hostMethods = []Method{
	{Name: "initialize", Dir: frame.In, Kind: message.Request, Since: 1},
	{Name: "command/execute", Dir: frame.In, Kind: message.Notification, Since: 1},
	{Name: "panel/open", Dir: frame.In, Kind: message.Notification, Since: 1},
	{Name: "panel/close", Dir: frame.In, Kind: message.Notification, Since: 1},
	{Name: "ui/event", Dir: frame.In, Kind: message.Notification, Since: 1},
	{Name: "context/changed", Dir: frame.In, Kind: message.Notification, Since: 1},
	{Name: "url/open", Dir: frame.In, Kind: message.Notification, Since: 1},
	{Name: "shutdown", Dir: frame.In, Kind: message.Notification, Since: 1},
	{Name: "pane/status", Dir: frame.In, Kind: message.Notification, Since: 2},
	// host-behaviour.md: "in newer hosts", among the methods added after
	// API 1; tapedeck assumes 2, the lowest it can be.
	{Name: "tools/call", Dir: frame.In, Kind: message.Request, Since: 2},
	{Name: "browser/hidden", Dir: frame.In, Kind: message.Notification, Since: 3, Permission: "browser.control", Section: "browser"},
}

// Methods returns every method check knows, in both directions: the
// plugin→host ones (one schema file each) by name, then the host→plugin
// ones. The slice is new on every call.
func Methods() []Method {
	s, err := loadSchemas()
	if err != nil {
		panic("check: " + err.Error())
	}
	out := make([]Method, 0, len(s.methods)+len(hostMethods))
	for _, m := range s.methods {
		out = append(out, Method{Name: m.name, Dir: frame.Out, Since: m.since, Permission: m.permission, Section: m.section})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return append(out, hostMethods...)
}
