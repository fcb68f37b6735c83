package cli

// What play can drive: Agentty plugins. A folder without a manifest whose
// command runs an MCP or a language server is refused in one line that
// says what to do instead.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/profile"
)

// serverLooks is a profile that can tell its servers' command lines.
type serverLooks interface {
	LooksLikeServer(argv []string) bool
}

// playRefusal is why play cannot drive what it was given, in one line
// (without the "play: " prefix), or "" when it can: the folder dir holds
// an agentty-plugin.json (an Agentty plugin, whatever its command), or
// the command runs nothing play knows to be another host's peer.
func playRefusal(dir string, argv []string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("plugin folder %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(abs, check.ManifestFile)); !errors.Is(err, fs.ErrNotExist) {
		return "", nil // a manifest (or one play will say it cannot read)
	}
	if len(argv) == 0 {
		return fmt.Sprintf("no %s in %s: play is Agentty's host and drives Agentty plugins: give a plugin's command after -- (tapedeck play -- COMMAND [ARGS…]); drive an MCP server with a host script: tapedeck record --host SCRIPT --profile mcp -- SERVER [ARGS…]",
			check.ManifestFile, abs), nil
	}
	for _, p := range []profile.Profile{profile.MCP{}, profile.LSP{}} {
		if !p.(serverLooks).LooksLikeServer(argv) {
			continue
		}
		what, why := "an MCP server", "it would refuse Agentty's initialize"
		if p.Name() == profile.NameLSP {
			what, why = "a language server", "it reads Content-Length framed messages, not Agentty's lines"
		}
		return fmt.Sprintf("the command looks like %s, and play is Agentty's host: it drives Agentty plugins (%s); drive the server with a host script: tapedeck record --host SCRIPT --profile %s -- %s (an Agentty plugin without a manifest: add its %s)",
			what, why, p.Name(), present.ShellJoin(argv), check.ManifestFile), nil
	}
	return "", nil
}
