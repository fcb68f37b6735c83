package profile

import (
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/message"
)

// Agentty is the host of Agentty plugins (protocol/plugin-protocol-v1.md
// and protocol/host-behaviour.md): it tells the plugin who it is in
// initialize's params, runs it with AGENTTY_* variables, ends it with a
// shutdown notification and 1.5 s before SIGTERM and again before SIGKILL,
// and draws the trees of ui/setPanel.
type Agentty struct{ base }

// Name implements Profile.
func (Agentty) Name() string { return NameAgentty }

// SessionEnv implements Profile: the variables the host sets for a
// plugin (AGENTTY_PLUGIN_ID, AGENTTY_PLUGIN_DATA, AGENTTY_VERSION, …).
func (Agentty) SessionEnv(name string) bool { return strings.HasPrefix(name, "AGENTTY_") }

// Closing implements Profile.
func (Agentty) Closing(method string) bool { return method == "shutdown" }

// PanelMethod implements Profile.
func (Agentty) PanelMethod() string { return "ui/setPanel" }

// Grace implements Profile.
func (Agentty) Grace() time.Duration { return 1500 * time.Millisecond }

// DataFolder implements Profile: the host names the plugin's data folder
// in initialize's params.plugin.dataDir and in AGENTTY_PLUGIN_DATA; it is
// the plugin's alone (host-behaviour.md).
func (Agentty) DataFolder(req *message.Message) (Folder, bool) {
	if req == nil || req.Method != "initialize" {
		return Folder{}, false
	}
	var params struct {
		Plugin struct {
			DataDir string `json:"dataDir"`
		} `json:"plugin"`
	}
	decode(req.Params, &params)
	if params.Plugin.DataDir == "" {
		return Folder{}, false
	}
	return Folder{Path: params.Plugin.DataDir, Env: "AGENTTY_PLUGIN_DATA", Own: true}, true
}

// Identify implements Profile: the host names the plugin, its API version
// and itself in initialize's params.
func (Agentty) Identify(meta *frame.Session, req, _ *message.Message) {
	if req == nil || req.Method != "initialize" {
		return
	}
	var params struct {
		APIVersion int `json:"apiVersion"`
		Agentty    struct {
			Version string `json:"version"`
		} `json:"agentty"`
		Plugin frame.Plugin `json:"plugin"`
	}
	decode(req.Params, &params)
	if meta.Plugin.ID == "" {
		meta.Plugin = params.Plugin
	}
	if meta.APIVersion == 0 {
		meta.APIVersion = params.APIVersion
	}
	if meta.HostVersion == "" {
		meta.HostVersion = params.Agentty.Version
	}
}
