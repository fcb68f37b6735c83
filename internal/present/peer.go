package present

// Naming a session's peer: the plugin column of ls, the peer in show's
// header line.

import (
	"encoding/json"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/screen"
)

// Peer is what a session says of who took part in it: its profile, the
// peer (an Agentty plugin, an MCP or a language server), the protocol
// revision and the host (the client). frame.Session and the store's
// summaries both have them.
type Peer struct {
	Profile     string
	Plugin      frame.Plugin
	Protocol    string
	HostName    string
	HostVersion string
}

// SessionPeer is the Peer of a session's metadata.
func SessionPeer(m *frame.Session) Peer {
	return Peer{Profile: m.Profile, Plugin: m.Plugin, Protocol: m.Protocol, HostName: m.HostName, HostVersion: m.HostVersion}
}

// server reports whether the session's peer is a server (MCP, LSP), named
// with its protocol and client; an Agentty plugin (and a session of no
// profile, recorded before profiles) or a JSON-RPC peer is named as
// plugins always were.
func (p Peer) server() bool {
	prof, err := profile.Get(p.Profile)
	return err == nil && profile.IsServer(prof)
}

// maxVersion bounds a version as a label shows it, in cells.
const maxVersion = 24

// maxPeerName bounds a server's or a client's name as a label shows it.
const maxPeerName = 40

// PeerLabel names a session's peer for ls and show, escaped, "" when the
// session says nothing of it. An Agentty plugin (or a JSON-RPC peer) is
// id@version, as it always was. A server is name@version, then what it
// spoke and to whom: "everything@2026.8.31 (mcp 2025-06-18, client inspector@0.16)",
// "gopls@v0.23.0 (lsp, client vscode@1.96)"; a peer that gave no name
// is only the part in brackets. Versions are cut short (ShortVersion).
func PeerLabel(p Peer) string {
	if !p.server() {
		return escape.Text(PluginLabel(p.Plugin))
	}
	var b strings.Builder
	if p.Plugin.ID != "" {
		b.WriteString(nameAt(p.Plugin.ID, p.Plugin.Version))
		b.WriteByte(' ')
	}
	b.WriteByte('(')
	b.WriteString(escape.Text(p.Profile))
	if p.Protocol != "" {
		b.WriteString(" " + escape.Text(screen.Truncate(p.Protocol, maxVersion)))
	}
	if p.HostName != "" {
		b.WriteString(", client " + nameAt(p.HostName, p.HostVersion))
	}
	b.WriteByte(')')
	return b.String()
}

// nameAt is name@version, each escaped and cut short.
func nameAt(name, version string) string {
	s := escape.Text(screen.Truncate(firstLine(name), maxPeerName))
	if v := ShortVersion(version); v != "" {
		s += "@" + v
	}
	return s
}

// ShortVersion is a peer's version as a label shows it: escaped, on one
// line, at most maxVersion cells. A version that is a JSON object (gopls
// sends Go's build information, 2.6 KB of it) shows the version it holds:
// its Version, else its Main.Version, else its GoVersion.
func ShortVersion(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "{") {
		var info struct {
			Version   string `json:"Version"`
			GoVersion string `json:"GoVersion"`
			Main      struct {
				Version string `json:"Version"`
			} `json:"Main"`
		}
		if json.Unmarshal([]byte(v), &info) == nil {
			switch {
			case info.Version != "":
				v = info.Version
			case info.Main.Version != "":
				v = info.Main.Version
			default:
				v = info.GoVersion
			}
		}
	}
	return escape.Text(screen.Truncate(firstLine(v), maxVersion))
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
